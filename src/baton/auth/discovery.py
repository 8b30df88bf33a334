"""Finding an authorization server's metadata from its issuer identifier, as the MCP spec orders it:
RFC 8414 `/.well-known/oauth-authorization-server`, then OpenID Connect `/.well-known/openid-configuration`,
with the well-known segment inserted before the issuer's path (and, for OpenID, appended after it too).

The document's `issuer` must be identical to the issuer asked for (RFC 8414 section 3.3), else it is
not used. `discover_issuer` is synchronous: `baton serve --auth-issuer` calls it once, before serving.
"""

from __future__ import annotations

from typing import Any

import httpx

from .. import sent_url
from ..oauth_http import sync_client
from .resource_uri import require_https


class DiscoveryError(Exception):
    """The issuer's metadata could not be found or used; the message lists what was tried."""


def metadata_urls(issuer: str) -> list[str]:
    """The well-known URLs to try, in order; built from the issuer as httpx reads it (protocol.md P120),
    `ValueError` if httpx cannot."""
    origin, path = sent_url.origin_and_path(issuer)
    if not path:
        return [f"{origin}/.well-known/oauth-authorization-server", f"{origin}/.well-known/openid-configuration"]
    return [
        f"{origin}/.well-known/oauth-authorization-server{path}",
        f"{origin}/.well-known/openid-configuration{path}",
        f"{origin}{path}/.well-known/openid-configuration",
    ]


def discover_issuer(issuer: str, *, timeout_s: float = 10.0) -> dict[str, Any]:
    """The authorization server metadata of `issuer`, or `DiscoveryError` saying why not."""
    try:
        require_https(issuer, "the issuer")
    except ValueError as exc:
        raise DiscoveryError(str(exc)) from None
    tried: list[str] = []
    with sync_client(timeout_s=timeout_s) as http:
        for url in metadata_urls(issuer):
            try:
                resp = http.get(url, headers={"accept": "application/json"})
            except httpx.HTTPError as exc:
                tried.append(f"{url}: {type(exc).__name__}")
                continue
            if resp.status_code != 200:
                tried.append(f"{url}: HTTP {resp.status_code}")
                continue
            try:
                document = resp.json()
            except ValueError:
                tried.append(f"{url}: not JSON")
                continue
            if not isinstance(document, dict):
                tried.append(f"{url}: not a JSON object")
                continue
            if document.get("issuer") != issuer:
                tried.append(f"{url}: names issuer {document.get('issuer')!r}, not {issuer!r}")
                continue
            return document
    raise DiscoveryError(f"cannot discover the authorization server {issuer}: " + "; ".join(tried))
