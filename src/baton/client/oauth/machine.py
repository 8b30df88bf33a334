"""Logins with no person and no browser: `ClientCredentials` (SEP-1046), `WorkloadIdentity` (a platform token as
an RFC 7523 JWT-bearer assertion) and `EnterpriseLogin` (SEP-990: token exchange at the enterprise's identity
provider for an ID-JAG, then the JWT-bearer grant). The grants themselves are `flow.program_grant`.

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

import inspect
import os
import secrets
from collections.abc import Awaitable, Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Final, Literal

from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.serialization import load_pem_private_key

from ...state import clock
from .rules import HTTP_TIMEOUT_S, check_dpop, may_carry_tokens
from .store import MemoryStore, TokenStore

ASSERTION_TYPE: Final = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
JWT_BEARER: Final = "urn:ietf:params:oauth:grant-type:jwt-bearer"
TOKEN_EXCHANGE: Final = "urn:ietf:params:oauth:grant-type:token-exchange"
ID_TOKEN_TYPE: Final = "urn:ietf:params:oauth:token-type:id_token"
ID_JAG_TYPE: Final = "urn:ietf:params:oauth:token-type:id-jag"
ASSERTION_LIFETIME_S: Final = 60
ENV_CLIENT_ID: Final = "BATON_CLIENT_ID"
ENV_CLIENT_SECRET: Final = "BATON_CLIENT_SECRET"
ENV_PRIVATE_KEY_FILE: Final = "BATON_CLIENT_KEY_FILE"
ENV_WORKLOAD_TOKEN_FILE: Final = "BATON_WORKLOAD_TOKEN_FILE"
ENV_ID_TOKEN_FILE: Final = "BATON_ID_TOKEN_FILE"
ENV_IDP_TOKEN_ENDPOINT: Final = "BATON_IDP_TOKEN_ENDPOINT"
ENV_IDP_CLIENT_ID: Final = "BATON_IDP_CLIENT_ID"
ENV_IDP_CLIENT_SECRET: Final = "BATON_IDP_CLIENT_SECRET"


class ProgramLogin:
    """What every login without a person shares: the client's own authentication at the token endpoint (a
    secret, a private key, or none), the one authorization server it belongs to, scopes, the token store."""

    needs_credentials = False  # True: a client_id and exactly one of client_secret and private_key

    def __init__(
        self,
        *,
        client_id: str | None,
        client_secret: str | None = None,
        private_key: str | bytes | None = None,
        signing_alg: str | None = None,
        issuer: str | None = None,
        scopes: Iterable[str] = (),
        store: TokenStore | None = None,
        http_timeout_s: float = HTTP_TIMEOUT_S,
        dpop: bool | Literal["auto"] = "auto",
    ) -> None:
        name = type(self).__name__
        if self.needs_credentials and not client_id:
            raise ValueError(f"{name} needs the client_id the authorization server issued")
        if self.needs_credentials and (client_secret is None) == (private_key is None):
            raise ValueError(f"{name} takes a client_secret or a private_key (PEM), exactly one")
        if client_secret is not None and private_key is not None:
            raise ValueError(f"{name} takes a client_secret or a private_key (PEM), not both")
        if (client_secret is not None or private_key is not None) and not client_id:
            raise ValueError(f"{name}: a client_secret or private_key belongs to a client_id")
        self.client_id = client_id
        self.client_secret = client_secret
        self.signing_alg: str | None = None
        self._key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey | None = None
        if private_key is not None:
            self._key, self.signing_alg = _signing_key(private_key, signing_alg)
        elif signing_alg is not None:
            raise ValueError("signing_alg belongs to a private_key")
        self.bound_issuer = issuer  # without issuer=: the first authorization server used (as OAuth's P53)
        self.scopes = tuple(dict.fromkeys(scopes if not isinstance(scopes, str) else scopes.split()))
        self.store: TokenStore = store if store is not None else MemoryStore()
        self.http_timeout_s = http_timeout_s
        self.dpop = check_dpop(dpop)  # as OAuth(dpop=...)

    @property
    def method(self) -> str:
        """How this client authenticates at the token endpoint, before the server's metadata is read."""
        if self._key is not None:
            return "private_key_jwt"
        return "client_secret_basic" if self.client_secret is not None else "none"

    def assertion(self, audience: str) -> str:
        """A fresh signed client assertion for the authorization server `audience` (RFC 7523)."""
        assert self._key is not None and self.signing_alg is not None and self.client_id
        now = int(clock.now())
        claims = {
            "iss": self.client_id,
            "sub": self.client_id,
            "aud": audience,
            "iat": now,
            "exp": now + ASSERTION_LIFETIME_S,
            "jti": secrets.token_urlsafe(16),
        }
        import jwt  # noqa: PLC0415 (PyJWT loads when a program first signs an assertion, not with the CLI)

        return jwt.encode(claims, self._key, algorithm=self.signing_alg)

    def __repr__(self) -> str:  # never the secret or the key
        return f"{type(self).__name__}(client_id={self.client_id!r}, method={self.method!r})"


class ClientCredentials(ProgramLogin):
    """Log in as this program (no person): OAuth client credentials, with a secret or a private key (the
    options of `ProgramLogin`; `client_id` and exactly one of `client_secret` and `private_key` are required)."""

    needs_credentials = True

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ, **options: Any) -> ClientCredentials:
        """Credentials from `$BATON_CLIENT_ID` and `$BATON_CLIENT_SECRET` or `$BATON_CLIENT_KEY_FILE` (a PEM file)."""
        client = client_from_environment(environ, required=True)
        if "client_secret" not in client and "private_key" not in client:
            raise ValueError(
                f"set ${ENV_CLIENT_SECRET} or ${ENV_PRIVATE_KEY_FILE} for the client {client['client_id']!r}"
            )
        return cls(**client, **options)


def client_from_environment(environ: Mapping[str, str], *, required: bool) -> dict[str, Any]:
    """This client at the authorization server, from the environment: `client_id` from `$BATON_CLIENT_ID`, and
    `private_key` (read from `$BATON_CLIENT_KEY_FILE`) or `client_secret` (`$BATON_CLIENT_SECRET`) if set."""
    client_id = environ.get(ENV_CLIENT_ID)
    if not client_id:
        if required:
            raise ValueError(f"${ENV_CLIENT_ID} is not set: it names the client the authorization server issued")
        return {}
    key_file = environ.get(ENV_PRIVATE_KEY_FILE)
    if key_file:
        return {"client_id": client_id, "private_key": _read(key_file, ENV_PRIVATE_KEY_FILE, binary=True)}
    secret = environ.get(ENV_CLIENT_SECRET)
    return {"client_id": client_id, "client_secret": secret} if secret else {"client_id": client_id}


def _read(path: str, variable: str, *, binary: bool = False) -> Any:
    try:
        return Path(path).read_bytes() if binary else Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ValueError(f"${variable}: cannot read {path}: {exc.strerror or exc}") from None


def _file_reader(path: str, variable: str) -> Callable[[], str]:
    """A token source reading `path` at each login (platforms rotate these files)."""
    return lambda: _read(path, variable)


def _needed(environ: Mapping[str, str], variable: str, what: str) -> str:
    value = environ.get(variable)
    if not value:
        raise ValueError(f"${variable} is not set: it names {what}")
    return value


TokenSource = Callable[[], str | Awaitable[str]]
"""Where a login without a person reads a token it presents: a function (sync or async) called each time."""


class WorkloadIdentity(ProgramLogin):
    """Log in with a token the platform gave this workload (a Kubernetes service account, a cloud's identity
    token, a CI job's OIDC token) as the assertion of an RFC 7523 JWT-bearer grant (workload identity
    federation). `assertion` is the token, or a function returning it (read each time: platforms rotate them).
    The client authenticates as the other logins do, or not at all (`client_id` alone, or nothing)."""

    def __init__(self, *, assertion: str | TokenSource, client_id: str | None = None, **options: Any) -> None:
        super().__init__(client_id=client_id, **options)
        self._assertion = assertion

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ, **options: Any) -> WorkloadIdentity:
        """The token file the platform writes, `$BATON_WORKLOAD_TOKEN_FILE` (read at each login), and this
        client's id and secret or key as `ClientCredentials.from_environment` reads them, if set."""
        path = _needed(environ, ENV_WORKLOAD_TOKEN_FILE, "the file where the platform puts the workload's token")
        return cls(
            assertion=_file_reader(path, ENV_WORKLOAD_TOKEN_FILE),
            **client_from_environment(environ, required=False),
            **options,
        )

    async def platform_token(self) -> str:
        return await _token(self._assertion, "the workload's assertion")


class EnterpriseLogin(ProgramLogin):
    """Enterprise-managed authorization (SEP-990): the person's identity token from the enterprise's identity
    provider is exchanged there (RFC 8693) for an identity assertion grant (ID-JAG) naming this MCP server's
    authorization server and resource, which that server then trades for an access token (RFC 7523), with
    no consent screen. `id_token` is the token or a function returning it; `idp_token_endpoint` the identity
    provider's token endpoint; `idp_client_id` / `idp_client_secret` this client at the identity provider;
    `client_id` / `client_secret` (or `private_key`) this client at the MCP server's authorization server."""

    def __init__(
        self,
        *,
        id_token: str | TokenSource,
        idp_token_endpoint: str,
        idp_client_id: str,
        client_id: str,
        idp_client_secret: str | None = None,
        **options: Any,
    ) -> None:
        if not may_carry_tokens(idp_token_endpoint):
            raise ValueError(f"idp_token_endpoint must be https (or http to this computer), not {idp_token_endpoint!r}")
        super().__init__(client_id=client_id, **options)
        self._id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_client_id = idp_client_id
        self.idp_client_secret = idp_client_secret

    @classmethod
    def from_environment(cls, environ: Mapping[str, str] = os.environ, **options: Any) -> EnterpriseLogin:
        """The person's identity token from `$BATON_ID_TOKEN_FILE` (read at each login), the identity provider's
        `$BATON_IDP_TOKEN_ENDPOINT`, `$BATON_IDP_CLIENT_ID` (and `$BATON_IDP_CLIENT_SECRET` if set), and this
        client as `ClientCredentials.from_environment` reads it."""
        return cls(
            id_token=_file_reader(
                _needed(environ, ENV_ID_TOKEN_FILE, "the file holding your identity token"), ENV_ID_TOKEN_FILE
            ),
            idp_token_endpoint=_needed(environ, ENV_IDP_TOKEN_ENDPOINT, "your identity provider's token endpoint"),
            idp_client_id=_needed(environ, ENV_IDP_CLIENT_ID, "this client at your identity provider"),
            idp_client_secret=environ.get(ENV_IDP_CLIENT_SECRET) or None,
            **client_from_environment(environ, required=True),
            **options,
        )

    async def identity_token(self) -> str:
        return await _token(self._id_token, "the identity token")


async def _token(source: str | TokenSource, what: str) -> str:
    value = source() if callable(source) else source
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} is empty")
    return value


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
