"""An issuer's signing keys from its JWKS URL, cached, and refreshed so that a key rotation is picked up
without a restart while an outage of the issuer costs as little as it can (protocol.md P46):

- a cached key is returned at once, without a lock, while the set is fresh (`ttl_s`); once it is
  stale it is still returned at once and one refresh is started in the background;
- a key id the cache does not hold triggers a refresh (at most every `min_refresh_s`, so a flood of
  made-up key ids cannot make the server hammer the issuer), and the request waits for it;
- concurrent requests share the one refresh in flight (and a request for an unknown key waits for
  one already running), never queue one after another;
- a failed refresh keeps the cached keys, is logged, and is not retried for `retry_s`;
- a token whose key is not cached while the issuer cannot be reached is `AuthUnavailable` (503): the
  token was not judged. A key the issuer's current set does not hold is `Unauthenticated` (401).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from typing import Any

import httpx
import jwt

from ..oauth_http import async_client
from ..server.exchange import AuthUnavailable, Unauthenticated
from .resource_uri import require_https

log = logging.getLogger("baton.auth")

CachedKey = tuple[Any, "str | None"]
"""A public key and the `alg` its JWK publishes (None when it names none)."""


class Jwks:
    """The key set at `url`, cached for `ttl_s`."""

    def __init__(
        self, url: str, ttl_s: float, min_refresh_s: float = 30.0, retry_s: float = 5.0, timeout_s: float = 10.0
    ) -> None:
        require_https(url, "the JWKS URL")  # configured or discovered: keys over plain http could be forged
        self.url = url
        self.ttl_s = ttl_s
        self.min_refresh_s = min_refresh_s
        self.retry_s = retry_s
        self.timeout_s = timeout_s
        self._keys: dict[str | None, CachedKey] = {}
        self._loaded = -math.inf  # time.monotonic() of the last successful load
        self._failed = -math.inf  # of the last failed one (a failure after the last success: the issuer is down)
        self._refresh: asyncio.Task[None] | None = None
        self.fetches = 0  # attempts to load the set (for tests and metrics)

    async def key(self, kid: str | None) -> CachedKey:
        """The public key `kid` names, with the `alg` its JWK publishes; `Unauthenticated` when the
        issuer's set has no such key, `AuthUnavailable` when it cannot be loaded to find out."""
        entry = self._lookup(kid)
        now = time.monotonic()
        if entry is not None:
            if now - self._loaded >= self.ttl_s and self._due(now, known=True):
                self._start()  # stale: refresh in the background, answer from the cache now
            return entry
        if self._due(now, known=False) or self._in_flight():
            await asyncio.shield(self._start())
            entry = self._lookup(kid)
            if entry is not None:
                return entry
        if self._failed > self._loaded:
            raise AuthUnavailable("the authorization server's signing keys cannot be loaded now")
        raise Unauthenticated("the token's signing key is not in the issuer's key set")

    def _lookup(self, kid: str | None) -> CachedKey | None:
        entry = self._keys.get(kid)
        if entry is None and kid is None and len(self._keys) == 1:
            return next(iter(self._keys.values()))  # a token without `kid`, an issuer with one key
        return entry

    def _due(self, now: float, *, known: bool) -> bool:
        """Whether to ask the issuer now: not while backing off from a failure; for an unknown key id,
        not within `min_refresh_s` of the last load."""
        if self._failed > self._loaded and now - self._failed < self.retry_s:
            return False
        return known or now - self._loaded >= self.min_refresh_s

    def _in_flight(self) -> bool:
        task = self._refresh
        return task is not None and not task.done() and task.get_loop() is asyncio.get_running_loop()

    def _start(self) -> asyncio.Task[None]:
        """The refresh in flight on this event loop, started if there is none."""
        task = self._refresh
        loop = asyncio.get_running_loop()
        if task is None or task.done() or task.get_loop() is not loop:
            task = self._refresh = loop.create_task(self._load())
        return task

    async def _load(self) -> None:
        self.fetches += 1
        try:
            async with async_client(timeout_s=self.timeout_s) as http:
                resp = await http.get(self.url, headers={"accept": "application/json"})
                resp.raise_for_status()
                keys = _parse(resp.json())
        except (httpx.HTTPError, ValueError, TypeError) as exc:
            self._failed = time.monotonic()
            held = "keeping the cached keys" if self._keys else "no keys cached"
            log.warning("cannot load the key set at %s (%s); %s", self.url, type(exc).__name__, held)
            return
        self._keys = keys
        self._loaded = time.monotonic()


def _parse(document: Any) -> dict[str | None, CachedKey]:
    """The signing keys of a JWKS document by key id (`ValueError` if it is not one); keys PyJWT cannot
    use, or marked for encryption, are skipped. Without key ids, the first key stands under None."""
    items = document.get("keys") if isinstance(document, dict) else None
    if not isinstance(items, list):
        raise ValueError("not a JWK set")
    keys: dict[str | None, CachedKey] = {}
    for item in items:
        if not isinstance(item, dict) or item.get("use", "sig") != "sig":
            continue
        try:
            key = jwt.PyJWK.from_dict(item).key
        except (jwt.PyJWTError, ValueError, TypeError, KeyError):
            continue
        kid, alg = item.get("kid"), item.get("alg")
        entry = (key, alg if isinstance(alg, str) else None)
        if isinstance(kid, str):
            keys[kid] = entry
        elif not keys:
            keys[None] = entry
    if len(keys) > 1:
        keys.pop(None, None)
    return keys
