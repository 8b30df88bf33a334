"""The connect pages, an ASGI app that `HttpApp` mounts at `/connect/`.

- `/connect/login`: the configured `Login` (sets the session cookie).
- `GET /connect/<ticket>`: who is the browser user (session cookie; else to the login page)? Only
  the ticket's own principal gets the form; anyone else gets 403. Unknown or expired: 404; used: 410.
- In development only (the development login on a loopback http URL, where anyone may sign in as
  anyone), the login page names and prefills the principal the link was made for, and the 403 says
  whose the link is and offers to sign in as them. Otherwise no page says anything about a link's owner.
- `GET /connect/<ticket>` of an OAuth ticket (`ctx.connect`): the same checks, then a link to the provider
  with PKCE and a one-time `state` bound to the ticket; `/connect/callback` (session required) redeems
  that state once, exchanges the code and stores the token in the vault.
- `GET`/`POST /connect/<ticket>` of a page-rung ticket (a question the client could not show): the same
  checks, then the question's own page (`ask_page.py`).
- `POST /connect/<ticket>`: the same checks, a CSRF token bound to the session and the ticket, a
  same-origin check; then the ticket is completed (atomically, once) and the secret goes to the vault.
Nothing a user submits is logged.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING
from urllib.parse import quote, urlsplit

import orjson

from ..protocol.asgi import Receive, Scope, Send
from .ask_page import AskPage
from .cookie import COOKIE_NAME, Session
from .oauth import STATE_PREFIX, authorization_url, exchange, new_verifier
from .page_http import PageResponse, Request, esc, page, read_request, redirect, send_response
from .page_login import DevLogin, principal_note, safe_next
from .parked import PURPOSE
from .tickets import Ticket, mint, well_formed
from .vault import MAX_SECRET_BYTES

if TYPE_CHECKING:
    from .kit import ConnectKit

log = logging.getLogger("baton.connect")
_DONE = "Connected. You can close this window and return to your assistant."


def _ref(ticket_id: str) -> str:
    """A short, non-secret reference to a ticket for the log."""
    return hashlib.sha256(ticket_id.encode()).hexdigest()[:10]


class ConnectApp:
    """Serves `/connect/...` for one `ConnectKit`."""

    def __init__(self, kit: ConnectKit) -> None:
        self.kit = kit
        self.asks = AskPage(kit)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        if not self.kit.configured:
            await send_response(send, page("Not found", "<p>The connect pages are not configured.</p>", status=404))
            return
        request = await read_request(scope, receive)
        if request is None:
            await send_response(send, page("Request too large", "", status=413))
            return
        await send_response(send, await self.route(request))

    async def route(self, request: Request) -> PageResponse:
        if request.method not in ("GET", "POST"):
            return PageResponse(405, "", [("allow", "GET, POST")])
        if request.method == "POST" and not self._same_origin(request):
            return page("Refused", "<p>This form was sent from another site.</p>", status=403)
        path = request.path
        if path == "/connect/login" or path.startswith("/connect/login/"):
            login = self.kit.login
            if login is None:
                return page("No login configured", "<p>The server has no login for this page.</p>", status=501)
            if isinstance(login, DevLogin) and self._names_owners():
                return await login.handle(request, self.kit.sessions, owner=await self._owner(request))
            return await login.handle(request, self.kit.sessions)
        if path == "/connect/callback":
            return await self._callback(request)
        ticket_id = path.removeprefix("/connect/")
        if not well_formed(ticket_id):
            return _invalid()
        return await self._ticket(request, ticket_id)

    def _names_owners(self) -> bool:
        """Whether pages may say whose a link is: only in development with the development login, where
        anyone may sign in as anyone anyway. A production login (or any other login) is never told."""
        return self.kit.development and isinstance(self.kit.login, DevLogin)

    async def _owner(self, request: Request) -> str | None:
        """The principal of the live ticket the login will return to (`next`), if any."""
        ticket_id = safe_next(request.query.get("next") or request.form.get("next")).removeprefix("/connect/")
        ticket = await self.kit.tickets.get(ticket_id) if well_formed(ticket_id) else None
        return ticket.principal if ticket is not None and not ticket.done else None

    def _not_yours(self, session: Session, ticket: Ticket) -> PageResponse:
        """The 403 of a link opened by another principal; names the owner only in development."""
        if not self._names_owners():
            body = "<p>This link was made for another account. Sign in as the user who asked, or ask again.</p>"
            return page("Not your link", body, status=403)
        owner = esc(ticket.principal)
        action = esc("/connect/login?next=" + quote(f"/connect/{ticket.id}", safe="/"))
        body = (
            f"<p>This link was made for another account, <b>{owner}</b>; you are signed in as "
            f"<b>{esc(session.principal)}</b>. The link's owner is the principal of the MCP client that asked: "
            f"{principal_note(ticket.principal)}.</p>"
            f"<form method='post' action='{action}'><input type='hidden' name='principal' value='{owner}'>"
            f"<button type='submit'>Sign in as {owner}</button></form>{DevLogin.DEV_ONLY}"
        )
        return page("Not your link", body, status=403, banner=DevLogin.BANNER)

    def _same_origin(self, request: Request) -> bool:
        site = request.headers.get("sec-fetch-site")
        if site is not None and site not in ("same-origin", "none"):
            return False
        origin = request.headers.get("origin")
        if origin is None:
            return True
        base = urlsplit(self.kit.base_url)
        return origin.strip().lower().rstrip("/") == f"{base.scheme}://{base.netloc}".lower()

    async def _ticket(self, request: Request, ticket_id: str) -> PageResponse:
        sessions = self.kit.sessions
        session = sessions.read(request.cookies.get(COOKIE_NAME))
        if session is None:
            if request.method == "GET":
                return redirect("/connect/login?next=" + quote(request.path, safe="/"))
            return page("Sign in first", "<p>Your session is missing or expired.</p>", status=403)
        ticket = await self.kit.tickets.get(ticket_id)
        if ticket is None:
            log.info("connect: unknown or expired ticket %s", _ref(ticket_id))
            return _invalid()
        if ticket.principal != session.principal:
            log.warning("connect: ticket %s opened by a user other than the one it was made for", _ref(ticket_id))
            return self._not_yours(session, ticket)
        if ticket.done:
            return page("Link already used", "<p>This link has already been used; ask again.</p>", status=410)
        kind, _, name = ticket.purpose.partition(":")
        if kind == "oauth" and request.method == "GET":
            return await self._begin_oauth(session, ticket, name)
        if kind == PURPOSE:  # a question the client could not show (protocol.md P145)
            return await self.asks.handle(request, session, ticket)
        if kind != "secret":
            return _invalid()
        if request.method == "GET":
            return self._form(session, ticket, name)
        return await self._submit(request, session, ticket, name)

    def _form(self, session: Session, ticket: Ticket, name: str, problem: str = "") -> PageResponse:
        csrf = self.kit.sessions.csrf(session, ticket.id)
        note = f"<p role='alert'>{esc(problem)}</p>" if problem else ""
        body = (
            f"{note}<p>Signed in as <b>{esc(session.principal)}</b>. Enter the value of <b>{esc(name)}</b>; "
            "it is stored encrypted on this server and never shown to your assistant.</p>"
            f"<form method='post' action='/connect/{esc(ticket.id)}'>"
            f"<input type='hidden' name='csrf' value='{esc(csrf)}'>"
            f"<label>{esc(name)} <input type='password' name='secret' autocomplete='off' required></label> "
            "<button type='submit'>Save</button></form>"
        )
        return page(f"Connect: {name}", body, status=400 if problem else 200)

    async def _submit(self, request: Request, session: Session, ticket: Ticket, name: str) -> PageResponse:
        if not self.kit.sessions.check_csrf(session, ticket.id, request.form.get("csrf", "")):
            log.warning("connect: a form for ticket %s failed the CSRF check", _ref(ticket.id))
            return page("Refused", "<p>This form has expired or was not sent from this page.</p>", status=403)
        secret = request.form.get("secret", "")
        if not secret.strip() or len(secret.encode()) > MAX_SECRET_BYTES:
            return self._form(session, ticket, name, f"Enter a value of 1 to {MAX_SECRET_BYTES} bytes.")
        if not await self.kit.tickets.complete(ticket.id, session.principal):
            return page("Link already used", "<p>This link has already been used; ask again.</p>", status=410)
        await self.kit.vault.put(session.principal, name, secret.strip())
        log.info("connect: credential %r stored for ticket %s", name, _ref(ticket.id))
        return page("Connected", f"<p>{esc(_DONE)}</p>")

    # -- OAuth (ctx.connect) ------------------------------------------------------------------------

    async def _begin_oauth(self, session: Session, ticket: Ticket, name: str) -> PageResponse:
        provider = self.kit.providers.get(name)
        if provider is None:
            return _invalid()
        verifier = new_verifier()
        state = mint(session.principal, ticket.flow_id, f"{STATE_PREFIX}:{ticket.id}:{verifier}", self.kit.ticket_ttl_s)
        await self.kit.tickets.put(state)
        target = authorization_url(provider, self.kit.redirect_uri, state.id, verifier)
        body = (
            f"<p>Signed in as <b>{esc(session.principal)}</b>. Connect your <b>{esc(name)}</b> account: the "
            "token stays on this server and is never shown to your assistant.</p>"
            f"<p><a id='continue' href='{esc(target)}'>Continue to {esc(name)}</a></p>"
        )
        return page(f"Connect: {name}", body)

    async def _callback(self, request: Request) -> PageResponse:
        session = self.kit.sessions.read(request.cookies.get(COOKIE_NAME))
        if session is None or request.method != "GET":
            return page("Sign in first", "<p>Your session is missing or expired.</p>", status=403)
        state_id = request.query.get("state", "")
        state = await self.kit.tickets.get(state_id) if well_formed(state_id) else None
        kind, _, rest = state.purpose.partition(":") if state is not None else ("", "", "")
        if state is None or kind != STATE_PREFIX or state.done:
            log.warning("connect: OAuth callback with an unknown, expired or used state")
            return page("Link not valid", "<p>This sign-in is not valid, expired or already used.</p>", status=400)
        if state.principal != session.principal:
            log.warning("connect: OAuth callback for state %s by another user", _ref(state_id))
            return page("Not your sign-in", "<p>This sign-in was started by another account.</p>", status=403)
        if not await self.kit.tickets.complete(state_id, session.principal):  # single use, atomically
            return page("Link not valid", "<p>This sign-in was already used.</p>", status=400)
        ticket_id, _, verifier = rest.partition(":")
        ticket = await self.kit.tickets.get(ticket_id)
        if ticket is None or ticket.done or ticket.principal != session.principal or ticket.flow_id != state.flow_id:
            return _invalid()
        provider = self.kit.providers.get(ticket.purpose.partition(":")[2])
        code = request.query.get("code")
        if provider is None or not ticket.purpose.startswith("oauth:"):
            return _invalid()
        if not code:
            return page("Not connected", "<p>The provider did not grant access; ask again.</p>", status=400)
        try:
            token = await exchange(provider, self.kit.redirect_uri, code, verifier)
        except Exception as exc:  # the provider's error, whatever the HTTP library raised
            log.warning("connect: token exchange with %s failed (%s)", provider.name, type(exc).__name__)
            return page("Not connected", "<p>The provider refused the sign-in; ask again.</p>", status=502)
        if not await self.kit.tickets.complete(ticket.id, session.principal):
            return page("Link already used", "<p>This link has already been used; ask again.</p>", status=410)
        await self.kit.vault.put(session.principal, provider.vault_name, orjson.dumps(token).decode())
        log.info("connect: %s connected for ticket %s", provider.name, _ref(ticket.id))
        return page("Connected", f"<p>{esc(_DONE)}</p>")


def _invalid() -> PageResponse:
    return page("Link not valid", "<p>This link is not valid or has expired; ask again.</p>", status=404)
