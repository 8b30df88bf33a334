"""The OAuth mechanics, done by Authlib: the authorization URL with PKCE (S256), the code exchange and the refresh.

Every request carries `resource`, exactly the PRM's `resource` string (RFC 8707; protocol.md P50).
The client authenticates at the token endpoint as its registration says (`client_secret_basic`,
`client_secret_post` or `none`, Authlib's client auth); a program logging in as itself
(`client_credentials`) may instead send a signed client assertion (`private_key_jwt`). A token response must carry an
`access_token` of type Bearer; its `expires_in` becomes an absolute expiry. Errors become
`AuthError`s that name the server's `error` code, never a token.
"""

from __future__ import annotations

import secrets
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from ...state import clock
from ..errors import AuthError
from .discovery import ServerMetadata
from .limits import oauth_client, oauth_errors
from .machine import ASSERTION_TYPE, ClientCredentials
from .registration import ClientInfo


@dataclass(frozen=True, slots=True)
class TokenGrant:
    """What a login gave for one server: the tokens, and what they are bound to (never logged)."""

    access_token: str = field(repr=False)
    issuer: str
    resource: str
    client: dict[str, Any] = field(repr=False)  # the ClientInfo it was issued to, for the refresh
    scopes: tuple[str, ...] | None = None  # what was asked for
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["scopes"] = list(self.scopes) if self.scopes is not None else None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> TokenGrant | None:
        try:
            scopes = data.get("scopes")
            return cls(
                access_token=str(data["access_token"]),
                issuer=str(data["issuer"]),
                resource=str(data["resource"]),
                client=dict(data["client"]),
                scopes=tuple(scopes) if isinstance(scopes, list) else None,
                refresh_token=data.get("refresh_token"),
                expires_at=data.get("expires_at"),
            )
        except (KeyError, TypeError, ValueError):
            return None


@dataclass(frozen=True, slots=True)
class Attempt:
    """One authorization request in flight: what the response and the exchange are checked against."""

    url: str
    state: str
    verifier: str = field(repr=False)
    redirect_uri: str
    scopes: tuple[str, ...] | None


def _oauth_client(client: ClientInfo, redirect_uri: str | None = None) -> Any:
    return oauth_client(
        client_id=client.client_id,
        client_secret=client.client_secret,
        token_endpoint_auth_method=client.auth_method,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
    )


def start(
    meta: ServerMetadata, client: ClientInfo, redirect_uri: str, scopes: tuple[str, ...] | None, resource: str
) -> Attempt:
    """A new authorization request: fresh `state` and PKCE verifier, the URL for the browser."""
    state = secrets.token_urlsafe(24)
    verifier = secrets.token_urlsafe(48)  # 64 characters; RFC 7636 allows 43 to 128
    extra: dict[str, Any] = {"resource": resource}
    if scopes:
        extra["scope"] = " ".join(scopes)
    url, _ = _oauth_client(client, redirect_uri).create_authorization_url(
        meta.authorization_endpoint, state=state, code_verifier=verifier, **extra
    )
    return Attempt(str(url), state, verifier, redirect_uri, scopes)


def _grant(
    token: Any,
    meta: ServerMetadata,
    client: ClientInfo,
    resource: str,
    scopes: tuple[str, ...] | None,
    old_refresh: str | None = None,
) -> TokenGrant:
    data = dict(token)
    access = data.get("access_token")
    if not isinstance(access, str) or not access:
        raise AuthError(f"the token endpoint of {meta.issuer} answered without an access_token")
    kind = data.get("token_type")
    if not isinstance(kind, str) or kind.lower() != "bearer":
        raise AuthError(f"the token endpoint of {meta.issuer} issued a {kind!r} token; this client uses Bearer tokens")
    expires_in = data.get("expires_in")
    expires_at = clock.now() + float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else None
    refresh = data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else old_refresh
    return TokenGrant(access, meta.issuer, resource, client.to_json(), scopes, refresh, expires_at)


def _failure(what: str, meta: ServerMetadata, exc: Exception) -> AuthError:
    error = getattr(exc, "error", None)
    description = getattr(exc, "description", None)
    if isinstance(error, str):
        detail = error + (f" ({description})" if isinstance(description, str) and description else "")
    else:
        detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    return AuthError(f"{what} at {meta.token_endpoint} failed: {detail}")


async def exchange(meta: ServerMetadata, client: ClientInfo, attempt: Attempt, code: str, resource: str) -> TokenGrant:
    """Trade the authorization code (and the PKCE verifier) for tokens."""
    AuthlibBaseError = oauth_errors()

    try:
        async with _oauth_client(client, attempt.redirect_uri) as oauth:
            token = await oauth.fetch_token(
                meta.token_endpoint,
                grant_type="authorization_code",
                code=code,
                code_verifier=attempt.verifier,
                resource=resource,
            )
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as exc:
        raise _failure("the code exchange", meta, exc) from None
    return _grant(token, meta, client, resource, attempt.scopes)


async def refresh(meta: ServerMetadata, grant: TokenGrant, client: ClientInfo | None) -> TokenGrant:
    """A new access token from the grant's refresh token, by `client`, the one it was issued to."""
    AuthlibBaseError = oauth_errors()

    if client is None or grant.refresh_token is None:
        raise AuthError("nothing to refresh")
    try:
        async with _oauth_client(client) as oauth:
            token = await oauth.refresh_token(
                meta.token_endpoint, refresh_token=grant.refresh_token, resource=grant.resource
            )
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as exc:
        raise _failure("the token refresh", meta, exc) from None
    return _grant(token, meta, client, grant.resource, grant.scopes, grant.refresh_token)


async def client_credentials(
    meta: ServerMetadata, creds: ClientCredentials, scopes: tuple[str, ...] | None, resource: str
) -> TokenGrant:
    """A token for the program itself (`grant_type=client_credentials`), authenticated as `creds` says."""
    AuthlibBaseError = oauth_errors()
    supported = meta.strings("token_endpoint_auth_methods_supported")
    extra: dict[str, Any] = {"resource": resource}
    if scopes:
        extra["scope"] = " ".join(scopes)
    if creds.method == "private_key_jwt":
        if supported is not None and "private_key_jwt" not in supported:
            raise AuthError(
                f"the authorization server {meta.issuer} does not take private_key_jwt at its token endpoint"
            )
        client = ClientInfo(creds.client_id, None, "none", "pre-registered", meta.issuer)
        extra["client_assertion_type"] = ASSERTION_TYPE
        extra["client_assertion"] = creds.assertion(meta.issuer)
    else:
        method = "client_secret_post" if supported and "client_secret_basic" not in supported else "client_secret_basic"
        if supported is not None and method not in supported:
            raise AuthError(f"the authorization server {meta.issuer} takes no client secret at its token endpoint")
        client = ClientInfo(creds.client_id, creds.client_secret, method, "pre-registered", meta.issuer)
    try:
        async with _oauth_client(client) as oauth:
            token = await oauth.fetch_token(meta.token_endpoint, grant_type="client_credentials", **extra)
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as exc:
        raise _failure("the client credentials grant", meta, exc) from None
    return _grant(
        token, meta, ClientInfo(creds.client_id, None, creds.method, "pre-registered", meta.issuer), resource, scopes
    )
