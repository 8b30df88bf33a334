"""Checking the authorization response (the redirect back from the authorization server) before using it.

In this order: the redirect goes to the redirect URI the client sent (scheme, host and port, path);
the `iss` parameter per RFC 9207 §2.4 as MCP 2026-07-28 tabulates it (protocol.md P56) — present: it
must equal the issuer recorded from the validated metadata, compared as plain strings with no
normalisation; absent: refused only if the metadata says
`authorization_response_iss_parameter_supported: true`; then `state` must equal the one sent; only
then is an `error` reported (its text is the server's, shown after the issuer checked out) or the
`code` returned. Nothing of a response that fails a check is acted on or shown.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from ..errors import AuthError


def _single(params: dict[str, list[str]], name: str) -> str | None:
    values = params.get(name)
    if not values:
        return None
    if len(values) > 1:
        raise AuthError(f"the authorization response carries {name} more than once: refused")
    return values[0]


def authorization_code(redirected_to: str, *, redirect_uri: str, state: str, issuer: str, iss_supported: bool) -> str:
    """The code of a valid authorization response; AuthError for anything else."""
    got, sent = urlsplit(redirected_to), urlsplit(redirect_uri)
    if (got.scheme, got.netloc.lower(), got.path or "/") != (sent.scheme, sent.netloc.lower(), sent.path or "/"):
        raise AuthError("the login ended at an address other than the redirect URI: refused")
    params = parse_qs(got.query, keep_blank_values=True)
    iss = _single(params, "iss")
    if iss is not None:
        if iss != issuer:
            raise AuthError(
                f"the authorization response names issuer {iss!r}, not {issuer!r}, whose login was started: "
                "refused (RFC 9207, a possible mix-up attack)"
            )
    elif iss_supported:
        raise AuthError(
            f"the authorization server {issuer} says it sends iss in authorization responses, and this one has none: "
            "refused (RFC 9207)"
        )
    if _single(params, "state") != state:
        raise AuthError("the authorization response's state is not the one sent: refused")
    error = _single(params, "error")
    if error is not None:
        description = _single(params, "error_description")
        raise AuthError(
            f"the authorization server refused the login: {error}" + (f" ({description})" if description else "")
        )
    code = _single(params, "code")
    if not code:
        raise AuthError("the authorization response carries no code")
    return code
