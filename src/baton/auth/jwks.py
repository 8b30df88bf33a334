"""An issuer's signing keys from its JWKS URL: cached, and refreshed (at most every `min_refresh_s`)
when a token names a key id the cache does not hold, so a key rotation is picked up without a restart
and a flood of made-up key ids cannot make the server hammer the issuer."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import httpx
import jwt

from ..server.exchange import Unauthenticated
from .resource_uri import require_https


class Jwks:
    """The key set at `url`, cached for `ttl_s`."""

    def __init__(self, url: str, ttl_s: float, min_refresh_s: float = 30.0) -> None:
        require_https(url, "the JWKS URL")  # configured or discovered: keys over plain http could be forged
        self.url = url
        self.ttl_s = ttl_s
        self.min_refresh_s = min_refresh_s
        self._keys: dict[str | None, tuple[Any, str | None]] = {}
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> tuple[Any, str | None]:
        """The public key `kid` names, with the `alg` its JWK publishes (None when it names none)."""
        now = time.monotonic()
        if kid in self._keys and now - self._fetched < self.ttl_s:
            return self._keys[kid]
        async with self._lock:
            if (kid not in self._keys or now - self._fetched >= self.ttl_s) and (
                now - self._fetched >= self.min_refresh_s or not self._keys
            ):
                await self._refresh()
        if kid not in self._keys:
            if kid is None and len(self._keys) == 1:
                return next(iter(self._keys.values()))
            raise Unauthenticated("the token's signing key is not in the issuer's key set")
        return self._keys[kid]

    async def _refresh(self) -> None:
        try:
            async with httpx.AsyncClient(timeout=10) as http:
                resp = await http.get(self.url)
                resp.raise_for_status()
                jwks = jwt.PyJWKSet.from_dict(resp.json())
        except (httpx.HTTPError, ValueError, jwt.PyJWKSetError) as exc:
            raise Unauthenticated(f"cannot load the issuer's key set ({type(exc).__name__})") from None
        published = {k.key_id: (k.key, _alg(k)) for k in jwks.keys}
        keys: dict[str | None, tuple[Any, str | None]] = {k: v for k, v in published.items() if k is not None}
        if not keys and jwks.keys:
            keys = {None: (jwks.keys[0].key, _alg(jwks.keys[0]))}
        self._keys = keys
        self._fetched = time.monotonic()


def _alg(jwk: jwt.PyJWK) -> str | None:
    """The `alg` a JWK itself publishes (PyJWT fills in a default for keys without one: not that)."""
    alg = jwk._jwk_data.get("alg")
    return alg if isinstance(alg, str) else None
