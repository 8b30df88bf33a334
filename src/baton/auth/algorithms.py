"""Which JWT signature algorithms Baton accepts, and which key each one may be verified with.

Only asymmetric algorithms: `none` and HMAC are refused when configured (`check_algorithms`). Before a
token's signature is checked, its header's `alg` must be one of the configured algorithms and must fit
the key it names (`fits`): an RSA key for `RS*`/`PS*`, an EC key on the algorithm's curve for `ES*`, an
Ed25519/Ed448 key for `EdDSA`, and the JWK's own `alg` when it publishes one. A token whose header pairs
an algorithm with the wrong kind of key is then an invalid token (401), never an error inside PyJWT.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa

DEFAULT_ALGORITHMS = ("RS256", "PS256", "ES256", "EdDSA")

_CURVES = {"ES256": "secp256r1", "ES384": "secp384r1", "ES512": "secp521r1", "ES256K": "secp256k1"}


def check_algorithms(algorithms: Sequence[str]) -> None:
    """Refuse (`ValueError`) a configuration that accepts `none` or a symmetric (HMAC) algorithm."""
    bad = [a for a in algorithms if a.lower() == "none" or a.upper().startswith("HS")]
    if bad:
        raise ValueError(f"refusing algorithms {bad}: use asymmetric signatures")


def fits(alg: str, key: Any, jwk_alg: str | None = None) -> bool:
    """Whether a token signed with `alg` may be verified with `key` (a `cryptography` public key, or a
    PEM string, which PyJWT loads and checks itself); `jwk_alg` is the key's published `alg`, if any."""
    if jwk_alg is not None and jwk_alg != alg:
        return False
    if isinstance(key, (str, bytes)):
        return True  # a configured PEM key: PyJWT parses it for `alg` and refuses a mismatch
    if alg.startswith(("RS", "PS")):
        return isinstance(key, rsa.RSAPublicKey)
    if alg in _CURVES:
        return isinstance(key, ec.EllipticCurvePublicKey) and key.curve.name == _CURVES[alg]
    if alg == "EdDSA":
        return isinstance(key, (ed25519.Ed25519PublicKey, ed448.Ed448PublicKey))
    return False
