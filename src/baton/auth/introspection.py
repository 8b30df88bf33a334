"""Opaque access tokens, checked at the authorization server's introspection endpoint (RFC 7662).

Baton authenticates itself to the endpoint with its client credentials (`client_secret_basic`, or
`client_secret_post`), over one long-lived HTTP client (closed with the server), and caches each
answer briefly so a busy client does not cost one round trip per request:

- the caches are keyed by the SHA-256 of the token (no token is kept in memory as a key or logged);
- an active answer is kept at most `cache_ttl_s` and never past the token's own `exp`, at most
  `cache_size` of them, the least recently used evicted first;
- an inactive answer is kept `inactive_ttl_s` (a few seconds) in a separate, smaller cache
  (`inactive_cache_size`), so a flood of bad tokens is cheap and cannot evict the good answers;
- concurrent requests with the same token share one round trip.

A revoked token is therefore refused at the latest `cache_ttl_s` after revocation (protocol.md P44).
If the endpoint cannot be reached, or refuses Baton's credentials, the request is refused with 503
(`AuthUnavailable`, protocol.md P46): Baton fails closed, and does not call the client's token bad.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx

from ..oauth_http import async_client
from ..server.exchange import AuthUnavailable, Unauthenticated
from ..state import clock
from .resource_uri import require_https
from .ttl_cache import TtlCache

Introspected = dict[str, Any] | None
"""An active token's introspection answer, or None for an inactive one."""

log = logging.getLogger("baton.auth")


@dataclass
class Introspection:
    """Where and how to introspect tokens (RFC 7662): the endpoint, Baton's client credentials there,
    and the cache's bounds."""

    url: str
    client_id: str
    client_secret: str = field(repr=False)
    auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    cache_ttl_s: float = 60.0
    inactive_ttl_s: float = 5.0
    cache_size: int = 4096
    inactive_cache_size: int = 1024
    timeout_s: float = 5.0

    def __post_init__(self) -> None:
        require_https(self.url, "the introspection endpoint")
        if self.auth_method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(f"auth_method {self.auth_method!r}: use client_secret_basic or client_secret_post")
        if self.cache_size < 1 or self.inactive_cache_size < 1 or self.cache_ttl_s < 0:
            raise ValueError("cache_size and inactive_cache_size must be at least 1, cache_ttl_s not negative")


class Introspector:
    """Introspects tokens with one `Introspection` configuration, through the bounded caches."""

    def __init__(self, config: Introspection) -> None:
        self.config = config
        self._active: TtlCache[bytes, dict[str, Any]] = TtlCache(config.cache_size)
        self._inactive: TtlCache[bytes, None] = TtlCache(config.inactive_cache_size)
        self._pending: dict[bytes, asyncio.Task[Introspected]] = {}
        self._http: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.calls = 0  # round trips to the endpoint (for tests and metrics)

    async def claims(self, token: str) -> dict[str, Any]:
        """The introspection answer of an active token; `Unauthenticated` for an inactive one,
        `AuthUnavailable` when the endpoint cannot say."""
        key = hashlib.sha256(token.encode()).digest()
        now = clock.now()
        hit = self._active.get(key, now) or self._inactive.get(key, now)
        answer = hit[0] if hit is not None else await self._shared(key, token)
        if answer is None:
            raise Unauthenticated("the token is not active (expired, revoked or unknown)")
        exp = answer.get("exp")
        if isinstance(exp, (int, float)) and exp <= now:
            raise Unauthenticated("the token has expired")
        return answer

    async def aclose(self) -> None:
        """Close the HTTP client (the server calls this at shutdown)."""
        http, self._http = self._http, None
        if http is not None and self._loop is asyncio.get_running_loop():
            await http.aclose()

    async def _shared(self, key: bytes, token: str) -> Introspected:
        """The endpoint's answer, asked once for all concurrent requests with this token."""
        loop = asyncio.get_running_loop()
        task = self._pending.get(key)
        if task is None or task.get_loop() is not loop:
            task = self._pending[key] = loop.create_task(self._ask_and_remember(key, token))
            task.add_done_callback(lambda done: self._settled(key, done))
        return await asyncio.shield(task)

    def _settled(self, key: bytes, task: asyncio.Task[Introspected]) -> None:
        if self._pending.get(key) is task:
            del self._pending[key]
        if not task.cancelled():
            task.exception()  # retrieved here, so a task whose waiters all left logs no warning

    async def _ask_and_remember(self, key: bytes, token: str) -> Introspected:
        answer = await self._ask(token)
        self._remember(key, answer, clock.now())
        return answer

    def _client(self) -> httpx.AsyncClient:
        """The long-lived client (a new one if the event loop changed, as between `asyncio.run` calls)."""
        loop = asyncio.get_running_loop()
        if self._http is None or self._loop is not loop:
            cfg = self.config
            auth: httpx.BasicAuth | None = None
            if cfg.auth_method == "client_secret_basic":
                # RFC 6749 section 2.3.1: the id and secret are form-urlencoded before they are Base64-encoded.
                auth = httpx.BasicAuth(quote(cfg.client_id, safe=""), quote(cfg.client_secret, safe=""))
            self._http = async_client(timeout_s=cfg.timeout_s, auth=auth)
            self._loop = loop
        return self._http

    async def _ask(self, token: str) -> Introspected:
        cfg = self.config
        data = {"token": token, "token_type_hint": "access_token"}
        if cfg.auth_method == "client_secret_post":  # else the client sends Basic credentials
            data |= {"client_id": cfg.client_id, "client_secret": cfg.client_secret}
        self.calls += 1
        try:
            resp = await self._client().post(cfg.url, data=data, headers={"accept": "application/json"})
            resp.raise_for_status()
            body = resp.json()
        except (httpx.HTTPError, ValueError) as exc:
            # protocol.md P46: the token was not judged: 503, not 401 (a refusal of Baton's own
            # credentials too: that is the operator's to fix, not the client's).
            log.warning("token introspection at %s failed: %s", cfg.url, _why(exc))
            raise AuthUnavailable("the token cannot be checked now (introspection failed)") from None
        if not isinstance(body, dict):
            log.warning("token introspection at %s answered no JSON object", cfg.url)
            raise AuthUnavailable("the token cannot be checked now (introspection answered no object)")
        if body.get("active") is not True:
            return None
        if body.get("token_type") not in (None, "access_token", "Bearer", "bearer"):
            return None  # a refresh token is not an access token
        return body

    def _remember(self, key: bytes, answer: Introspected, now: float) -> None:
        cfg = self.config
        if answer is None:
            self._inactive.put(key, None, now + cfg.inactive_ttl_s, now)
            return
        until = now + cfg.cache_ttl_s
        exp = answer.get("exp")
        if isinstance(exp, (int, float)):
            until = min(until, float(exp))
        self._active.put(key, answer, until, now)


def _why(exc: Exception) -> str:
    """What went wrong, for the log: the exception's type, and the status when the endpoint answered."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    return type(exc).__name__
