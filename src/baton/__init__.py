"""Baton: stateless MCP (2026-07-28) for Python.

Straight-line elicitation over multi round-trip requests: a handler writes
`if not await ctx.confirm(...)`, and the flow runs on any number of stateless instances because
everything it needs travels, sealed, in `requestState`.

The public API is this module's names and the names in the `__all__` of these modules:

- `baton.client`: `Client`, typed questions, answers and results;
- `baton.client.oauth`: logging in to protected servers (`OAuth`, token stores, `LoopbackRedirect`);
- `baton.serve`: `serve_stdio` (`server.asgi()` is the HTTP app, `server.run()` serves either);
- `baton.principals`: who is calling (`bearer_jwt`, `os_user`, `anonymous`);
- `baton.auth`: a server as an OAuth protected resource (`OAuthResource`);
- `baton.connect`: the connect kit (`ConnectKit`, `OAuthProvider`, vaults, ticket stores);
- `baton.render`: a terminal renderer and HTML forms for questions;
- `baton.testing`: the in-memory client, a scripted user, a fake clock, and checks;
- `baton.forms.url_safety`: the URL check a client runs before it opens a link;
- `baton.content`: content blocks for tool results.

Every other module (`baton.server`, `baton.protocol`, `baton.state`, `baton.telemetry`, ...) is internal
and may change; what of it is public is imported here. tests/project/test_docs_imports.py holds the docs to this.
"""

from typing import TYPE_CHECKING

from . import content
from .lazy_exports import lazy_exports
from .version import __version__ as __version__

if TYPE_CHECKING:
    from .forms import (
        Accepted,
        BooleanField,
        Cancelled,
        Choice,
        Declined,
        EnumField,
        Field,
        FormError,
        MultiSelectField,
        NumberField,
        StringField,
        compile_form,
        form,
    )
    from .paths import PathRefused, Roots
    from .protocol.constants import PROTOCOL_VERSION
    from .protocol.errors import McpError
    from .server import (
        HOST_QUIRKS,
        App,
        BatonDeprecationWarning,
        CapabilityMissing,
        ConfigurationError,
        Context,
        HostQuirk,
        Param,
        RequestInfo,
        ResourceNotFound,
        Server,
        ServerCard,
        ToolError,
        ToolResult,
        shows_apps,
    )
    from .state import Key, KeyRing, KeyRingError

# Each public name and the module it lives in, imported on first use (baton.lazy_exports): importing any part of
# Baton runs this file first, and `baton keys`, `baton install`, the client commands and the pytest plugin
# (loaded in every pytest run of a project that installs Baton) need none of the server.
_WHERE = {
    "Accepted": ".forms",
    "BooleanField": ".forms",
    "Cancelled": ".forms",
    "Choice": ".forms",
    "Declined": ".forms",
    "EnumField": ".forms",
    "Field": ".forms",
    "FormError": ".forms",
    "MultiSelectField": ".forms",
    "NumberField": ".forms",
    "StringField": ".forms",
    "compile_form": ".forms",
    "form": ".forms",
    "PathRefused": ".paths",
    "Roots": ".paths",
    "PROTOCOL_VERSION": ".protocol.constants",
    "McpError": ".protocol.errors",
    "HOST_QUIRKS": ".server",
    "App": ".server",
    "BatonDeprecationWarning": ".server",
    "CapabilityMissing": ".server",
    "ConfigurationError": ".server",
    "Context": ".server",
    "HostQuirk": ".server",
    "Param": ".server",
    "RequestInfo": ".server",
    "ResourceNotFound": ".server",
    "Server": ".server",
    "ServerCard": ".server",
    "ToolError": ".server",
    "ToolResult": ".server",
    "shows_apps": ".server",
    "Key": ".state",
    "KeyRing": ".state",
    "KeyRingError": ".state",
}
__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = [
    "HOST_QUIRKS",
    "PROTOCOL_VERSION",
    "Accepted",
    "App",
    "BatonDeprecationWarning",
    "BooleanField",
    "Cancelled",
    "CapabilityMissing",
    "Choice",
    "ConfigurationError",
    "Context",
    "Declined",
    "EnumField",
    "Field",
    "FormError",
    "HostQuirk",
    "Key",
    "KeyRing",
    "KeyRingError",
    "McpError",
    "MultiSelectField",
    "NumberField",
    "Param",
    "PathRefused",
    "RequestInfo",
    "ResourceNotFound",
    "Roots",
    "Server",
    "ServerCard",
    "StringField",
    "ToolError",
    "ToolResult",
    "compile_form",
    "content",
    "form",
    "shows_apps",
]
