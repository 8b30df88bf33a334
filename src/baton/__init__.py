"""Baton: stateless MCP (2026-07-28) for Python.

Straight-line elicitation over multi round-trip requests: a handler writes
`if not await ctx.confirm(...)`, and the flow runs on any number of stateless instances because
everything it needs travels, sealed, in `requestState`.

This module's names are the public API; everything else may change.
"""

from . import content
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
    BatonDeprecationWarning,
    CapabilityMissing,
    ConfigurationError,
    Context,
    Param,
    RequestInfo,
    ResourceNotFound,
    Server,
    ToolError,
    ToolResult,
)
from .state import Key, KeyRing, KeyRingError
from .version import __version__ as __version__

__all__ = [
    "PROTOCOL_VERSION",
    "Accepted",
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
    "StringField",
    "ToolError",
    "ToolResult",
    "compile_form",
    "content",
    "form",
]
