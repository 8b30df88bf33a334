"""`ClientCredentials`: log in as a program, with no person and no browser (OAuth client credentials, SEP-1046).

`Client(url, auth=ClientCredentials(client_id=..., client_secret=...))` or `(client_id=..., private_key=PEM)`.
When the server answers 401, the login discovers the authorization server as a browser login does, then asks
its token endpoint for a token with `grant_type=client_credentials`, for the PRM's `resource` and the scopes
chosen as for a person (protocol.md P195). The client authenticates with its secret (`client_secret_basic`,
or `client_secret_post` where that is all the server takes) or with a signed JWT (`private_key_jwt`, RFC 7523:
`iss` and `sub` the client id, `aud` the authorization server's issuer, a one-minute lifetime and a fresh
`jti`, signed ES256 or RS256 from the key's type). The credentials belong to one authorization server:
with `issuer=`, they are never shown to another; without it, to the first one used through this object.

Secrets are read from the environment or a file by the caller (`from_environment`), never logged, never
stored: the store keeps only the access token, as for a browser login.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Final

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from .rules import HTTP_TIMEOUT_S
from .store import MemoryStore, TokenStore

ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ASSERTION_LIFETIME_S: Final = 60
ENV_CLIENT_ID: Final = "BATON_CLIENT_ID"
ENV_CLIENT_SECRET: Final = "BATON_CLIENT_SECRET"
ENV_PRIVATE_KEY_FILE: Final = "BATON_CLIENT_KEY_FILE"


class ClientCredentials:
    """Log in as this program (no person): OAuth client credentials, with a secret or a private key."""

    def __init__(
        self,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        signing_alg: str | None = None,
        issuer: str | None = None,
        scopes: Iterable[str] = (),
        store: TokenStore | None = None,
        http_timeout_s: float = HTTP_TIMEOUT_S,
    ) -> None:
        if not client_id:
            raise ValueError("ClientCredentials needs the client_id the authorization server issued")
        if (client_secret is None) == (private_key is None):
            raise ValueError("ClientCredentials takes a client_secret or a private_key (PEM), exactly one")
        self.client_id = client_id
        self.client_secret = client_secret
        self.signing_alg: str | None = None
        self._key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | None = None
        if private_key is not None:
            self._key, self.signing_alg = _signing_key(private_key, signing_alg)
        elif signing_alg is not None:
            raise ValueError("signing_alg belongs to a private_key")
        self.issuer = issuer
        self.bound_issuer = issuer  # without issuer=: the first authorization server used (as OAuth's P53)
        self.scopes = tuple(dict.fromkeys(scopes if not isinstance(scopes, str) else scopes.split()))
        self.store: TokenStore = store if store is not None else MemoryStore()
        self.http_timeout_s = http_timeout_s

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ, **options: object) -> ClientCredentials:
        """Credentials from `$BATON_CLIENT_ID` and `$BATON_CLIENT_SECRET` or `$BATON_CLIENT_KEY_FILE` (a PEM file)."""
        client_id = environ.get(ENV_CLIENT_ID)
        if not client_id:
            raise ValueError(f"${ENV_CLIENT_ID} is not set: it names the client the authorization server issued")
        key_file = environ.get(ENV_PRIVATE_KEY_FILE)
        if key_file:
            try:
                key = Path(key_file).read_bytes()
            except OSError as exc:
                raise ValueError(f"${ENV_PRIVATE_KEY_FILE}: cannot read {key_file}: {exc.strerror or exc}") from None
            return cls(client_id=client_id, private_key=key, **options)  # type: ignore[arg-type]
        secret = environ.get(ENV_CLIENT_SECRET)
        if not secret:
            raise ValueError(f"set ${ENV_CLIENT_SECRET} or ${ENV_PRIVATE_KEY_FILE} for the client {client_id!r}")
        return cls(client_id=client_id, client_secret=secret, **options)  # type: ignore[arg-type]

    @property
    def method(self) -> str:
        """How this client authenticates at the token endpoint, before the server's metadata is read."""
        return "private_key_jwt" if self._key is not None else "client_secret_basic"

    def assertion(self, audience: str) -> str:
        """A fresh signed client assertion for the authorization server `audience` (RFC 7523)."""
        assert self._key is not None and self.signing_alg is not None
        now = int(time.time())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_S,
            "jti": secrets.token_urlsafe(16),
        }
        return jwt.encode(claims, self._key, algorithm=self.signing_alg)

    def __repr__(self) -> str:  # never the secret or the key
        return f"ClientCredentials(client_id={self.client_id!r}, method={self.method!r})"


def _signing_key(pem: str | bytes, alg: str | None) -> tuple[ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey, str]:
    try:
        key = load_pem_private_key(pem.encode() if isinstance(pem, str) else pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"private_key is not an unencrypted PEM private key ({exc})") from None
    if isinstance(key, ec.EllipticCurvePrivateKey):
        wanted = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}.get(key.curve.name)
        if wanted is None:
            raise ValueError(f"private_key: the curve {key.curve.name} has no JWS algorithm; use P-256")
    elif isinstance(key, rsa.RSAPrivateKey):
        wanted = "RS256"
    else:
        raise ValueError("private_key must be an EC (P-256) or RSA key")
    if alg is not None and alg != wanted and not (wanted == "RS256" and alg in ("RS384", "RS512", "PS256")):
        raise ValueError(f"signing_alg {alg} does not fit this key ({wanted})")
    return key, alg or wanted
