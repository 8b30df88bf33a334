"""What the server needs of a part it mounts: the URL-mode connect kit behind `ctx.secret` / `ctx.connect`.

The server layer knows the kit only through these protocols, so it never imports the connect layer
above it; `baton.connect.ConnectKit` is the implementation Baton ships, and the serving layer mounts a
default one when the author gave none.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..state.journal import Journal
from ..state.keys import KeyRing
from ..state.ledger import Ledger

if TYPE_CHECKING:
    from .context import Context


class Credential(Protocol):
    """A credential kept on the server for one caller; the secret itself never passes through the client."""

    @property
    def name(self) -> str: ...

    async def reveal(self) -> str:
        """The secret (or, for OAuth, the token response as JSON)."""
        ...

    async def forget(self) -> None:
        """Delete it, so that the next ask for it goes to the user again."""
        ...


class Link(NamedTuple):
    """A question waiting on the server's own page: the link for the user, the question's message, and,
    when it is shown in Baton's ask app instead (P213), what the app is given (the result's `_meta`)."""

    url: str
    message: str
    ask: dict[str, Any] | None = None


class PageFlow(Protocol):
    """One call's flow on the server's own page (protocol.md P145), bound to its principal and to its request
    (method, tool, canonical arguments); `baton.connect.parked.ParkedFlow` is Baton's."""

    @property
    def pages(self) -> bool:
        """Whether the server gives pages under a public URL; without, only the ask app serves (P216)."""
        ...

    async def resume(self) -> Journal | Link:
        """What an identical earlier call left: the journal to go on with (answers given on the page and
        `ctx.once` results; empty when there is none), or the link of the question still unanswered (unless
        this client can show that question itself: then the journal up to it)."""
        ...

    async def park(self, key: str, digest: str, request: dict[str, Any], journal: Journal, app: bool = False) -> Link:
        """Keep the flow (its journal so far) for the question `request` at `key` and make its page; `app`:
        it is shown in the ask app (P213)."""
        ...

    async def finish(self) -> None:
        """The flow completed: the next identical call starts afresh."""
        ...


class ConnectPart(Protocol):
    """The connect kit as the server sees it: attached to the server's key ring, asked by `Context`."""

    @property
    def attached(self) -> bool: ...

    @property
    def app(self) -> Any:
        """The ASGI app of the kit's browser pages, which the HTTP app serves under `/connect/`."""
        ...

    def attach(self, ring: KeyRing, public_url: str | None, ledger: Callable[[], Ledger] | None = None) -> None: ...

    def page_flow(
        self, principal: str, binding: bytes, deliver: Callable[[dict[str, Any]], str], apps: bool = False
    ) -> PageFlow | None:
        """The page rung's flow for this call, or None where the pages cannot serve it (no public URL unless
        the client renders the ask app, `apps`; or an anonymous caller outside development); `deliver(request)`:
        the rung that delivers a question to this call's client (`baton.server.ladder.rung`)."""
        ...

    async def answer(self, principal: str, ticket: str, action: str, fields: dict[str, list[str]]) -> str:
        """Record the answer the ask app sent for a parked question (P215); the sentence for the app.
        `baton.server.results.ToolError` when it cannot be recorded, saying why."""
        ...

    def check(self, *, authenticated: bool, needed_by: str = "ctx.secret") -> None:
        """Raise `baton.server.startup.ConfigurationError` for configuration that would fail every use of the
        kit (`Server.check_startup` calls it once attached); `authenticated`: whether callers are identified."""
        ...

    async def secret(
        self, ctx: Context, name: str, message: str, *, key: str | None = None, timeout_s: float | None = None
    ) -> Credential: ...

    async def connect(
        self,
        ctx: Context,
        provider: Any,
        message: str | None = None,
        *,
        key: str | None = None,
        timeout_s: float | None = None,
    ) -> Credential: ...

    async def aclose(self) -> None: ...
