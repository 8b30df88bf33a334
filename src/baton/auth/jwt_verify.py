"""Verifying a JWT access token with PyJWT: signature (a configured public key or the issuer's JWKS),
`iss`, `exp` (required), `nbf`, with a small leeway, and `aud` compared as resource URIs
(`claims.check_audience`). Which algorithms, and which key fits which, is `algorithms.py`: a header
whose `alg` does not fit the key is refused before PyJWT sees it, and any error PyJWT raises on a
malformed token (`TypeError` and `ValueError` included) is an invalid token, never a server error.

The client is told why in fixed words (`refusal`): expired, not yet valid, bad signature, another
issuer, a missing claim, malformed. PyJWT's own text (which can quote object reprs) is logged at
debug level only, with the token cut out."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

import jwt

from ..server.exchange import Unauthenticated
from .algorithms import DEFAULT_ALGORITHMS, check_algorithms, fits
from .claims import check_audience
from .jwks import Jwks

__all__ = ["DEFAULT_ALGORITHMS", "JwtVerifier", "refusal"]

log = logging.getLogger("baton.auth")

_REFUSALS: tuple[tuple[type[Exception], str], ...] = (
    (jwt.ExpiredSignatureError, "the token has expired"),
    (jwt.ImmatureSignatureError, "the token is not yet valid"),
    (jwt.InvalidSignatureError, "the token's signature does not verify"),
    (jwt.InvalidIssuerError, "the token was issued by another authorization server"),
    (jwt.InvalidAudienceError, "the token was issued for another audience"),
    (jwt.InvalidAlgorithmError, "the token's signature algorithm is not accepted"),
)


def refusal(exc: Exception) -> str:
    """What the client is told about a token PyJWT refused: fixed words, never the library's text."""
    if isinstance(exc, jwt.MissingRequiredClaimError):
        return f"the token has no {exc.claim!r} claim"
    for kind, words in _REFUSALS:
        if isinstance(exc, kind):
            return words
    return "the token is malformed"


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
            raise _refused(exc, token) from None
        kid, alg = header.get("kid"), header.get("alg")
        if kid is not None and not isinstance(kid, str):
            raise Unauthenticated("the token's key id is not a string")
        if not isinstance(alg, str) or alg not in self.algorithms:
            raise Unauthenticated("the token's signature algorithm is not accepted")
        verify_key, jwk_alg = (self.key, None) if self.jwks is None else await self.jwks.key(kid)
        if not fits(alg, verify_key, jwk_alg):
            raise Unauthenticated("the token's algorithm does not fit its signing key")
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
            raise _refused(exc, token) from None
        check_audience(claims, self.audiences)
        return claims


def _refused(exc: Exception, token: str) -> Unauthenticated:
    words = refusal(exc)
    log.debug("JWT refused (%s): %s: %s", words, type(exc).__name__, str(exc).replace(token, "<token>"))
    return Unauthenticated(words)
