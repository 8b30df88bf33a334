"""What passes between a transport and the server for one request: who sent it, how to notify on its
stream (`Exchange`), and the JSON-RPC reply that comes back (`Reply`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Literal

from ..protocol import headers as hdr
from ..protocol.constants import PROTOCOL_VERSION

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


class Unauthenticated(Exception):
    """Raised by a principal hook: no acceptable credentials. HTTP answers 401 with `www_authenticate`."""

    def __init__(self, message: str, *, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.message = message
        safe = message.replace('"', "'")
        self.www_authenticate = f'Bearer error="{error}", error_description="{safe}"'


@dataclass(slots=True)
class Exchange:
    """One request's link to its transport: where it came from and how to notify on its stream.

    The last three are set for a 2025-11-25 request only (`baton.server.legacy`): the session's log
    level, its version, and how to send `notifications/elicitation/complete`.
    """

    info: RequestInfo
    emit: Emit | None = None
    principal: str = "anonymous"
    log_level: str | None = None
    protocol_version: str = PROTOCOL_VERSION
    url_done: UrlDone | None = None


@dataclass(slots=True)
class Reply:
    """A JSON-RPC response to one request, as a dict, with the JSON-RPC error code if it is an error.

    `www_authenticate` is set when the request was refused for want of credentials (HTTP 401).
    """

    body: dict[str, Any]
    code: int | None = None
    www_authenticate: str | None = None


PrincipalHook = Callable[[RequestInfo], "str | Awaitable[str | None] | None"]
"""The server's hook that names the caller from what the transport saw (never from what the client says)."""
