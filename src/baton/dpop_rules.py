"""What a DPoP proof's parts are (RFC 9449, RFC 7638), the one definition both sides compute.

The client makes proofs (`baton.client.oauth.dpop`) and the resource server checks them
(`baton.auth.dpop`); both need the same three values, and a difference between them would be a proof
the server refuses: a public JWK's thumbprint (`cnf.jkt`), an access token's hash (`ath`), and the
request URI a proof names (`htu`, without query and fragment). PyJWT signs and verifies the JWS; it
computes none of these.
"""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any, Final
from urllib.parse import urlsplit, urlunsplit

# RFC 7638 §3.2: the required members of each key type, the only ones hashed.
_THUMBPRINT_MEMBERS: Final = {"EC": ("crv", "kty", "x", "y"), "RSA": ("e", "kty", "n"), "OKP": ("crv", "kty", "x")}


def b64url(raw: bytes) -> str:
    """Base64url without padding, as JOSE writes every binary value."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def thumbprint(jwk: dict[str, Any]) -> str | None:
    """The RFC 7638 SHA-256 thumbprint of a public JWK; None for a key type it does not cover."""
    members = _THUMBPRINT_MEMBERS.get(str(jwk.get("kty")))
    if members is None or any(not isinstance(jwk.get(m), str) for m in members):
        return None
    canonical = json.dumps({m: jwk[m] for m in members}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def token_hash(access_token: str) -> str:
    """A proof's `ath`: the base64url SHA-256 of the access token's ASCII bytes."""
    return b64url(hashlib.sha256(access_token.encode("ascii", "replace")).digest())


def htu(url: str) -> str:
    """The URI a proof names for a request to `url`: the URL without its query and fragment."""
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
