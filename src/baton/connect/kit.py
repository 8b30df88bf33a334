"""`ConnectKit`: the server side of URL mode (protocol.md P22) and what `ctx.secret` does.

`await ctx.secret(name, message)` returns a `CredentialHandle` when the vault already holds `name`
for the caller. Otherwise it mints a ticket bound to (principal, flow id, "secret:<name>") once per
flow and asks, in URL mode, for the server's own page `<public_url>/connect/<ticket>`. The client's
`accept` means only "I opened it": on the retry the handler continues if the ticket is done (and the
vault holds the credential), else the same URL is asked again. Decline or cancel raise `NotConnected`.

What the kit needs of the server's configuration (a public URL; over HTTP, unless in development, a
principal hook) is checked when serving starts (`check`, called by `Server.check_startup`), and again
on each call, where a gap raises `ConfigurationError` naming the setting (a tool error, never an opaque
internal error).
"""

from __future__ import annotations

import asyncio
import logging
import os
import re
import time
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from ..extras import MissingExtra
from ..forms import Accepted
from ..protocol.constants import PROTOCOL_VERSION
from ..protocol.errors import UsageError
from ..protocol.hosts import is_loopback
from ..server.context import Context
from ..server.results import ToolError
from ..server.startup import PRINCIPAL_SETTING, PUBLIC_URL_SETTING, ConfigurationError
from ..state.keys import KeyRing
from ..state.ledger import Ledger
from ..state.ledger_memory import MemoryLedger
from .ask_app import answer_from_app
from .cookie import DEFAULT_SESSION_TTL_S, Sessions
from .oauth import OAuthProvider
from .page_login import DevLogin, Login
from .pages import ConnectApp
from .parked import DEFAULT_FLOW_TTL_S, DEFAULT_PAGE_TTL_S, MAX_TTL_S, PageRecords, ParkedFlow
from .stores import DEFAULT_STORE, ENV_STORE, parse_store_url, tickets_from_url, vault_store_from_url
from .tickets import DEFAULT_TICKET_TTL_S, TicketStore, mint
from .vault import CredentialHandle, Vault, VaultStore

if TYPE_CHECKING:
    from ..server.core import Server

log = logging.getLogger("baton.connect")
ENV_PUBLIC_URL = "BATON_PUBLIC_URL"
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,64}\Z")


class NotConnected(ToolError):
    """The user declined or cancelled connecting, or never finished; the tool answers with an error."""


class ConnectKit:
    """Tickets, vault, sessions, login and pages for one server; `Server(connect=ConnectKit(...))`.

    Defaults: the stores of `store` (a URL, else `$BATON_CONNECT_STORE`, else `sqlite:`, the data
    directory; `redis://…` for many instances, see `baton.connect.stores`) unless `tickets`/`vault`
    are given, the server's `public_url` (or `$BATON_PUBLIC_URL`), and the development login only
    when that URL is http(s) on a loopback host.
    """

    def __init__(
        self,
        *,
        public_url: str | None = None,
        store: str | None = None,
        tickets: TicketStore | None = None,
        vault: VaultStore | None = None,
        login: Login | None = None,
        ticket_ttl_s: float = DEFAULT_TICKET_TTL_S,
        session_ttl_s: int = DEFAULT_SESSION_TTL_S,
        hold_s: float = 0.0,
        session_hold_s: float = 300.0,
        max_asks: int = 20,
        providers: Iterable[OAuthProvider] = (),
        page_ttl_s: float = DEFAULT_PAGE_TTL_S,
        flow_ttl_s: float = DEFAULT_FLOW_TTL_S,
    ) -> None:
        for name, ttl in (("page_ttl_s", page_ttl_s), ("flow_ttl_s", flow_ttl_s)):
            if not 0 < ttl <= MAX_TTL_S:
                raise ValueError(f"ConnectKit({name}=...) is 1 second to {MAX_TTL_S} seconds (a week), not {ttl!r}")
        if store is not None:
            parse_store_url(store)  # a malformed URL fails here, not on the first connect
        self._public_url = public_url
        self._store = store
        self._tickets = tickets
        self._vault_store = vault
        self._login = login
        self.ticket_ttl_s = ticket_ttl_s
        self.session_ttl_s = session_ttl_s
        self.hold_s = hold_s
        # In a 2025-11-25 session the request itself waits for the page to be finished (protocol.md P29).
        self.session_hold_s = session_hold_s
        self.max_asks = max_asks
        self.providers = {p.name: p for p in providers}
        # The page rung (protocol.md P145-P147): how long a page link lives, how long answers wait.
        self.page_ttl_s = page_ttl_s
        self.flow_ttl_s = max(flow_ttl_s, page_ttl_s)
        self._ledger: Callable[[], Ledger] | None = None
        self._records: PageRecords | None = None
        self._ring: KeyRing | None = None
        self._vault: Vault | None = None
        self._sessions: Sessions | None = None
        self.app = ConnectApp(self)

    def attach(self, ring: KeyRing, public_url: str | None, ledger: Callable[[], Ledger] | None = None) -> None:
        """Called by the Server: its key ring, its public URL (unless the kit was given one) and its ledger,
        where questions asked on the server's own page wait (a memory ledger without one)."""
        self._ring = ring
        self._public_url = self._public_url or public_url
        self._ledger = ledger

    @property
    def records(self) -> PageRecords:
        """The parked flows of the page rung, in the server's ledger (protocol.md P145)."""
        if self._records is None:
            if self._ledger is None:
                memory = MemoryLedger()
                self._ledger = lambda: memory
            self._records = PageRecords(self.ring, self._ledger)
        return self._records

    def page_flow(
        self, principal: str, binding: bytes, deliver: Callable[[dict[str, Any]], str], apps: bool = False
    ) -> ParkedFlow | None:
        """The page rung's flow for one call (`baton.server.parts.ConnectPart.page_flow`): None for an anonymous
        caller outside development (a page, or an app's answer, must know whose it is), and without a public
        URL unless the client renders the ask app (`apps`, P216: then the flow has no page, only the app)."""
        pages = self.configured
        if not pages and not apps:
            return None
        if principal == "anonymous" and not (pages and self.development):
            log.warning("the page rung needs to know who is calling: set Server(principal=...); using the error rung")
            return None
        return ParkedFlow(self, self.records, principal, binding, deliver, pages=pages)

    async def answer(self, principal: str, ticket: str, action: str, fields: dict[str, list[str]]) -> str:
        """The ask app's answer to a parked question, recorded (`baton.connect.ask_app`, protocol.md P215)."""
        return await answer_from_app(self, principal, ticket, action, fields)

    @property
    def attached(self) -> bool:
        return self._ring is not None

    # -- configuration ------------------------------------------------------------------------------

    @property
    def ring(self) -> KeyRing:
        if self._ring is None:
            raise RuntimeError("the connect kit is not attached to a Server")
        return self._ring

    def check(self, *, authenticated: bool, needed_by: str = "ctx.secret") -> None:
        """Raise `ConfigurationError` for what would fail every `ctx.secret` / `ctx.connect`: no public URL;
        or, when callers are not authenticated (HTTP without a principal hook), a public URL other than
        plain http on loopback (outside development, an anonymous caller cannot own a credential)."""
        if not self.configured:
            raise ConfigurationError(
                f"{needed_by} needs the server's public URL, where the user's browser opens the connect page: "
                f"set Server(public_url='https://...') or $BATON_PUBLIC_URL (http://127.0.0.1:PORT for development)",
                setting=PUBLIC_URL_SETTING,
            )
        if not authenticated and not self.development:
            raise ConfigurationError(_anonymous(needed_by, self.base_url), setting=PRINCIPAL_SETTING)
        if self.providers:
            from ..oauth_http import oauth2_client_class  # noqa: PLC0415 (httpx loads for a server with providers only)

            try:
                oauth2_client_class()
            except MissingExtra as exc:
                raise ConfigurationError(str(exc), setting="the [oauth] extra") from None

    @property
    def configured(self) -> bool:
        """Whether the kit knows the server's public URL (without it, no page is served)."""
        return bool(self._public_url or os.environ.get(ENV_PUBLIC_URL))

    @property
    def base_url(self) -> str:
        url = self._public_url or os.environ.get(ENV_PUBLIC_URL)
        if not url:
            raise ConfigurationError(
                "ctx.secret needs the server's public URL, where the user's browser opens the connect page: "
                "set Server(public_url='https://...') or $BATON_PUBLIC_URL",
                setting=PUBLIC_URL_SETTING,
            )
        return url.rstrip("/")

    @property
    def redirect_uri(self) -> str:
        """Where OAuth providers send the browser back: `<public_url>/connect/callback`."""
        return f"{self.base_url}/connect/callback"

    @property
    def development(self) -> bool:
        """Plain http on a loopback host: development (no Secure cookie, the development login)."""
        parts = urlsplit(self.base_url)
        return parts.scheme == "http" and is_loopback(parts.hostname or "")

    @property
    def login(self) -> Login | None:
        if self._login is None and self.development:
            self._login = DevLogin()
        return self._login

    @property
    def store_url(self) -> str:
        """Where the default stores live: `store`, else `$BATON_CONNECT_STORE`, else `sqlite:`."""
        return self._store or os.environ.get(ENV_STORE) or DEFAULT_STORE

    @property
    def tickets(self) -> TicketStore:
        if self._tickets is None:
            self._tickets = tickets_from_url(self.store_url)
        return self._tickets

    @property
    def vault(self) -> Vault:
        if self._vault is None:
            store = self._vault_store or vault_store_from_url(self.store_url)
            self._vault = Vault(self.ring, store)
        return self._vault

    @property
    def sessions(self) -> Sessions:
        if self._sessions is None:
            self._sessions = Sessions(self.ring, ttl_s=self.session_ttl_s, secure=not self.development)
        return self._sessions

    async def aclose(self) -> None:
        if self._tickets is not None:
            await self._tickets.close()
        if self._vault is not None:
            await self._vault.close()

    # -- ctx.secret ---------------------------------------------------------------------------------

    async def secret(
        self, ctx: Context, name: str, message: str, *, key: str | None = None, timeout_s: float | None = None
    ) -> CredentialHandle:
        if not _NAME.match(name):
            raise UsageError("ctx.secret: a name is 1-64 characters of A-Z a-z 0-9 _ . -")
        return await self._obtain(ctx, name, f"secret:{name}", message, key or f"connect-{name}", timeout_s)

    async def connect(
        self,
        ctx: Context,
        provider: str | OAuthProvider,
        message: str | None = None,
        *,
        key: str | None = None,
        timeout_s: float | None = None,
    ) -> CredentialHandle:
        name = provider if isinstance(provider, str) else provider.name
        found = self.providers.get(name)
        if found is None:
            raise UsageError(f"ctx.connect: no OAuth provider {name!r} is configured (ConnectKit(providers=[...]))")
        text = message or f"Connect your {name} account"
        base = key or f"connect-oauth-{name}"
        return await self._obtain(ctx, found.vault_name, f"oauth:{name}", text, base, timeout_s)

    async def _obtain(
        self, ctx: Context, name: str, purpose: str, message: str, base: str, timeout_s: float | None
    ) -> CredentialHandle:
        principal = ctx.principal
        if principal == "anonymous" and not self.development:
            raise ConfigurationError(_anonymous("ctx.secret", self.base_url), setting=PRINCIPAL_SETTING)
        vault = self.vault
        if await vault.has(principal, name):
            return vault.handle(principal, name)
        if ctx.page_flow is None or not ctx.page_flow.pages:  # the page rung gives the connect link itself (P145)
            ctx.require("url")  # before a ticket is minted
        flow_id = ctx.flow_id

        async def new_ticket() -> str:
            ticket = mint(principal, flow_id, purpose, self.ticket_ttl_s)
            await self.tickets.put(ticket)
            return ticket.id

        ticket_id: str = await ctx.once(f"connect:{purpose}", new_ticket)
        url = f"{self.base_url}/connect/{ticket_id}"
        for attempt in range(1, self.max_asks + 1):
            text = message if attempt == 1 else f"Not connected yet: open the link and finish there. {message}"
            ask_key = base if attempt == 1 else f"{base}-{attempt}"
            answer = await ctx.elicit_url(text, url, key=ask_key, development=self.development, timeout_s=timeout_s)
            if not isinstance(answer, Accepted):
                raise NotConnected(f"{name} was not connected: the user declined")
            hold = 0.0
            if ctx.answered_now(ask_key):
                hold = (
                    self.hold_s if ctx.protocol_version == PROTOCOL_VERSION else max(self.hold_s, self.session_hold_s)
                )
            if await self._finished(ticket_id, principal, flow_id, purpose, name, hold_s=hold):
                await ctx.url_completed(ask_key)
                return vault.handle(principal, name)
        raise NotConnected(f"{name} was not connected: the link was not completed")

    async def _finished(
        self, ticket_id: str, principal: str, flow_id: bytes, purpose: str, name: str, *, hold_s: float
    ) -> bool:
        """Whether the ticket is done (for this principal, flow and purpose); waits up to `hold_s` for it."""
        deadline = time.monotonic() + hold_s
        while True:
            ticket = await self.tickets.get(ticket_id)
            if ticket is not None and ticket.done and ticket.binds(principal, flow_id, purpose):
                return await self.vault.has(principal, name)
            if ticket is None or time.monotonic() >= deadline:
                return False
            await asyncio.sleep(0.25)


def _anonymous(needed_by: str, base_url: str) -> str:
    return (
        f"{needed_by} needs to know who is calling, to keep each caller's credentials apart, but the caller is "
        f"anonymous: set Server(principal=...) to a hook that identifies HTTP callers (see baton.principals); "
        f"only a plain http loopback public URL (development, not {base_url}) takes anonymous callers"
    )


def mount_default_kit(server: Server) -> None:
    """Mount a default `ConnectKit` on a server that was given none (the serving layer calls this)."""
    if not server.runtime.has_connect_kit:
        server.runtime.mount_connect(ConnectKit())


__all__ = ["ConnectKit", "NotConnected", "mount_default_kit"]
