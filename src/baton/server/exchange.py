"""What passes between a transport and the server for one request: who sent it, what it may do (`Grant`),
how to notify on its stream (`Exchange`), and the JSON-RPC reply that comes back (`Reply`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..protocol import headers as hdr
from ..protocol.constants import PROTOCOL_VERSION
from .challenge import bearer_challenge

Emit = Callable[[str, dict[str, Any]], Awaitable[None]]
"""Send a notification (method, params) on the request's own stream."""
UrlDone = Callable[[str], Awaitable[None]]
"""Tell the client that the URL it was asked to open under this ask key has been completed."""


@dataclass(slots=True)
class RequestInfo:
    """What the transport knows about who sent a request; the principal hook reads it."""

    transport: Literal["http", "stdio"]
    headers: hdr.Headers | None = None
    client: tuple[str, int] | None = None
    method: str = "POST"  # the HTTP method (a DPoP proof names it)


@dataclass(frozen=True, slots=True)
class Grant:
    """Who the caller is and, when its credentials say, which OAuth scopes it holds.

    A principal hook may return a `Grant` instead of a plain principal string. `scopes=None` means the
    credentials carry no scopes (a hook that returns a str): over HTTP such a caller may not run an
    operation that requires scopes (protocol.md P41).
    """

    principal: str
    scopes: frozenset[str] | None = None


class Unauthenticated(Exception):
    """Raised by a principal hook: no acceptable credentials. HTTP answers 401 with `www_authenticate`.

    `error=None` is for a request that presented no credentials at all (RFC 6750 section 3.1: no error
    code then); otherwise the token was refused (`invalid_token`, `invalid_request`).
    """

    def __init__(self, message: str, *, error: str | None = "invalid_token") -> None:
        super().__init__(message)
        self.message = message
        self.error = error

    @property
    def www_authenticate(self) -> str:
        """The challenge for this refusal (built only when a transport sends it)."""
        return bearer_challenge(error=self.error, description=self.message if self.error else None)


class AuthUnavailable(Exception):
    """Raised by a principal hook when credentials cannot be checked now (the authorization server's
    keys or introspection endpoint are unreachable): HTTP answers 503 with `Retry-After`, not 401, since
    the client's token was not judged (protocol.md P46)."""

    def __init__(self, message: str, *, retry_after_s: int = 5) -> None:
        super().__init__(message)
        self.message = message
        self.retry_after_s = retry_after_s


@dataclass(slots=True)
class Exchange:
    """One request's link to its transport: where it came from and how to notify on its stream.

    The last four are set for a 2025-11-25 request only (`baton.server.handshake`): the session's log
    level, its version, how to send `notifications/elicitation/complete`, and the asks of the round
    that set their own wait.
    """

    info: RequestInfo
    emit: Emit | None = None
    principal: str = "anonymous"
    scopes: frozenset[str] | None = None  # the caller's OAuth scopes, when its credentials carry them
    log_level: str | None = None
    protocol_version: str = PROTOCOL_VERSION
    url_done: UrlDone | None = None
    ask_timeouts: dict[str, float] | None = None  # a round's asks given their own wait (`timeout_s`), by key
    client_info: dict[str, Any] | None = None  # a session's clientInfo (2026-07-28 sends it in each `_meta`)


@dataclass(slots=True)
class Reply:
    """A JSON-RPC response to one request, as a dict, with the JSON-RPC error code if it is an error.

    `www_authenticate` is set when the request was refused for want of credentials (HTTP 401) or of
    scopes (HTTP 403); `status` is then that HTTP status (401 when unset). A request refused because
    its credentials cannot be checked now has `status` 503 and `retry_after_s`, without a challenge.
    """

    body: dict[str, Any]
    code: int | None = None
    www_authenticate: str | None = None
    status: int | None = None
    retry_after_s: int | None = None


PrincipalHook = Callable[[RequestInfo], "str | Grant | Awaitable[str | Grant | None] | None"]
"""The server's hook that names the caller from what the transport saw (never from what the client says):
a principal string, or a `Grant` with the caller's scopes."""
