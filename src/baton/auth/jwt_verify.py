"""Verifying a JWT access token with PyJWT: signature (a configured public key or the issuer's JWKS),
`iss`, `exp` (required), `nbf`, with a small leeway, and `aud` compared as resource URIs
(`claims.check_audience`). Which algorithms, and which key fits which, is `algorithms.py`: a header
whose `alg` does not fit the key is refused before PyJWT sees it, and any error PyJWT raises on a
malformed token (`TypeError` and `ValueError` included) is an invalid token, never a server error."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jwt

from ..server.exchange import Unauthenticated
from .algorithms import DEFAULT_ALGORITHMS, check_algorithms, fits
from .claims import check_audience
from .jwks import Jwks

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier"]


class JwtVerifier:
    """Verifies JWTs of one issuer for one or more audiences; `claims(token)` or `Unauthenticated`."""

    def __init__(
        self,
        *,
        issuer: str,
        audiences: Sequence[str],
        key: Any = None,
        jwks_url: str | None = None,
        algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
        required: Sequence[str] = ("exp", "iss", "aud", "sub"),
        leeway_s: float = 30.0,
        jwks_ttl_s: float = 600.0,
    ) -> None:
        if (key is None) == (jwks_url is None):
            raise ValueError("give exactly one of key= (a public key) or jwks_url=")
        check_algorithms(algorithms)
        self.issuer = issuer
        self.audiences = tuple(audiences)
        self.key = key
        self.jwks = Jwks(jwks_url, jwks_ttl_s) if jwks_url is not None else None
        self.algorithms = list(algorithms)
        self.required = list(required)
        self.leeway_s = leeway_s

    async def claims(self, token: str) -> dict[str, Any]:
        try:
            header = jwt.get_unverified_header(token)
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            raise Unauthenticated(f"the bearer token was refused: {exc}") from None
        kid, alg = header.get("kid"), header.get("alg")
        if kid is not None and not isinstance(kid, str):
            raise Unauthenticated("the bearer token was refused: its key id is not a string")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise Unauthenticated("the bearer token was refused: its signature algorithm is not accepted")
        verify_key, jwk_alg = (self.key, None) if self.jwks is None else await self.jwks.key(kid)
        if not fits(alg, verify_key, jwk_alg):
            raise Unauthenticated("the bearer token was refused: its algorithm does not fit its signing key")
        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                verify_key,
                algorithms=[alg],
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": self.required, "verify_aud": False},
            )
        except (jwt.PyJWTError, TypeError, ValueError) as exc:
            raise Unauthenticated(f"the bearer token was refused: {exc}") from None
        check_audience(claims, self.audiences)
        return claims
