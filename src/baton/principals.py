"""Who is calling: principal hooks that read identity from the transport, never from the client's words.

- `bearer_jwt(...)`: verify `Authorization: Bearer <JWT>` (HTTP) with a configured key or a JWKS URL,
  checking signature, issuer, audience and expiry (PyJWT); a missing or bad token is refused (401).
- `os_user()`: the operating-system user running the server, for stdio (the default there).
- `anonymous()`: an explicit anonymous principal, for local development on HTTP (the default there).

Pass one as `Server(principal=...)`. What a client says about itself (`clientInfo`) is never used.
"""

from __future__ import annotations

import getpass
from collections.abc import Sequence
from typing import Any

from .auth.bearer import bearer_token
from .auth.claims import identity
from .auth.jwt_verify import DEFAULT_ALGORITHMS, JwtVerifier
from .server.exchange import PrincipalHook, RequestInfo, Unauthenticated


def anonymous(name: str = "anonymous") -> PrincipalHook:
    """Everyone is the same principal: for local development only."""

    def hook(info: RequestInfo) -> str:
        return name

    return hook


def os_user() -> PrincipalHook:
    """The OS user that runs the server (for stdio, where the user started the process)."""
    user = "os:" + getpass.getuser()

    def hook(info: RequestInfo) -> str:
        return user

    return hook


def bearer_jwt(
    *,
    issuer: str,
    audience: str | Sequence[str],
    key: Any = None,
    jwks_url: str | None = None,
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    claim: str = "sub",
    leeway_s: float = 30.0,
    jwks_ttl_s: float = 600.0,
) -> PrincipalHook:
    """Verify `Authorization: Bearer <JWT>`: signature (a `key` or the issuer's `jwks_url`), `iss`,
    `aud`, `exp` (required) and `nbf`; the principal is `<issuer>|<claim>`. Symmetric algorithms and
    `none` are not accepted. For scopes and the metadata a host needs to log in, use
    `Server(auth=baton.auth.OAuthResource(...))` instead."""
    verifier = JwtVerifier(
        issuer=issuer,
        audiences=[audience] if isinstance(audience, str) else list(audience),
        key=key,
        jwks_url=jwks_url,
        algorithms=algorithms,
        required=("exp", "iss", "aud", claim),
        leeway_s=leeway_s,
        jwks_ttl_s=jwks_ttl_s,
    )

    async def hook(info: RequestInfo) -> str:
        token = bearer_token(info, missing_error="invalid_request")
        claims = await verifier.claims(token)
        return identity(issuer, claims, claim)

    return hook


__all__ = ["DEFAULT_ALGORITHMS", "PrincipalHook", "Unauthenticated", "anonymous", "bearer_jwt", "os_user"]
