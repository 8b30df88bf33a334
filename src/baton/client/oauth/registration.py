"""Which OAuth client the login uses at an authorization server, and how it authenticates at the token endpoint.

In the order MCP prefers (protocol.md P53): the host's pre-registered client (`OAuth(client_id=...)`),
bound to one authorization server (`issuer=`, required with a secret; a public client without it is
bound to the first one its `OAuth` object is used with, kept in the store) and refused for another;
a Client ID Metadata Document (`OAuth(client_metadata_url=...)`, an https URL with a path) when the
server's metadata says `client_id_metadata_document_supported`; Dynamic Client Registration
(RFC 7591) when it has a `registration_endpoint`, stored per issuer and reused while the redirect URI
is among those registered and the secret has not expired. Registration sends `application_type`
(`native` for a loopback redirect URI, else `web`, SEP-837) and asks for the `refresh_token` grant.
Otherwise the login fails, saying what the host can give.

The token endpoint authentication (`client_secret_basic`, `client_secret_post` or `none`) is what
the registration answered; else, with a secret, Basic if the server supports it (or says nothing,
RFC 8414's default), then POST; without a secret, `none`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any, Literal
from urllib.parse import urlsplit

import httpx

from ...protocol.hosts import is_loopback
from ...state import clock
from ..errors import AuthError
from .discovery import ServerMetadata
from .rules import METHODS, error_text
from .store import TokenStore

RegistrationKind = Literal["pre-registered", "metadata-document", "dynamic"]


@dataclass(frozen=True, slots=True)
class ClientInfo:
    """One OAuth client at one authorization server (`issuer` None: a metadata document, portable)."""

    client_id: str
    client_secret: str | None
    auth_method: str
    kind: RegistrationKind
    issuer: str | None = None
    redirect_uris: tuple[str, ...] = ()
    secret_expires_at: int = 0

    def __repr__(self) -> str:  # never the secret
        return f"ClientInfo({self.kind}, client_id={self.client_id!r}, auth_method={self.auth_method!r})"

    def to_json(self) -> dict[str, Any]:
        """What is stored; a pre-registered client's secret is the host's and is never stored (P58)."""
        data = asdict(self)
        data["redirect_uris"] = list(self.redirect_uris)
        if self.kind == "pre-registered":
            data["client_secret"] = None
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ClientInfo | None:
        try:
            return cls(
                client_id=str(data["client_id"]),
                client_secret=data.get("client_secret"),
                auth_method=str(data["auth_method"]),
                kind=data["kind"],
                issuer=data.get("issuer"),
                redirect_uris=tuple(data.get("redirect_uris") or ()),
                secret_expires_at=int(data.get("secret_expires_at") or 0),
            )
        except (KeyError, TypeError, ValueError):
            return None


def application_type(redirect_uri: str) -> str:
    """SEP-837: `native` for a redirect to this computer (CLI, desktop), `web` otherwise."""
    return "native" if is_loopback(urlsplit(redirect_uri).hostname or "") else "web"


def auth_method(answered: Any, supported: tuple[str, ...] | None, has_secret: bool) -> str:
    """The token endpoint authentication method to use."""
    if answered in METHODS and (answered == "none" or has_secret):
        return str(answered)
    if not has_secret:
        return "none"
    offered = supported if supported is not None else ("client_secret_basic",)  # RFC 8414's default
    for method in ("client_secret_basic", "client_secret_post", "none"):
        if method in offered:
            return method
    raise AuthError(f"the authorization server supports none of {', '.join(METHODS)} at its token endpoint")


def requested_method(supported: tuple[str, ...] | None) -> str:
    """What Dynamic Client Registration asks for: a public client if the server allows one."""
    offered = supported if supported is not None else ("client_secret_basic",)
    for method in ("none", "client_secret_basic", "client_secret_post"):
        if method in offered:
            return method
    raise AuthError(f"the authorization server supports none of {', '.join(METHODS)} at its token endpoint")


def pre_registered(
    client_id: str, client_secret: str | None, bound_issuer: str | None, meta: ServerMetadata, method: str | None = None
) -> ClientInfo:
    """The host's own client, for the server it belongs to only (protocol.md P53)."""
    if bound_issuer is not None and bound_issuer != meta.issuer:
        raise AuthError(
            f"the pre-registered client {client_id!r} belongs to the authorization server {bound_issuer}, "
            f"but the server now names {meta.issuer}: register a client there and give its client_id"
        )
    chosen = auth_method(method, meta.strings("token_endpoint_auth_methods_supported"), client_secret is not None)
    return ClientInfo(client_id, client_secret, chosen, "pre-registered", meta.issuer)


async def first_use_issuer(store: TokenStore, client_id: str, meta: ServerMetadata) -> str:
    """The issuer a public pre-registered client given without `issuer=` is bound to: the one it was first
    used with through this store (so a new process with the same `FileStore` keeps the binding)."""
    key = f"pre-registered {client_id}"
    data = await store.get(key)
    issuer = data.get("issuer") if data else None
    if isinstance(issuer, str) and issuer:
        return issuer
    await store.set(key, {"issuer": meta.issuer})
    return meta.issuer


def grant_client(
    stored: dict[str, Any], client_id: str | None, client_secret: str | None, meta: ServerMetadata
) -> ClientInfo | None:
    """The client a stored grant was issued to, for its refresh: a pre-registered one gets its secret back
    from the host's `OAuth` (it is never stored), and only while it is still that client."""
    client = ClientInfo.from_json(stored)
    if client is None or client.kind != "pre-registered":
        return client
    if client.client_id != client_id or client.issuer != meta.issuer:
        return None
    return ClientInfo(client.client_id, client_secret, client.auth_method, client.kind, client.issuer)


def metadata_document(url: str) -> ClientInfo:
    """A Client ID Metadata Document: its URL is the client_id; a public client."""
    return ClientInfo(url, None, "none", "metadata-document")


def _key(issuer: str) -> str:
    return f"client {issuer}"


async def stored_registration(store: TokenStore, meta: ServerMetadata, redirect_uri: str) -> ClientInfo | None:
    """A dynamic registration made before with this issuer, if it still fits."""
    data = await store.get(_key(meta.issuer))
    info = ClientInfo.from_json(data) if data else None
    if info is None or info.issuer != meta.issuer or redirect_uri not in info.redirect_uris:
        return None
    if info.secret_expires_at and info.secret_expires_at <= clock.now() + 60:
        return None
    return info


async def register(
    http: httpx.AsyncClient, store: TokenStore, meta: ServerMetadata, redirect_uri: str, client_name: str
) -> ClientInfo:
    """Dynamic Client Registration (RFC 7591) at the issuer's registration endpoint; stored per issuer."""

    endpoint = meta.registration_endpoint
    if endpoint is None:
        raise AuthError(f"the authorization server {meta.issuer} offers no registration endpoint")
    supported = meta.strings("token_endpoint_auth_methods_supported")
    body = {
        "client_name": client_name,
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": requested_method(supported),
        "application_type": application_type(redirect_uri),
    }
    try:
        resp = await http.post(endpoint, json=body, headers={"Accept": "application/json"}, follow_redirects=False)
    except httpx.HTTPError as exc:
        raise AuthError(f"registration at {endpoint} failed: {exc}") from None
    try:
        data = resp.json()
    except ValueError:
        data = None
    if resp.status_code not in (200, 201) or not isinstance(data, dict) or not isinstance(data.get("client_id"), str):
        said = error_text(data.get("error"), data.get("error_description")) if isinstance(data, dict) else None
        why = f": {said}" if said else ""
        raise AuthError(
            f"the authorization server {meta.issuer} refused to register this client (HTTP {resp.status_code}{why}); "
            f"it asked for redirect URI {redirect_uri} as a {body['application_type']} application"
        )
    secret = data.get("client_secret") if isinstance(data.get("client_secret"), str) else None
    expires = data.get("client_secret_expires_at")
    info = ClientInfo(
        client_id=data["client_id"],
        client_secret=secret,
        auth_method=auth_method(data.get("token_endpoint_auth_method"), supported, secret is not None),
        kind="dynamic",
        issuer=meta.issuer,
        redirect_uris=(redirect_uri,),
        secret_expires_at=expires if isinstance(expires, int) else 0,
    )
    await store.set(_key(meta.issuer), info.to_json())
    return info
