"""Finding who issues tokens for a server: its Protected Resource Metadata (RFC 9728) and its
authorization server's metadata (RFC 8414, OpenID Connect Discovery 1.0).

Protected Resource Metadata (PRM) is read from the `resource_metadata` URL of the server's challenge,
then from the well-known URL with the server's path (`/.well-known/oauth-protected-resource/mcp`),
then from the root one. A URL that does not answer 200 with a JSON object holding a `resource` string
and an `authorization_servers` list is skipped for the next; the first that does is used, and is
refused (no further URL tried) if it names no authorization server or a `resource` that is not this
server (`resource_matches`, protocol.md P50). The `resource` is then used exactly as published.

Authorization server metadata is read, for an issuer with a path, from the RFC 8414 URL with the path
inserted, then the OpenID one with the path inserted, then the OpenID one with the path appended;
for an issuer without one, from the RFC 8414 URL, then the OpenID one. A document whose `issuer` is
not exactly the issuer the URL was built from is not used (no normalisation, protocol.md P51), nor
one without S256 in `code_challenge_methods_supported` (the client must refuse an authorization
server that does not say it supports PKCE). Every URL fetched or handed to a browser is https, or
http to a loopback host, and on a loopback host only for an MCP server on this computer
(`check_endpoint`, protocol.md P52).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from ... import sent_url
from ...protocol.hosts import is_loopback
from ..errors import AuthError
from .rules import scheme_may_carry_tokens

PRM_SUFFIX = "/.well-known/oauth-protected-resource"
OAUTH_SUFFIX = "/.well-known/oauth-authorization-server"
OPENID_SUFFIX = "/.well-known/openid-configuration"


@dataclass(frozen=True, slots=True)
class ResourceMetadata:
    """A server's Protected Resource Metadata: its resource identifier, authorization servers and scopes."""

    resource: str
    authorization_servers: tuple[str, ...]
    scopes_supported: tuple[str, ...] | None
    url: str  # where it was read
    dpop_required: bool = False  # `dpop_bound_access_tokens_required` (RFC 9449 §10.2)


@dataclass(frozen=True, slots=True)
class ServerMetadata:
    """An authorization server's validated metadata; `raw` is the document as sent."""

    issuer: str
    raw: dict[str, Any]
    url: str

    @property
    def authorization_endpoint(self) -> str:
        return str(self.raw["authorization_endpoint"])

    @property
    def token_endpoint(self) -> str:
        return str(self.raw["token_endpoint"])

    @property
    def registration_endpoint(self) -> str | None:
        value = self.raw.get("registration_endpoint")
        return value if isinstance(value, str) and value else None

    def strings(self, name: str) -> tuple[str, ...] | None:
        """A list-of-strings member (`scopes_supported`, `token_endpoint_auth_methods_supported`), or None."""
        value = self.raw.get(name)
        if not isinstance(value, list):
            return None
        return tuple(item for item in value if isinstance(item, str))

    def flag(self, name: str) -> bool:
        return self.raw.get(name) is True


def check_endpoint(url: str, what: str, server_url: str) -> str:
    """`url` if the login may fetch it or open it in the browser; AuthError otherwise (protocol.md P52).

    https, or http to a loopback host; and a loopback host (whatever the scheme) only for a server that
    is itself on this computer: a server elsewhere cannot send the login to local services. `url` is read
    by httpx's parser, which is what fetches it, so what is checked is what is sent (protocol.md P120);
    `server_url` by urlsplit, as the MCP transport reads it.
    """
    if any(c <= " " or c == "\x7f" for c in url):  # httpx reads a leading space as a relative path
        raise AuthError(f"the {what} {url!r} is not a URL (it holds a space or a control character)")
    try:
        parsed = sent_url.parse(url)
        server_host = urlsplit(server_url).hostname or ""
    except ValueError:
        raise AuthError(f"the {what} {url!r} is not a URL") from None
    if not parsed.host or parsed.scheme not in ("http", "https"):
        raise AuthError(f"the {what} {url!r} is not an https URL")
    if is_loopback(parsed.host) and not is_loopback(server_host):
        raise AuthError(
            f"the {what} {url!r} is on this computer, but the server {server_url} is not: refused "
            "(a remote server cannot point the login at local services)"
        )
    if scheme_may_carry_tokens(parsed.scheme, parsed.host):  # the one rule: https, or http to this computer
        return url
    raise AuthError(f"the {what} {url!r} is not https (plain http is accepted only to this computer)")


async def _get_json(http: httpx.AsyncClient, url: str) -> tuple[int, dict[str, Any] | None]:
    """GET a JSON document: (status, the object) or (status, None); never follows redirects.

    `http` is a `limits.capped_client()`: a body over its cap is an AuthError, not read further.
    """
    try:
        resp = await http.get(url, headers={"Accept": "application/json"}, follow_redirects=False)
    except httpx.HTTPError:
        return 0, None
    if resp.status_code != 200:
        return resp.status_code, None
    try:
        data = resp.json()
    except ValueError:
        return resp.status_code, None
    return resp.status_code, data if isinstance(data, dict) else None


# -- Protected Resource Metadata -------------------------------------------------------------------------


def prm_urls(server_url: str, from_challenge: str | None) -> list[str]:
    """Where to look for the server's PRM, in order: the challenge's URL, then path-aware, then root."""
    parts = urlsplit(server_url)
    path = parts.path.rstrip("/")
    urls = [from_challenge] if from_challenge else []
    if path:
        urls.append(urlunsplit((parts.scheme, parts.netloc, PRM_SUFFIX + path, "", "")))
    urls.append(urlunsplit((parts.scheme, parts.netloc, PRM_SUFFIX, "", "")))
    return list(dict.fromkeys(urls))


def resource_matches(resource: str, server_url: str, *, from_well_known: bool = False) -> bool:
    """Whether a PRM `resource` names this server (protocol.md P50): same scheme, host (letter case
    aside), port and query, no fragment, and the server's path (a trailing `/` aside). A parent of that path
    at a `/` (`https://x` for `https://x/mcp`) only for a document read from the server's own
    well-known URLs (`from_well_known`), which the origin serves, never from a challenge's URL."""
    try:
        given, ours = urlsplit(resource), urlsplit(server_url)
        given_port, our_port = given.port, ours.port
    except ValueError:
        return False
    if given.fragment or given.scheme.lower() != ours.scheme.lower() or given.scheme.lower() not in ("http", "https"):
        return False
    if given.query != ours.query:
        return False
    default = 443 if ours.scheme.lower() == "https" else 80
    if (given.hostname or "") != (ours.hostname or "") or (given_port or default) != (our_port or default):
        return False
    path, mine = given.path.rstrip("/"), ours.path.rstrip("/")
    return mine == path or (from_well_known and mine.startswith(path + "/"))


async def protected_resource(http: httpx.AsyncClient, server_url: str, from_challenge: str | None) -> ResourceMetadata:
    """The server's PRM, checked: it names this server and at least one authorization server."""
    tried = []
    for url in prm_urls(server_url, from_challenge):
        check_endpoint(url, "protected resource metadata URL", server_url)
        status, doc = await _get_json(http, url)
        tried.append(f"{url} ({status or 'no answer'})")
        if doc is None:
            continue
        resource = doc.get("resource")
        servers = doc.get("authorization_servers")
        if not isinstance(resource, str) or not isinstance(servers, list):
            tried[-1] = f"{url} (not protected resource metadata)"
            continue
        servers = [s for s in servers if isinstance(s, str) and s]
        if not servers:
            raise AuthError(f"the protected resource metadata at {url} names no authorization server")
        if not resource_matches(resource, server_url, from_well_known=url in prm_urls(server_url, None)):
            raise AuthError(
                f"the protected resource metadata at {url} is for {resource!r}, not for this server "
                f"({server_url}): refusing to log in (RFC 9728 §3.3)"
            )
        scopes = doc.get("scopes_supported")
        supported = tuple(s for s in scopes if isinstance(s, str)) if isinstance(scopes, list) else None
        return ResourceMetadata(
            resource, tuple(servers), supported, url, doc.get("dpop_bound_access_tokens_required") is True
        )
    raise AuthError(
        "the server asks for a login but publishes no protected resource metadata: tried " + ", ".join(tried)
    )


# -- authorization server metadata -----------------------------------------------------------------------


def metadata_urls(issuer: str) -> list[str]:
    """The well-known URLs of an issuer's metadata, in the order MCP gives (RFC 8414 §3.1, §5); built from the
    issuer as httpx reads it (protocol.md P120), `ValueError` if httpx cannot."""
    origin, path = sent_url.origin_and_path(issuer)
    if path:
        return [origin + OAUTH_SUFFIX + path, origin + OPENID_SUFFIX + path, origin + path + OPENID_SUFFIX]
    return [origin + OAUTH_SUFFIX, origin + OPENID_SUFFIX]


async def authorization_server(http: httpx.AsyncClient, issuer: str, server_url: str) -> ServerMetadata:
    """The issuer's metadata, validated: the same `issuer`, PKCE with S256, endpoints as `check_endpoint` allows
    for the MCP server at `server_url`."""
    check_endpoint(issuer, "authorization server", server_url)
    tried = []
    for url in metadata_urls(issuer):
        check_endpoint(url, "authorization server metadata URL", server_url)
        status, doc = await _get_json(http, url)
        if doc is None:
            tried.append(f"{url} ({status or 'no answer'})")
            continue
        if doc.get("issuer") != issuer:  # simple string comparison, no normalisation (protocol.md P51)
            tried.append(f"{url} (its issuer is {doc.get('issuer')!r}, not {issuer!r}: not used)")
            continue
        meta = ServerMetadata(issuer, doc, url)
        for name in ("authorization_endpoint", "token_endpoint"):
            if not isinstance(doc.get(name), str):
                raise AuthError(f"the metadata of {issuer} has no {name}")
            check_endpoint(doc[name], f"{name} of {issuer}", server_url)
        if meta.registration_endpoint is not None:
            check_endpoint(meta.registration_endpoint, f"registration_endpoint of {issuer}", server_url)
        if "S256" not in (meta.strings("code_challenge_methods_supported") or ()):
            raise AuthError(
                f"the authorization server {issuer} does not list S256 in code_challenge_methods_supported: "
                "without PKCE the client refuses to log in"
            )
        return meta
    raise AuthError(f"no usable metadata for the authorization server {issuer}: tried " + ", ".join(tried))
