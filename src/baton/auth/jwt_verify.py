"""Verifying a JWT access token with PyJWT: signature (a configured public key or the issuer's JWKS),
`iss`, `exp` (required), `nbf`, with a small leeway, and `aud` compared as resource URIs
(`claims.check_audience`). Only asymmetric algorithms: `none` and HMAC are refused when configured."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jwt

from ..server.exchange import Unauthenticated
from .claims import check_audience
from .jwks import Jwks

DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")


def check_algorithms(algorithms: Sequence[str]) -> None:
    bad = [a for a in algorithms if a.lower() == "none" or a.upper().startswith("HS")]
    if bad:
        raise ValueError(f"refusing algorithms {bad}: use asymmetric signatures")


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
            kid = jwt.get_unverified_header(token).get("kid")
            if kid is not None and not isinstance(kid, str):
                raise Unauthenticated("the bearer token was refused: its key id is not a string")
            verify_key = self.key if self.jwks is None else await self.jwks.key(kid)
            claims: dict[str, Any] = jwt.decode(
                token,
                verify_key,
                algorithms=self.algorithms,
                issuer=self.issuer,
                leeway=self.leeway_s,
                options={"require": self.required, "verify_aud": False},
            )
        except jwt.PyJWTError as exc:
            raise Unauthenticated(f"the bearer token was refused: {exc}") from None
        check_audience(claims, self.audiences)
        return claims
