"""What the server needs of a part it mounts: the URL-mode connect kit behind `ctx.secret` / `ctx.connect`.

The server layer knows the kit only through these protocols, so it never imports the connect layer
above it; `baton.connect.ConnectKit` is the implementation Baton ships, and the serving layer mounts a
default one when the author gave none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

from ..state.keys import KeyRing

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


class ConnectPart(Protocol):
    """The connect kit as the server sees it: attached to the server's key ring, asked by `Context`."""

    @property
    def attached(self) -> bool: ...

    @property
    def app(self) -> Any:
        """The ASGI app of the kit's browser pages, which the HTTP app serves under `/connect/`."""
        ...

    def attach(self, ring: KeyRing, public_url: str | None) -> None: ...

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
