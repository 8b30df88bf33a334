"""JSON-RPC error codes of MCP 2026-07-28, the exceptions that carry them, their HTTP statuses, and `UsageError`."""

from __future__ import annotations

import json
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
HEADER_MISMATCH = -32020
MISSING_CAPABILITY = -32021
UNSUPPORTED_VERSION = -32022
# Only in the 2025-11-25 era (protocol.md P28):
RESOURCE_NOT_FOUND = -32002
URL_ELICITATION_REQUIRED = -32042

INVALID_STATE_MESSAGE = "Invalid or expired requestState"
"""The one message of every `requestState` refusal, -32602 (protocol.md P12): the reason is in the server's
log only, so a client can read it as "expired or invalid" and nothing more (its restart, P122)."""

# The spec fixes 400 for -32602 (missing _meta), -32020, -32021, -32022 and 404 for -32601;
# the rest is unspecified (protocol.md P2): like the Python SDK, other client errors are 400, -32603 is 200.
_HTTP_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    INVALID_PARAMS: 400,
    HEADER_MISMATCH: 400,
    MISSING_CAPABILITY: 400,
    UNSUPPORTED_VERSION: 400,
    METHOD_NOT_FOUND: 404,
}


def http_status(code: int) -> int:
    """The HTTP status that carries a JSON-RPC error with this code."""
    return _HTTP_STATUS.get(code, 200)


class McpError(Exception):
    """A JSON-RPC error to send back to the peer.

    Raise it from a handler to answer with exactly this error instead of a result.
    """

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_dict(self) -> dict[str, Any]:
        """The `error` member of a JSON-RPC response."""
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            error["data"] = self.data
        return error

    def __repr__(self) -> str:
        return f"McpError({self.code}, {self.message!r})"


def invalid_params(message: str, data: Any = None) -> McpError:
    return McpError(INVALID_PARAMS, message, data)


def method_not_found(method: str) -> McpError:
    return McpError(METHOD_NOT_FOUND, f"Method not found: {method}")


class ResourceNotFound(McpError):
    """No resource at this URI: -32602 in 2026-07-28, -32002 in the 2025-11-25 era (protocol.md P28)."""

    def __init__(self, uri: str) -> None:
        super().__init__(INVALID_PARAMS, f"Resource not found: {uri}", {"uri": uri})
        self.uri = uri


class CapabilityMissing(McpError):
    """-32021: an ask needs a client capability that this request did not declare.

    Catch it in a handler to fall back (for example, to a default); left uncaught it is the request's error.
    """

    def __init__(self, required: dict[str, Any]) -> None:
        what = json.dumps(required, ensure_ascii=False, separators=(",", ":"))
        super().__init__(
            MISSING_CAPABILITY,
            f"This request needs the client capability {what}, which the request did not declare",
            {"requiredCapabilities": required},
        )


class UsageError(ValueError):
    """Baton was used wrongly by the server's own code (a bad form, two asks with one key, ...).

    It is the author's bug, never the model's: a tool that raises it answers an internal error (logged
    with its traceback), not a tool error the model would read and try to fix.
    """
