"""The server layer: `Server`, its registries, the `Context` handlers ask through, and the replay engine."""

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ..protocol.errors import CapabilityMissing, ResourceNotFound, UsageError
    from .apps import App, shows_apps
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

# Imported on first use (baton.lazy_exports): a module that needs one part of the server (`baton publish` its
# card rules) loads that part, not the whole layer.
_WHERE = {
    "CapabilityMissing": "..protocol.errors",
    "ResourceNotFound": "..protocol.errors",
    "UsageError": "..protocol.errors",
    "App": ".apps",
    "shows_apps": ".apps",
    "ServerCard": ".card",
    "BatonDeprecationWarning": ".context",
    "Context": ".context",
    "Server": ".core",
    "ToolOptions": ".core",
    "AuthUnavailable": ".exchange",
    "Exchange": ".exchange",
    "Grant": ".exchange",
    "Reply": ".exchange",
    "RequestInfo": ".exchange",
    "Unauthenticated": ".exchange",
    "ResourceAuth": ".guard",
    "HOST_QUIRKS": ".ladder",
    "HostQuirk": ".ladder",
    "ConnectPart": ".parts",
    "Credential": ".parts",
    "ToolError": ".results",
    "ToolResult": ".results",
    "Param": ".signature",
    "ConfigurationError": ".startup",
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = [
    "HOST_QUIRKS",
    "App",
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
    "shows_apps",
]
