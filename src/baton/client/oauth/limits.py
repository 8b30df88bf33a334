"""What bounds the HTTP of a login: the size of every answer, the time of the exchanges, how much is tried.

Every request the login makes itself (metadata, registration, the code exchange, the refresh) goes
through `capped_client()` or `oauth_client()`: `baton.oauth_http`'s clients, which refuse a response body
larger than 256 KiB (an AuthError here), bound each connect and each read (10 s), follow no redirect
and read no proxy from the environment. `bounded(seconds)` bounds them all together: one `asyncio.timeout`
over one recovery's discovery, registration, refresh and code exchange (`OAuth(http_timeout_s=60)`),
paused (`paused`) while the person is at the browser, which `OAuth(login_timeout_s=300)` bounds
instead. A PRM names at most `MAX_AUTHORIZATION_SERVERS` that are tried (protocol.md P49).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator
from typing import Any

import httpx

from ...extras import MissingExtra
from ...oauth_http import async_client, oauth2_client, oauth_error_class
from ..errors import AuthError

MAX_AUTHORIZATION_SERVERS = 3


def capped_client() -> httpx.AsyncClient:
    """An httpx client for discovery and registration: `baton.oauth_http`'s, a body over its cap an AuthError."""

    return async_client(too_large=AuthError)


def oauth_client(**params: Any) -> Any:
    """Authlib's client for the code exchange and the refresh (`params`), over the same bounds."""

    try:
        return oauth2_client(too_large=AuthError, **params)
    except MissingExtra as exc:
        raise AuthError(str(exc)) from None


def oauth_errors() -> type[Exception]:
    """What Authlib's client raises for a refused exchange or refresh; an AuthError when it is not installed."""
    try:
        return oauth_error_class()
    except MissingExtra as exc:
        raise AuthError(str(exc)) from None


@contextlib.contextmanager
def paused(timeout: asyncio.Timeout | None) -> Iterator[None]:
    """Stops `timeout` while the block runs (the person at the browser); restores the time that was left."""
    loop = asyncio.get_running_loop()
    when = timeout.when() if timeout is not None else None
    if timeout is None or when is None:
        yield
        return
    left = max(0.0, when - loop.time())
    try:
        timeout.reschedule(None)
    except RuntimeError:  # not an active limit any more: nothing to pause
        yield
        return
    try:
        yield
    finally:
        with contextlib.suppress(RuntimeError):
            timeout.reschedule(loop.time() + left)
