"""The access token of a request: `Authorization: Bearer <token>` (RFC 6750 section 2.1), or `DPoP <token>` for a
DPoP-bound one (RFC 9449 section 7.1; `presented_token`).

Tokens in a query string or a form body are never read (the MCP spec forbids them in the URI). A
request without the header, or with another scheme (`Basic ...`), presented no bearer credentials:
a 401 challenge without an error code follows (RFC 6750 section 3.1: "attempted using an unsupported
authentication method"). A malformed bearer credential (`Bearer`, `Bearer a b`) is `invalid_request`,
still with 401, not the 400 RFC 6750 suggests, so an MCP client starts its authorization flow
(protocol.md P47).
"""

from __future__ import annotations

from ..server.exchange import RequestInfo, Unauthenticated

MAX_TOKEN_CHARS = 16_384


def bearer_token(info: RequestInfo, *, missing_error: str | None = None) -> str:
    """The bearer token, or `Unauthenticated` (error `missing_error` when there is no bearer credential
    at all, `invalid_request` when the bearer credential is malformed)."""
    return presented_token(info, missing_error=missing_error, schemes=("bearer",))[1]


def presented_token(
    info: RequestInfo, *, missing_error: str | None = None, schemes: tuple[str, ...] = ("bearer", "dpop")
) -> tuple[str, str]:
    """The scheme (lowercase, one of `schemes`) and the access token of the request, or `Unauthenticated`."""
    header = info.headers.get("authorization") if info.headers is not None else None
    wanted = (
        "a DPoP-bound token is required (Authorization: DPoP <token>, with a DPoP proof)"
        if schemes == ("dpop",)
        else "a bearer token is required (Authorization: Bearer <token>)"
    )
    if header is None or not header.strip():
        raise Unauthenticated(wanted.split(" (", 1)[0], error=missing_error)
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    scheme = scheme.lower()
    if scheme not in schemes:
        raise Unauthenticated(wanted, error=missing_error)
    if not token or " " in token:
        raise Unauthenticated(wanted, error="invalid_request")
    if len(token) > MAX_TOKEN_CHARS:
        raise Unauthenticated("the bearer token is too long")
    return scheme, token
