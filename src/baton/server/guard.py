"""Who may run a request: the caller's grant from the principal hook (or `Server(auth=...)`), and the
scope gate, answering 401 or 403 with a `WWW-Authenticate` challenge before anything else is checked.

`Guard.admit` runs for every request of both eras over HTTP (and names the OS user on stdio):

- no acceptable credentials → HTTP 401, `Bearer resource_metadata="...", scope="<what this request
  needs>"`, plus `error`/`error_description` when a token was presented and refused;
- a grant that lacks scopes this request needs → HTTP 403, `Bearer error="insufficient_scope",
  scope="<every scope it needs, in one challenge>", resource_metadata="..."` (protocol.md P39).

When the credentials cannot be checked now (`AuthUnavailable`: the issuer's keys or introspection
endpoint are unreachable) the answer is 503 with `Retry-After` and no challenge: the token was not
judged, so the client should retry, not log in again (protocol.md P46).

Authentication that fails unexpectedly (a bug in a hook, a library error on a strange token) is a
logged 401, never a 500 with a traceback: the log names the exception and where it was raised, not
its message, which might quote the token.

Each MRTR round is its own request and is admitted again (protocol.md P42). On stdio scopes are not
enforced: the caller is the OS user who started the process (protocol.md P37).

`ResourceAuth` is what the server needs of `Server(auth=...)` (`baton.auth.OAuthResource` is the one
Baton ships); the guard knows it only through this protocol, as the server knows the connect kit.
"""

from __future__ import annotations

import inspect
import logging
import traceback
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from ..protocol.messages import Message, error_response
from .challenge import bearer_challenge
from .exchange import AuthUnavailable, Exchange, Grant, PrincipalHook, Reply, RequestInfo, Unauthenticated
from .scopes import Implications, required_for

if TYPE_CHECKING:
    from .core import Server

log = logging.getLogger("baton.auth")

FORBIDDEN = 403
UNAUTHORIZED = 401
UNAVAILABLE = 503
_ANONYMOUS = Grant("anonymous")
"""An HTTP caller no hook names (a `Grant` is frozen: one serves every such request)."""


class ResourceAuth(Protocol):
    """What the server needs of an OAuth protected-resource configuration (`Server(auth=...)`); an
    `async def aclose()` too, if it has one, is awaited when the server shuts down."""

    @property
    def resource(self) -> str:
        """The resource identifier (RFC 8707), the canonical URI of the MCP endpoint."""
        ...

    @property
    def metadata_url(self) -> str:
        """The absolute URL of the Protected Resource Metadata document (RFC 9728)."""
        ...

    @property
    def metadata_path(self) -> str:
        """Its path, which the HTTP app answers."""
        ...

    @property
    def scopes(self) -> tuple[str, ...]:
        """The scopes every request needs."""
        ...

    @property
    def implications(self) -> Implications:
        """The scope hierarchy."""
        ...

    async def authenticate(self, info: RequestInfo) -> Grant:
        """The caller's grant from a verified token, or `Unauthenticated`."""
        ...

    def metadata(self, declared: Iterable[str]) -> dict[str, Any]:
        """The metadata document, given every scope the server declares."""
        ...


class Guard:
    """One server's authentication and scope gate."""

    def __init__(self, server: Server, hook: PrincipalHook | None) -> None:
        self.server = server
        self.hook = hook
        self._plain = Implications()

    @property
    def active(self) -> bool:
        """Whether HTTP requests are authenticated at all (else every HTTP caller is `anonymous`)."""
        return self.hook is not None

    async def grant(self, info: RequestInfo) -> Grant:
        """The caller's grant: the hook's answer, the OS user on stdio, else `anonymous` (no scopes).

        OAuth (`Server(auth=...)`) is for HTTP only: a stdio caller is the OS user (protocol.md P37)."""
        if self.hook is not None and (info.transport == "http" or self.server.settings.auth is None):
            who = self.hook(info)
            if inspect.isawaitable(who):
                who = await who
            if isinstance(who, Grant):
                return who
            return Grant(who or "anonymous")
        return self._local(info)

    def _local(self, info: RequestInfo) -> Grant:
        """The grant of a caller no hook names: the OS user on stdio, else `anonymous`."""
        if info.transport == "stdio":
            return Grant(self.server.runtime.os_principal())
        return _ANONYMOUS

    async def admit(self, msg: Message | None, exchange: Exchange) -> Reply | None:
        """Set the exchange's principal and scopes; None to go on, or the 401/403 refusal to send.

        `msg` is None for what names no operation (a session's GET, DELETE, notifications, answers)."""
        info = exchange.info
        method, params = (msg.method, msg.params) if msg is not None else (None, None)
        rid = msg.id if msg is not None else None
        try:
            # Without a hook nothing is awaited and nothing can fail: no coroutine on every stdio request.
            grant = self._local(info) if self.hook is None else await self.grant(info)
        except Unauthenticated as exc:
            return self._unauthenticated(info, rid, exc, method, params)
        except AuthUnavailable as exc:
            error = McpError(INTERNAL_ERROR, f"Service unavailable: {exc.message}; retry later")
            return Reply(error_response(rid, error), INTERNAL_ERROR, None, UNAVAILABLE, exc.retry_after_s)
        except Exception as exc:
            _log_failure(exc)
            refused = Unauthenticated("the credentials could not be checked")
            return self._unauthenticated(info, rid, refused, method, params)
        exchange.principal = grant.principal
        exchange.scopes = grant.scopes
        if info.transport != "http":
            return None
        required = required_for(self.server, method, params)
        if not required:
            return None
        implications = self.server.settings.auth.implications if self.server.settings.auth is not None else self._plain
        if implications.missing(grant.scopes, required):
            what = f"{method} {params.get('name') or params.get('uri') or ''}".strip() if params else "this request"
            return self._refusal(
                rid, FORBIDDEN, "insufficient_scope", f"{what} needs the scopes: {' '.join(required)}", required
            )
        return None

    def _unauthenticated(
        self, info: RequestInfo, rid: Any, exc: Unauthenticated, method: str | None, params: Mapping[str, Any] | None
    ) -> Reply:
        """The 401 for a refused or unreadable credential (on stdio, the hook's refusal as an error)."""
        if info.transport != "http":
            error = McpError(INVALID_REQUEST, f"Unauthorized: {exc.message}")
            return Reply(error_response(rid, error), INVALID_REQUEST, exc.www_authenticate, UNAUTHORIZED)
        return self._refusal(rid, UNAUTHORIZED, exc.error, exc.message, required_for(self.server, method, params))

    def _refusal(self, rid: Any, status: int, error: str | None, description: str, required: tuple[str, ...]) -> Reply:
        auth = self.server.settings.auth
        header = bearer_challenge(
            error=error,
            description=description,
            scope=required,
            resource_metadata=auth.metadata_url if auth is not None else None,
            scheme=getattr(auth, "challenge_scheme", "Bearer"),  # DPoP for a resource that requires it (P198)
        )
        word = "Forbidden" if status == FORBIDDEN else "Unauthorized"
        body = error_response(rid, McpError(INVALID_REQUEST, f"{word}: {description}"))
        return Reply(body, INVALID_REQUEST, header, status)


def _log_failure(exc: Exception) -> None:
    """Log an unexpected authentication failure by its type and place only (its text may hold the token)."""
    frames = traceback.extract_tb(exc.__traceback__)
    where = f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"
    log.error("authenticating a request failed unexpectedly: %s at %s; refused with 401", type(exc).__name__, where)
