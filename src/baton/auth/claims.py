"""What Baton reads from a verified token's claims (a JWT's payload or an introspection answer): its
scopes (`scope`, space-separated, or `scp`, a list or a string), its audience, and the identity
`<issuer>|<sub>` that `requestState`, single use and the connect kit bind to."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..server.exchange import Unauthenticated
from ..server.scopes import is_scope_token
from .resource_uri import same_resource


def scopes_of(claims: Mapping[str, Any]) -> frozenset[str]:
    """The token's scopes: `scope` (RFC 8693 / RFC 9068, space-separated) else `scp` (a list or a string).

    The separator is the space character only (RFC 6749 section 3.3), not any Unicode whitespace, and
    an item that is not a valid scope-token is dropped: `"a\u00a0b"` is no scope, never `a` and `b`."""
    raw = claims.get("scope")
    if raw is None:
        raw = claims.get("scp")
    items = raw.split(" ") if isinstance(raw, str) else raw if isinstance(raw, list) else []
    return frozenset(item for item in items if is_scope_token(item))


def check_audience(claims: Mapping[str, Any], audiences: Sequence[str]) -> None:
    """Refuse a token not minted for one of `audiences` (RFC 8707): `aud` is a string or a list."""
    aud = claims.get("aud")
    values = [aud] if isinstance(aud, str) else [a for a in aud if isinstance(a, str)] if isinstance(aud, list) else []
    if not values:
        raise Unauthenticated("the token names no audience")
    if not any(same_resource(value, mine) for value in values for mine in audiences):
        raise Unauthenticated("the token was issued for another audience")


def identity(issuer: str, claims: Mapping[str, Any], claim: str = "sub") -> str:
    """`<issuer>|<sub>`, or `Unauthenticated` when the subject is missing."""
    subject = claims.get(claim)
    if not isinstance(subject, str) or not subject:
        raise Unauthenticated(f"the token has no {claim!r} claim")
    return f"{issuer}|{subject}"
