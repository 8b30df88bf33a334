"""The client login's pure rules, with no I/O and no HTTP library: which URLs may carry a bearer token, the
token endpoint's authentication methods, what a Client ID Metadata Document URL must be, how an OAuth
error reads.

`OAuth` (config.py) checks its arguments with them when a host builds it; the login's modules, which
import httpx, are loaded only when a server first asks for a login.
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit

from ...protocol.hosts import is_loopback

METHODS = ("client_secret_basic", "client_secret_post", "none")  # token endpoint authentication
HTTP_TIMEOUT_S = 60.0  # the default of OAuth(http_timeout_s=...)


def may_carry_tokens(server_url: str) -> bool:
    """Whether a bearer token may be sent to `server_url`: https, or http to a loopback host (protocol.md P52).
    `server_url` is read as Baton's MCP transport reads it (urlsplit); see `scheme_may_carry_tokens`."""
    try:
        parts = urlsplit(server_url)
        host = parts.hostname or ""
    except ValueError:
        return False
    return scheme_may_carry_tokens(parts.scheme, host)


def scheme_may_carry_tokens(scheme: str, host: str) -> bool:
    """The rule of `may_carry_tokens` on a scheme and host already read by the parser of whatever sends there."""
    scheme = scheme.lower()
    return bool(host) and (scheme == "https" or (scheme == "http" and is_loopback(host)))


def check_metadata_url(url: str) -> str:
    """A Client ID Metadata Document URL must be https with a path (draft-ietf-oauth-client-id-metadata-document)."""
    parts = urlsplit(url)
    if parts.scheme != "https" or not parts.hostname or parts.path in ("", "/") or parts.fragment:
        raise ValueError(f"client_metadata_url must be an https URL with a path, not {url!r}")
    return url


def check_dpop(value: object) -> bool | Literal["auto"]:
    """`value` if it is a choice of DPoP (`True`, `False` or `"auto"`), else a `ValueError`."""
    if value is True or value is False or value == "auto":
        return value
    raise ValueError(f"dpop is True, False or 'auto', not {value!r}")


def error_text(error: object, description: object) -> str | None:
    """An OAuth error as people read it, `error (description)`; None when `error` is no string."""
    if not isinstance(error, str):
        return None
    return error + (f" ({description})" if isinstance(description, str) and description else "")
