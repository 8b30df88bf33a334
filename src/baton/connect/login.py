"""Logins for the connect pages: the pluggable `Login` interface and a development-only `DevLogin`.

A login answers `/connect/login` and, once it knows who the browser user is, sets the session
cookie with `sessions.issue(principal)`. `DevLogin` trusts whatever name is typed: it exists for
local development and tests only, says so on the page, and warns in the server log.
"""

from __future__ import annotations

import abc
import logging
from urllib.parse import quote

from .session import Sessions
from .web import Request, Response, esc, page, redirect

log = logging.getLogger("baton.connect")


def safe_next(target: str | None) -> str:
    """Only a path under /connect/ may be a post-login destination (no open redirects)."""
    if target and target.startswith("/connect/") and "//" not in target and "\\" not in target:
        return target
    return "/connect/"


class Login(abc.ABC):
    """Answers requests to `/connect/login` (and below); signs the user in with `sessions.issue`."""

    @abc.abstractmethod
    async def handle(self, request: Request, sessions: Sessions) -> Response: ...


class DevLogin(Login):
    """DEVELOPMENT ONLY: a form where the user types which principal they are, with no password."""

    BANNER = "Development login: anyone can sign in as anyone. Never use this in production."

    def __init__(self) -> None:
        log.warning("connect kit: the development login is enabled; anyone can sign in as anyone")

    async def handle(self, request: Request, sessions: Sessions) -> Response:
        target = safe_next(request.query.get("next") or request.form.get("next"))
        if request.method == "POST":
            principal = request.form.get("principal", "").strip()
            if principal and len(principal) <= 200:
                _, cookie = sessions.issue(principal)
                return redirect(target, [("set-cookie", cookie)])
        action = "/connect/login?next=" + quote(target, safe="/")
        form = (
            f"<form method='post' action='{esc(action)}'>"
            "<label>Principal <input name='principal' autocomplete='username' required></label> "
            "<button type='submit'>Sign in</button></form>"
        )
        return page("Sign in (development)", form, banner=self.BANNER)
