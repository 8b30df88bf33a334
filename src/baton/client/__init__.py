"""The client layer: `Client` and its multi round-trip driver (transports live in `transport`)."""

from .core import Client, ClientError, InputRequest

__all__ = ["Client", "ClientError", "InputRequest"]
