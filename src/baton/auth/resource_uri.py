"""Resource identifiers (RFC 8707) and where their metadata lives (RFC 9728): one place for both.

`canonical_resource` is the comparison form the MCP spec describes: scheme and host lowercased (an
uppercase spelling is accepted), the default port dropped, an empty path and `/` the same at the root
only, and nothing else rewritten: `https://mcp.example.com/mcp/` is not `https://mcp.example.com/mcp`
(protocol.md P43). A fragment, a query or userinfo is refused (`ValueError`): they do not name a resource.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from .. import sent_url
from ..protocol.hosts import is_loopback

WELL_KNOWN_PRM = "/.well-known/oauth-protected-resource"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def canonical_resource(uri: str, *, what: str = "resource") -> str:
    """The canonical spelling of an absolute http(s) resource URI, or `ValueError` saying what is wrong."""
    try:
        parts = urlsplit(uri.strip())
        port = parts.port
    except ValueError as exc:
        raise ValueError(f"{what} {uri!r} is not a URL: {exc}") from None
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        raise ValueError(f"{what} {uri!r} must be an absolute http(s) URL such as https://mcp.example.com/mcp")
    if parts.fragment or "#" in uri:
        raise ValueError(f"{what} {uri!r} must not have a fragment")
    if parts.query:
        raise ValueError(f"{what} {uri!r} must not have a query")
    if parts.username is not None or parts.password is not None:
        raise ValueError(f"{what} {uri!r} must not carry userinfo")
    netloc = f"[{host}]" if ":" in host else host
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        netloc += f":{port}"
    path = "" if parts.path == "/" else parts.path
    return f"{scheme}://{netloc}{path}"


def same_resource(a: str, b: str) -> bool:
    """Whether two resource URIs name the same resource after canonicalisation (never raises)."""
    try:
        return canonical_resource(a) == canonical_resource(b)
    except ValueError:
        return a == b  # not URLs (a plain audience name): exact match only


def require_https(uri: str, what: str) -> None:
    """http is for loopback hosts only (development and tests); anything else must be https. `uri` is read by
    httpx's parser, which fetches the issuer, its keys and its introspection endpoint (protocol.md P120)."""
    try:
        parsed = sent_url.parse(uri)
    except ValueError as exc:
        raise ValueError(f"{what} {exc}") from None
    if parsed.scheme != "https" and not is_loopback(parsed.host):
        raise ValueError(f"{what} {uri!r} must use https (plain http is allowed on loopback hosts only)")


def metadata_path(resource: str) -> str:
    """Where the resource's metadata is published: `/.well-known/oauth-protected-resource` with the
    resource's path appended (RFC 9728 section 3.1), so `https://h/mcp` has `/.well-known/...-resource/mcp`."""
    return WELL_KNOWN_PRM + urlsplit(canonical_resource(resource)).path


def metadata_url(resource: str) -> str:
    """The absolute URL of the resource's metadata document."""
    parts = urlsplit(canonical_resource(resource))
    return f"{parts.scheme}://{parts.netloc}{metadata_path(resource)}"
