"""`AuthPool`: the HTTP/1.1 connection pool of a client that logs in, so every request of both eras carries the token.

Both eras' transports send every request through their pool (a 2026 POST; a 2025-11-25 session's
POSTs, its GET streams and their resumption, its DELETE), so the `Authorization` line is added here,
once, and a 401 or 403 `insufficient_scope` is handled here: the response is released, `LoginState`
renews the token (possibly through the browser), and the same request bytes are sent again. A plain
`Pool` (no `auth`) is untouched: the hot path without auth is the same code as before.

The transports bound a request with `pool.limit(seconds)`. Here the limit is paused while a login
runs, since a person's time in the browser is not the server's, and resumes with the time that was
left; the login is bounded instead by `OAuth(http_timeout_s=...)` (its exchanges) and
`OAuth(login_timeout_s=...)` (the browser), see `limits` (protocol.md P49).
"""

from __future__ import annotations

import asyncio
import contextvars

from ..deadline import person_time
from ..http11 import Pool, Response, Url
from .config import OAuth
from .limits import paused
from .login import Attempts, LoginState, wants_login
from .machine import ProgramLogin
from .rules import may_carry_tokens

_LIMIT: contextvars.ContextVar[tuple[asyncio.Task[object] | None, asyncio.Timeout] | None] = contextvars.ContextVar(
    "baton_oauth_limit", default=None
)


class AuthPool(Pool):
    """A `Pool` that sends the login's token and renews it when the server asks."""

    def __init__(self, login: LoginState) -> None:
        super().__init__()
        self.login = login

    def limit(self, seconds: float | None) -> asyncio.Timeout:
        """`asyncio.timeout(seconds)`, which a login in this task may pause."""
        timeout = asyncio.timeout(seconds)
        _LIMIT.set((asyncio.current_task(), timeout))
        return timeout

    async def send(self, url: Url, method: str, headers: bytes, body: bytes) -> Response:
        login = self.login
        sent = await login.current()

        async def send_as_logged_in() -> Response:  # the current token, and a fresh DPoP proof if it is bound
            return await super(AuthPool, self).send(url, method, headers + sent + login.proof(method, url), body)

        resp = await send_as_logged_in()
        attempts: Attempts | None = None
        while resp.status in (401, 403):
            if login.nonce_asked(resp.headers.get("www-authenticate"), resp.headers.get("dpop-nonce"), url):
                resp.release()  # the server wants its nonce in the proof (RFC 9449 §9): the same request again
                resp = await send_as_logged_in()
                continue
            challenge = wants_login(resp.status, resp.headers.get("www-authenticate"))
            if challenge is None:
                return resp
            if attempts is None:
                attempts = Attempts()
            resp.release()
            with paused(_own_limit()), person_time():  # the client's deadline too (protocol.md P90)
                renewed = await login.recover(resp.status, challenge, sent, attempts, interactive=method != "DELETE")
            if renewed is None:  # nothing more to try: the server's refusal again, to be read by the caller
                return await send_as_logged_in()
            sent = renewed
            resp = await send_as_logged_in()
        return resp


def _own_limit() -> asyncio.Timeout | None:
    """This task's own request limit, if one is running: a task started inside another's limit inherits the
    variable, and only the task's own limit may be paused."""
    limit = _LIMIT.get()
    return limit[1] if limit is not None and limit[0] is asyncio.current_task() else None


def auth_pool(auth: OAuth | ProgramLogin, server_url: str) -> AuthPool:
    """The connection pool of an HTTP transport to `server_url`, logging in with `auth` when the server asks.

    ValueError for a server a token would reach in clear text: plain http to another computer.
    """
    if not may_carry_tokens(server_url):
        raise ValueError(
            f"auth= sends bearer tokens, which must not cross the network in clear text: {server_url!r} "
            "is neither https nor http to this computer"
        )
    return AuthPool(LoginState(auth, server_url))
