"""The server layer: `Server`, its registries, the `Context` handlers ask through, and the replay engine."""

from ..protocol.errors import CapabilityMissing, ResourceNotFound, UsageError
from .card import ServerCard
from .context import BatonDeprecationWarning, Context
from .core import Server, ToolOptions
from .exchange import AuthUnavailable, Exchange, Grant, Reply, RequestInfo, Unauthenticated
from .guard import ResourceAuth
from .ladder import HOST_QUIRKS, HostQuirk
from .parts import ConnectPart, Credential
from .results import ToolError, ToolResult
from .signature import Param
from .startup import ConfigurationError

__all__ = [
    "HOST_QUIRKS",
    "AuthUnavailable",
    "BatonDeprecationWarning",
    "CapabilityMissing",
    "ConfigurationError",
    "ConnectPart",
    "Context",
    "Credential",
    "Exchange",
    "Grant",
    "HostQuirk",
    "Param",
    "Reply",
    "RequestInfo",
    "ResourceAuth",
    "ResourceNotFound",
    "Server",
    "ServerCard",
    "ToolError",
    "ToolOptions",
    "ToolResult",
    "Unauthenticated",
    "UsageError",
]
