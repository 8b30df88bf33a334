"""Opaque access tokens, checked at the authorization server's introspection endpoint (RFC 7662).

Baton authenticates itself to the endpoint with its client credentials (`client_secret_basic`, or
`client_secret_post`), and caches each answer briefly so a busy client does not cost one round trip
per request:

- the cache is keyed by the SHA-256 of the token (no token is kept in memory as a key or logged);
- an active answer is kept at most `cache_ttl_s` and never past the token's own `exp`;
- an inactive answer is kept `inactive_ttl_s` (a few seconds), so a flood of a bad token is cheap;
- at most `cache_size` answers, the least recently used evicted first.

A revoked token is therefore refused at the latest `cache_ttl_s` after revocation (protocol.md PAS8).
If the endpoint cannot be reached, or refuses Baton's credentials, the request is refused with 503
(`AuthUnavailable`, protocol.md PAS10): Baton fails closed, and does not call the client's token bad.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import quote

import httpx

from ..server.exchange import AuthUnavailable, Unauthenticated
from ..state import clock
from .resource_uri import require_https

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
    timeout_s: float = 5.0

    def __post_init__(self) -> None:
        require_https(self.url, "the introspection endpoint")
        if self.auth_method not in ("client_secret_basic", "client_secret_post"):
            raise ValueError(f"auth_method {self.auth_method!r}: use client_secret_basic or client_secret_post")
        if self.cache_size < 1 or self.cache_ttl_s < 0:
            raise ValueError("cache_size must be at least 1 and cache_ttl_s not negative")


class Introspector:
    """Introspects tokens with one `Introspection` configuration, through the bounded cache."""

    def __init__(self, config: Introspection) -> None:
        self.config = config
        self._cache: OrderedDict[bytes, tuple[float, dict[str, Any] | None]] = OrderedDict()
        self.calls = 0  # round trips to the endpoint (for tests and metrics)

    async def claims(self, token: str) -> dict[str, Any]:
        """The introspection answer of an active token, or `Unauthenticated`."""
        key = hashlib.sha256(token.encode()).digest()
        now = clock.now()
        hit = self._cache.get(key)
        if hit is not None and hit[0] > now:
            self._cache.move_to_end(key)
            answer = hit[1]
        else:
            answer = await self._ask(token)
            self._remember(key, answer, now)
        if answer is None:
            raise Unauthenticated("the token is not active (expired, revoked or unknown)")
        exp = answer.get("exp")
        if isinstance(exp, (int, float)) and exp <= now:
            raise Unauthenticated("the token has expired")
        return answer

    async def _ask(self, token: str) -> dict[str, Any] | None:
        cfg = self.config
        data = {"token": token, "token_type_hint": "access_token"}
        auth: httpx.BasicAuth | None = None
        if cfg.auth_method == "client_secret_basic":
            # RFC 6749 section 2.3.1: the id and secret are form-urlencoded before they are Base64-encoded.
            auth = httpx.BasicAuth(quote(cfg.client_id, safe=""), quote(cfg.client_secret, safe=""))
        else:
            data |= {"client_id": cfg.client_id, "client_secret": cfg.client_secret}
        self.calls += 1
        try:
            async with httpx.AsyncClient(timeout=cfg.timeout_s, auth=auth) as http:
                resp = await http.post(cfg.url, data=data, headers={"accept": "application/json"})
                resp.raise_for_status()
                body = resp.json()
        except (httpx.HTTPError, ValueError) as exc:
            # protocol.md PAS10: the token was not judged: 503, not 401 (a refusal of Baton's own
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

    def _remember(self, key: bytes, answer: dict[str, Any] | None, now: float) -> None:
        cfg = self.config
        ttl = cfg.cache_ttl_s if answer is not None else cfg.inactive_ttl_s
        until = now + ttl
        exp = answer.get("exp") if answer is not None else None
        if isinstance(exp, (int, float)):
            until = min(until, float(exp))
        if until <= now:
            return
        self._cache[key] = (until, answer)
        self._cache.move_to_end(key)
        while len(self._cache) > cfg.cache_size:
            self._cache.popitem(last=False)


def _why(exc: Exception) -> str:
    """What went wrong, for the log: the exception's type, and the status when the endpoint answered."""
    if isinstance(exc, httpx.HTTPStatusError):
        return f"HTTP {exc.response.status_code}"
    return type(exc).__name__
