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
from collections.abc import Awaitable, Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import httpx

from ...state import clock
from ..errors import AuthError
from .discovery import ServerMetadata
from .dpop import NONCE_ERROR, DpopKey
from .limits import capped_client, oauth_client, oauth_errors
from .machine import (
    ASSERTION_TYPE,
    ID_JAG_TYPE,
    ID_TOKEN_TYPE,
    JWT_BEARER,
    TOKEN_EXCHANGE,
    ClientCredentials,
    EnterpriseLogin,
    ProgramLogin,
    WorkloadIdentity,
)
from .registration import ClientInfo
from .rules import error_text


@dataclass(frozen=True, slots=True, kw_only=True)
class TokenGrant:
    """What a login gave for one server: the tokens, and what they are bound to (never logged)."""

    access_token: str = field(repr=False)
    issuer: str
    resource: str
    client: dict[str, Any] = field(repr=False)  # the ClientInfo it was issued to, for the refresh
    scopes: tuple[str, ...] | None = None  # what was asked for
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    token_type: str = "Bearer"  # or "DPoP": bound to `dpop_key` (P197)
    dpop_key: dict[str, Any] | None = field(default=None, repr=False)  # the private JWK it is bound to

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
                token_type=str(data.get("token_type") or "Bearer"),
                dpop_key=data.get("dpop_key") if isinstance(data.get("dpop_key"), dict) else None,
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
    dpop: DpopKey | None = None,
) -> TokenGrant:
    data = dict(token)
    access = data.get("access_token")
    if not isinstance(access, str) or not access:
        raise AuthError(f"the token endpoint of {meta.issuer} answered without an access_token")
    kind = data.get("token_type")
    bound = isinstance(kind, str) and kind.lower() == "dpop" and dpop is not None
    if not bound and (not isinstance(kind, str) or kind.lower() != "bearer"):
        wanted = "Bearer or DPoP" if dpop is not None else "Bearer"
        raise AuthError(
            f"the token endpoint of {meta.issuer} issued a {kind!r} token; this client uses {wanted} tokens"
        )
    expires_in = data.get("expires_in")
    expires_at = clock.now() + float(expires_in) if isinstance(expires_in, int | float) and expires_in > 0 else None
    refresh = data.get("refresh_token") if isinstance(data.get("refresh_token"), str) else old_refresh
    key = dpop.to_json() if bound and dpop is not None else None
    kind = "DPoP" if key is not None else "Bearer"
    return TokenGrant(
        access_token=access,
        issuer=meta.issuer,
        resource=resource,
        client=client.to_json(),
        scopes=scopes,
        refresh_token=refresh,
        expires_at=expires_at,
        token_type=kind,
        dpop_key=key,
    )


def _failure(what: str, meta: ServerMetadata, exc: Exception) -> AuthError:
    detail = error_text(getattr(exc, "error", None), getattr(exc, "description", None))
    if detail is None:
        detail = type(exc).__name__ + (f": {exc}" if str(exc) else "")
    return AuthError(f"{what} at {meta.token_endpoint} failed: {detail}")


TokenCall = Callable[[Any, dict[str, str] | None], Awaitable[Any]]


async def _token_request(
    meta: ServerMetadata, client: ClientInfo, dpop: DpopKey | None, call: TokenCall, redirect_uri: str | None = None
) -> Any:
    """One token request (`call(oauth, headers)`), with a fresh DPoP proof when `dpop`, and once more with the
    nonce the authorization server asks for (`use_dpop_nonce`, RFC 9449 §8)."""
    AuthlibBaseError = oauth_errors()
    given: dict[str, str | None] = {}

    async def keep_nonce(response: httpx.Response) -> None:
        given["nonce"] = response.headers.get("dpop-nonce")

    for first in (True, False):
        given.clear()

        async with _oauth_client(client, redirect_uri) as oauth:
            if dpop is None:
                return await call(oauth, None)
            oauth.event_hooks = {**oauth.event_hooks, "response": [*oauth.event_hooks["response"], keep_nonce]}
            try:
                return await call(oauth, {"DPoP": dpop.proof("POST", meta.token_endpoint)})
            except AuthlibBaseError as exc:
                nonce = given.get("nonce")
                asked = getattr(exc, "error", None) == NONCE_ERROR
                if not (first and asked and dpop.remember_nonce(meta.token_endpoint, nonce)):
                    raise
    raise AssertionError("unreachable")  # pragma: no cover


async def exchange(
    meta: ServerMetadata, client: ClientInfo, attempt: Attempt, code: str, resource: str, dpop: DpopKey | None = None
) -> TokenGrant:
    """Trade the authorization code (and the PKCE verifier) for tokens; bound to `dpop` when given."""
    AuthlibBaseError = oauth_errors()

    async def call(oauth: Any, headers: dict[str, str] | None) -> Any:
        return await oauth.fetch_token(
            meta.token_endpoint,
            headers=headers,
            grant_type="authorization_code",
            code=code,
            code_verifier=attempt.verifier,
            resource=resource,
        )

    try:
        token = await _token_request(meta, client, dpop, call, attempt.redirect_uri)
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as exc:
        raise _failure("the code exchange", meta, exc) from None
    return _grant(token, meta, client, resource, attempt.scopes, dpop=dpop)


async def refresh(
    meta: ServerMetadata, grant: TokenGrant, client: ClientInfo | None, dpop: DpopKey | None = None
) -> TokenGrant:
    """A new access token from the grant's refresh token, by `client`, the one it was issued to (and bound to
    the same DPoP key, `dpop`, if the grant was)."""
    AuthlibBaseError = oauth_errors()

    if client is None or grant.refresh_token is None:
        raise AuthError("nothing to refresh")

    async def call(oauth: Any, headers: dict[str, str] | None) -> Any:
        return await oauth.refresh_token(
            meta.token_endpoint, refresh_token=grant.refresh_token, resource=grant.resource, headers=headers
        )

    try:
        token = await _token_request(meta, client, dpop, call)
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as exc:
        raise _failure("the token refresh", meta, exc) from None
    return _grant(token, meta, client, grant.resource, grant.scopes, grant.refresh_token, dpop)


async def program_grant(
    meta: ServerMetadata,
    login: ProgramLogin,
    scopes: tuple[str, ...] | None,
    resource: str,
    dpop: DpopKey | None = None,
) -> TokenGrant:
    """A token for a login with no person (`machine`): the client credentials grant, or the JWT-bearer grant
    with a platform token or with the ID-JAG an enterprise identity provider issued for this server."""
    AuthlibBaseError = oauth_errors()
    extra: dict[str, Any] = {"resource": resource}
    if scopes:
        extra["scope"] = " ".join(scopes)
    if isinstance(login, ClientCredentials):
        grant_type = "client_credentials"
    else:
        grant_type = JWT_BEARER
        try:
            if isinstance(login, EnterpriseLogin):
                extra["assertion"] = await _identity_assertion_grant(login, meta.issuer, resource, scopes)
            else:
                assert isinstance(login, WorkloadIdentity)
                extra["assertion"] = await login.platform_token()
        except ValueError as exc:
            raise AuthError(f"logging in to {meta.issuer}: {exc}") from None
    client = _program_client(meta, login, extra)

    async def call(oauth: Any, headers: dict[str, str] | None) -> Any:
        if login.method == "private_key_jwt":  # a fresh assertion for each try (its jti is single use)
            extra["client_assertion"] = login.assertion(meta.issuer)
        return await oauth.fetch_token(meta.token_endpoint, headers=headers, grant_type=grant_type, **extra)

    try:
        token = await _token_request(meta, client, dpop, call)
    except (AuthlibBaseError, httpx.HTTPError, ValueError) as exc:
        raise _failure(f"the {grant_type.rsplit(':', 1)[-1]} grant", meta, exc) from None
    issued_to = ClientInfo(login.client_id or "", None, login.method, "pre-registered", meta.issuer)
    return _grant(token, meta, issued_to, resource, scopes, dpop=dpop)


def _program_client(meta: ServerMetadata, login: ProgramLogin, extra: dict[str, Any]) -> ClientInfo:
    """How a login with no person authenticates at the token endpoint, checked against what it offers."""
    supported = meta.strings("token_endpoint_auth_methods_supported")
    method = login.method
    if method == "private_key_jwt":
        if supported is not None and "private_key_jwt" not in supported:
            raise AuthError(f"the authorization server {meta.issuer} takes no private_key_jwt at its token endpoint")
        extra["client_assertion_type"] = ASSERTION_TYPE
        extra["client_assertion"] = login.assertion(meta.issuer)
        return ClientInfo(login.client_id or "", None, "none", "pre-registered", meta.issuer)
    if method == "client_secret_basic":
        if supported and "client_secret_basic" not in supported:
            method = "client_secret_post"
        if supported is not None and method not in supported:
            raise AuthError(f"the authorization server {meta.issuer} takes no client secret at its token endpoint")
        return ClientInfo(login.client_id or "", login.client_secret, method, "pre-registered", meta.issuer)
    return ClientInfo(login.client_id or "", None, "none", "pre-registered", meta.issuer)


async def _identity_assertion_grant(
    login: EnterpriseLogin, issuer: str, resource: str, scopes: tuple[str, ...] | None
) -> str:
    """The ID-JAG for `issuer` and `resource`: the identity token exchanged at the identity provider (RFC 8693)."""
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "subject_token": await login.identity_token(),
        "subject_token_type": ID_TOKEN_TYPE,
        "requested_token_type": ID_JAG_TYPE,
        "audience": issuer,
        "resource": resource,
        "client_id": login.idp_client_id,
    }
    if scopes:
        form["scope"] = " ".join(scopes)
    where = f"the token exchange at {login.idp_token_endpoint}"
    try:
        async with capped_client() as http:
            if login.idp_client_secret:
                secret = (login.idp_client_id, login.idp_client_secret)
                answer = await http.post(login.idp_token_endpoint, data=form, auth=secret)
            else:
                answer = await http.post(login.idp_token_endpoint, data=form)
    except httpx.HTTPError as exc:
        raise AuthError(f"{where} failed: {type(exc).__name__}") from None
    try:
        body = answer.json()
    except ValueError:
        body = None
    if not isinstance(body, dict):
        raise AuthError(f"{where} answered HTTP {answer.status_code}, not a JSON object")
    if answer.status_code != 200 or "error" in body:
        said = error_text(body.get("error"), body.get("error_description")) or f"HTTP {answer.status_code}"
        raise AuthError(f"{where} failed: {said}")
    granted = body.get("access_token")
    if body.get("issued_token_type") != ID_JAG_TYPE or not isinstance(granted, str) or not granted:
        raise AuthError(f"{where} did not issue an identity assertion grant (issued_token_type {ID_JAG_TYPE})")
    return granted
