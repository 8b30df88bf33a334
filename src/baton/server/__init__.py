"""The server layer: `Server`, its registries, the `Context` handlers ask through, and the replay engine."""

from .context import BatonDeprecationWarning, CapabilityMissing, Context
from .core import Exchange, Reply, RequestInfo, Server
from .results import ToolError, ToolResult
from .signature import Param

__all__ = [
    "BatonDeprecationWarning",
    "CapabilityMissing",
    "Context",
    "Exchange",
    "Param",
    "Reply",
    "RequestInfo",
    "Server",
    "ToolError",
    "ToolResult",
]
