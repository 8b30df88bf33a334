"""DPoP on the resource server (RFC 9449 §4.3 and §7, SEP-1932): a proof checked for every DPoP-bound token.

`OAuthResource(dpop="accept")` (the default) takes Bearer tokens as before and DPoP-bound tokens presented
as `Authorization: DPoP <token>` with a `DPoP` proof; `dpop="require"` takes only the latter and says so in
its metadata and challenges; `dpop="off"` takes Bearer only. A token whose claims bind it to a key
(`cnf.jkt`) is refused as Bearer, whatever the setting: a stolen bound token is useless without its key,
which is the point of DPoP.

A proof is accepted only if (`check_proof`): it is one compact JWS whose header has `typ` `dpop+jwt`, an
asymmetric `alg` from `ALGORITHMS`, and a public `jwk` (no private part); its signature verifies with that
key; `htm` is the request's method and `htu` the resource's URI (query and fragment never match); `iat` is
within `window_s` of now (60 s by default, either side); `ath` is the token's SHA-256; `jti` is a string;
and the key's RFC 7638 thumbprint is the token's `cnf.jkt`. With `DpopReplay(ledger)` a `jti` is accepted
once in its window, through the single-use ledger's backends (memory, SQLite, Redis), so a proof seen by
one instance is refused by every other (protocol.md P198). PyJWT does the JWS work; the rest is here
because no well-kept Python library checks DPoP proofs for a resource server.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any, Final, Literal
from urllib.parse import urlsplit

import jwt

from ..dpop_rules import thumbprint, token_hash
from ..server.exchange import Unauthenticated
from ..state import clock
from ..state.ledger import ClaimStatus, Ledger, LedgerError

DpopMode = Literal["accept", "require", "off"]
DPOP_MODES: Final = ("accept", "require", "off")
ALGORITHMS: Final = ("ES256", "ES384", "ES512", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA")
MAX_PROOF_CHARS: Final = 8192


def refused(message: str) -> Unauthenticated:
    return Unauthenticated(message, error="invalid_dpop_proof")


@dataclass(frozen=True, slots=True)
class Proof:
    """What a checked proof says: its `jti` (for replay protection) and when it was made."""

    jti: str
    iat: int


def check_proof(
    proof: str | None, *, method: str, uri: str, token: str, jkt: object, window_s: float, now: float | None = None
) -> Proof:
    """The checked proof of one request, or `Unauthenticated` (error `invalid_dpop_proof`) saying what failed."""
    if not proof or "," in proof or len(proof) > MAX_PROOF_CHARS:
        raise refused("a DPoP-bound token needs exactly one DPoP proof header")
    try:
        header = jwt.get_unverified_header(proof)
    except jwt.InvalidTokenError:
        raise refused("the DPoP proof is not a well-formed JWT") from None
    if header.get("typ") != "dpop+jwt":
        raise refused("the DPoP proof's typ must be dpop+jwt")
    alg = header.get("alg")
    if alg not in ALGORITHMS:
        raise refused(f"the DPoP proof's alg must be one of {' '.join(ALGORITHMS)}")
    jwk = header.get("jwk")
    if not isinstance(jwk, dict) or any(k in jwk for k in ("d", "p", "q", "dp", "dq", "qi", "k")):
        raise refused("the DPoP proof's jwk must be a public key")
    try:
        key = jwt.PyJWK(jwk, alg)
        claims: dict[str, Any] = jwt.decode(
            proof, key.key, algorithms=[alg], options={"verify_aud": False, "verify_exp": False, "verify_iat": False}
        )
    except (jwt.InvalidTokenError, jwt.PyJWKError, ValueError, TypeError):
        raise refused("the DPoP proof's signature does not verify with its jwk") from None
    if claims.get("htm") != method:
        raise refused("the DPoP proof's htm is not this request's method")
    htu = claims.get("htu")
    if not isinstance(htu, str) or _uri(htu) != _uri(uri) or "?" in htu or "#" in htu:
        raise refused("the DPoP proof's htu is not this resource's URI")
    iat = claims.get("iat")
    moment = clock.now() if now is None else now
    if not isinstance(iat, int) or abs(moment - iat) > window_s:
        raise refused(f"the DPoP proof's iat is not within {window_s:g} s of now")
    if claims.get("ath") != token_hash(token):
        raise refused("the DPoP proof's ath is not this access token's hash")
    jti = claims.get("jti")
    if not isinstance(jti, str) or not jti or len(jti) > 256:
        raise refused("the DPoP proof has no jti")
    if not isinstance(jkt, str) or thumbprint(jwk) != jkt:
        raise refused("the DPoP proof's key is not the one the token is bound to (cnf.jkt)")
    return Proof(jti, iat)


def bound_key(claims: dict[str, Any]) -> str | None:
    """The thumbprint a token is bound to (`cnf.jkt`), if it is bound."""
    cnf = claims.get("cnf")
    jkt = cnf.get("jkt") if isinstance(cnf, dict) else None
    return jkt if isinstance(jkt, str) and jkt else None


class DpopReplay:
    """Each proof's `jti` accepted once within its window, in a single-use ledger shared by every instance."""

    def __init__(self, ledger: Ledger) -> None:
        self.ledger = ledger

    async def first_use(self, proof: Proof, principal: str, window_s: float) -> None:
        token = hashlib.sha256(b"dpop-jti\0" + proof.jti.encode()).digest()
        try:
            claim = await self.ledger.claim(token, principal, proof.iat + 2 * window_s)
        except LedgerError:
            raise Unauthenticated("the DPoP proof cannot be checked for replay now; try again") from None
        if claim.status is not ClaimStatus.FRESH:
            raise refused("this DPoP proof was used before: send a fresh one")


def _uri(value: str) -> str:
    parts = urlsplit(value)
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}{parts.path.rstrip('/')}"
