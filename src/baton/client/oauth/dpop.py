"""DPoP on the client (RFC 9449, SEP-1932): a key per login, proofs at the token endpoint and on every request.

A login that uses DPoP holds one EC P-256 key (`DpopKey`), made when the login starts and kept with the
tokens it binds (its private JWK is stored beside them, in the same store only the user can read, so a
token restored from a file still has its key). Each HTTP request carries a fresh proof: a JWT signed by
that key, `typ` `dpop+jwt`, the public key in its `jwk` header, and the claims `jti` (random), `htm` (the
method), `htu` (the URL without query and fragment), `iat`, and, towards the resource server, `ath`
(the base64url SHA-256 of the access token); plus `nonce` once a server has asked for one
(`use_dpop_nonce` with a `DPoP-Nonce` header), remembered per server. When a login uses DPoP is P197.
"""

from __future__ import annotations

import json
import secrets
from typing import Any, Final
from urllib.parse import urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from ...dpop_rules import htu as proof_uri
from ...dpop_rules import thumbprint, token_hash
from ...state import clock

ALG: Final = "ES256"
NONCE_ERROR: Final = "use_dpop_nonce"


class DpopKey:
    """The key a login proves possession of; `jwk()` is its public half, `thumbprint` RFC 7638's."""

    def __init__(self, key: ec.EllipticCurvePrivateKey | None = None) -> None:
        self._key = key if key is not None else ec.generate_private_key(ec.SECP256R1())
        public: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(self._key.public_key()))
        self._public = {k: public[k] for k in ("crv", "kty", "x", "y")}
        self.thumbprint = str(thumbprint(self._public))
        self.nonces: dict[str, str] = {}  # per server origin: the last nonce it gave

    def jwk(self) -> dict[str, str]:
        return dict(self._public)

    def to_json(self) -> dict[str, Any]:
        """The private JWK, to keep with the tokens it binds (never logged)."""
        data: dict[str, Any] = json.loads(ECAlgorithm.to_jwk(self._key))
        return data

    @classmethod
    def from_json(cls, data: object) -> DpopKey | None:
        if not isinstance(data, dict):
            return None
        try:
            key = ECAlgorithm.from_jwk(json.dumps(data))
        except (ValueError, KeyError, TypeError, jwt.InvalidKeyError):
            return None
        return cls(key) if isinstance(key, ec.EllipticCurvePrivateKey) else None

    def proof(self, method: str, url: str, access_token: str | None = None) -> str:
        """A fresh proof for one request to `url`; with `access_token`, bound to it by `ath`."""
        htu = proof_uri(url)
        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(16), "htm": method.upper(), "htu": htu}
        claims["iat"] = int(clock.now())
        if access_token is not None:
            claims["ath"] = token_hash(access_token)
        nonce = self.nonces.get(_origin(htu))
        if nonce is not None:
            claims["nonce"] = nonce
        return jwt.encode(claims, self._key, algorithm=ALG, headers={"typ": "dpop+jwt", "jwk": self._public})

    def remember_nonce(self, url: str, nonce: str | None) -> bool:
        """Keep the nonce a server at `url` gave; whether it is new (worth a retry)."""
        if not nonce or len(nonce) > 512:
            return False
        origin = _origin(url)
        known = self.nonces.get(origin)
        self.nonces[origin] = nonce
        return known != nonce

    def __repr__(self) -> str:
        return f"DpopKey(thumbprint={self.thumbprint!r})"


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()
