"""The server layer: `Server`, its registries, the `Context` handlers ask through, and the replay engine."""

from ..protocol.errors import CapabilityMissing, UsageError
from .context import BatonDeprecationWarning, Context
from .core import Server, ToolOptions
from .exchange import Exchange, Reply, RequestInfo, Unauthenticated
from .parts import ConnectPart, Credential
from .results import ToolError, ToolResult
from .signature import Param

__all__ = [
    "BatonDeprecationWarning",
    "CapabilityMissing",
    "ConnectPart",
    "Context",
    "Credential",
    "Exchange",
    "Param",
    "Reply",
    "RequestInfo",
    "Server",
    "ToolError",
    "ToolOptions",
    "ToolResult",
    "Unauthenticated",
    "UsageError",
]
