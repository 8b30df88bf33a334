"""Logins for the connect pages: the pluggable `Login` interface and a development-only `DevLogin`.

A login answers `/connect/login` and, once it knows who the browser user is, sets the session
cookie with `sessions.issue(principal)`. `DevLogin` trusts whatever name is typed: it exists for
local development and tests only, says so on the page, and warns in the server log.

Because anyone may sign in as anyone there, `DevLogin` also helps: given the `owner` of the link the
user is signing in for (the connect pages pass it only in development, protocol.md P22), it names that
principal and prefills it; without one it explains what to type (without a principal hook, every HTTP
caller is `anonymous`). A production login is never told whose a link is.
"""

from __future__ import annotations

import abc
import logging
from urllib.parse import quote

from .cookie import Sessions
from .page_http import PageResponse, Request, esc, page, redirect

log = logging.getLogger("baton.connect")
MAX_PRINCIPAL = 200


def safe_next(target: str | None) -> str:
    """Only a path under /connect/ may be a post-login destination (no open redirects)."""
    if target and target.startswith("/connect/") and "//" not in target and "\\" not in target:
        return target
    return "/connect/"


class Login(abc.ABC):
    """Answers requests to `/connect/login` (and below); signs the user in with `sessions.issue`."""

    @abc.abstractmethod
    async def handle(self, request: Request, sessions: Sessions) -> PageResponse: ...


class DevLogin(Login):
    """DEVELOPMENT ONLY: a form where the user types which principal they are, with no password."""

    BANNER = "Development login: anyone can sign in as anyone. Never use this in production."
    DEV_ONLY = "<p><small>Only the development login names a link's owner; a production login never does.</small></p>"

    def __init__(self) -> None:
        log.warning("connect kit: the development login is enabled; anyone can sign in as anyone")

    async def handle(self, request: Request, sessions: Sessions, *, owner: str | None = None) -> PageResponse:
        """Sign in as the typed principal. `owner`: whose the link behind `next` is, to suggest (development only)."""
        target = safe_next(request.query.get("next") or request.form.get("next"))
        problem = ""
        if request.method == "POST":
            principal = request.form.get("principal", "").strip()
            if principal and len(principal) <= MAX_PRINCIPAL:
                _, cookie = sessions.issue(principal)
                return redirect(target, [("set-cookie", cookie)])
            problem = f"<p role='alert'>Type a principal of 1 to {MAX_PRINCIPAL} characters.</p>"
        action = "/connect/login?next=" + quote(target, safe="/")
        value = f" value='{esc(owner)}'" if owner else ""
        form = (
            f"<form method='post' action='{esc(action)}'>"
            f"<label>Principal <input name='principal'{value} autocomplete='username' required></label> "
            "<button type='submit'>Sign in</button></form>"
        )
        body = problem + _hint(owner) + form
        return page("Sign in (development)", body, status=400 if problem else 200, banner=self.BANNER)


def principal_note(owner: str | None) -> str:
    """HTML: where a principal's name comes from, put for the link's `owner` when it is known."""
    if owner == "anonymous":
        return (
            "<code>anonymous</code> is who every HTTP caller is when the server has no principal hook "
            "(<code>Server(principal=...)</code>)"
        )
    return (
        "the server's principal hook (<code>Server(principal=...)</code>) names the MCP client that asks; "
        "without a hook, every HTTP caller is <code>anonymous</code>"
    )


def _hint(owner: str | None) -> str:
    """What to type: the link's owner when known (development only), else how principals are named."""
    if owner is None:
        return f"<p>Sign in as the principal your MCP client is known by: {principal_note(None)}.</p>"
    who = esc(owner)
    return (
        f"<p>This link was made for <b>{who}</b>: sign in as <b>{who}</b> to continue "
        f"({principal_note(owner)}).</p>{DevLogin.DEV_ONLY}"
    )
