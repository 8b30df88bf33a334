"""The access token of a request: `Authorization: Bearer <token>` only (RFC 6750 section 2.1).

Tokens in a query string or a form body are never read (the MCP spec forbids them in the URI); a
request without the header presented no credentials (a challenge without an error code follows).
"""

from __future__ import annotations

from ..server.exchange import RequestInfo, Unauthenticated

MAX_TOKEN_CHARS = 16_384


def bearer_token(info: RequestInfo, *, missing_error: str | None = None) -> str:
    """The bearer token, or `Unauthenticated` (error `missing_error` when there is no header at all,
    `invalid_request` when the header is not a bearer credential)."""
    header = info.headers.get("authorization") if info.headers is not None else None
    if header is None or not header.strip():
        raise Unauthenticated("a bearer token is required", error=missing_error)
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise Unauthenticated("a bearer token is required (Authorization: Bearer <token>)", error="invalid_request")
    if len(token) > MAX_TOKEN_CHARS:
        raise Unauthenticated("the bearer token is too long")
    return token
