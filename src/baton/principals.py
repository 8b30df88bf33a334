"""Who is calling: principal hooks that read identity from the transport, never from the client's words.

- `bearer_jwt(...)`: verify `Authorization: Bearer <JWT>` (HTTP) with a configured key or a JWKS URL,
  checking signature, issuer, audience and expiry (PyJWT); a missing or bad token is refused (401).
- `os_user()`: the operating-system user running the server, for stdio (the default there).
- `anonymous()`: an explicit anonymous principal, for local development on HTTP (the default there).

Pass one as `Server(principal=...)`. What a client says about itself (`clientInfo`) is never used.
"""

from __future__ import annotations

import asyncio
import getpass
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import httpx
import jwt

from .server.exchange import RequestInfo, Unauthenticated

PrincipalHook = Callable[[RequestInfo], "str | Awaitable[str | None] | None"]
DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")


def anonymous(name: str = "anonymous") -> PrincipalHook:
    """Everyone is the same principal: for local development only."""

    def hook(info: RequestInfo) -> str:
        return name

    return hook


def os_user() -> PrincipalHook:
    """The OS user that runs the server (for stdio, where the user started the process)."""
    user = "os:" + getpass.getuser()

    def hook(info: RequestInfo) -> str:
        return user

    return hook


class _Jwks:
    """A JWKS fetched from a URL, cached, and refreshed (at most every `min_refresh_s`) on an unknown kid."""

    def __init__(self, url: str, ttl_s: float, min_refresh_s: float = 30.0) -> None:
        self.url = url
        self.ttl_s = ttl_s
        self.min_refresh_s = min_refresh_s
        self._keys: dict[str, Any] = {}
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def key(self, kid: str | None) -> Any:
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
        self._keys = {k.key_id: k.key for k in jwks.keys if k.key_id is not None}
        if not self._keys and jwks.keys:
            self._keys = {None: jwks.keys[0].key}  # type: ignore[dict-item]
        self._fetched = time.monotonic()


def bearer_jwt(
    *,
    issuer: str,
    audience: str | Sequence[str],
    key: Any = None,
    jwks_url: str | None = None,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    claim: str = "sub",
    leeway_s: float = 30.0,
    jwks_ttl_s: float = 600.0,
) -> PrincipalHook:
    """Verify `Authorization: Bearer <JWT>`: signature (a `key` or the issuer's `jwks_url`), `iss`,
    `aud`, `exp` (required) and `nbf`; the principal is `<issuer>|<claim>`. Symmetric algorithms and
    `none` are not accepted."""
    if (key is None) == (jwks_url is None):
        raise ValueError("give exactly one of key= (a public key) or jwks_url=")
    bad = [a for a in algorithms if a.lower() == "none" or a.startswith("HS")]
    if bad:
        raise ValueError(f"refusing algorithms {bad}: use asymmetric signatures")
    jwks = _Jwks(jwks_url, jwks_ttl_s) if jwks_url is not None else None

    async def hook(info: RequestInfo) -> str:
        header = (info.headers.get("authorization") if info.headers is not None else None) or ""
        scheme, _, token = header.strip().partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("a bearer token is required", error="invalid_request")
        token = token.strip()
        try:
            kid = jwt.get_unverified_header(token).get("kid")
            verify_key = key if jwks is None else await jwks.key(kid)
            claims = jwt.decode(
                token,
                verify_key,
                algorithms=list(algorithms),
                audience=audience,
                issuer=issuer,
                leeway=leeway_s,
                options={"require": ["exp", "iss", "aud", claim]},
            )
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the bearer token was refused: {exc}") from None
        subject = claims.get(claim)
        if not isinstance(subject, str) or not subject:
            raise Unauthenticated(f"the bearer token has no {claim!r} claim")
        return f"{issuer}|{subject}"

    return hook


__all__ = ["PrincipalHook", "Unauthenticated", "anonymous", "bearer_jwt", "os_user"]
