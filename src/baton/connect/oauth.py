"""Third-party OAuth 2.1 for `ctx.connect(provider)`: the authorization code flow with PKCE (S256), via Authlib.

The connect page of an `oauth:<provider>` ticket mints a one-time `state` (itself a ticket, bound to the
principal and to the connect ticket, holding the PKCE verifier server-side) and redirects the browser to
the provider; `/connect/callback` redeems that `state` once, exchanges the code (with the verifier) and
stores the token response in the vault under `oauth:<provider>`. The exchange goes through
`baton.oauth_http`: a capped body, bounded time, no redirects, no proxy from the environment.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Any

STATE_PREFIX = "oauth-state"


@dataclass(frozen=True)
class OAuthProvider:
    """A third party the user connects to; `client_secret` is None for a public client."""

    name: str
    client_id: str
    authorize_url: str
    token_url: str
    scope: str | None = None
    client_secret: str | None = field(default=None, repr=False)

    @property
    def vault_name(self) -> str:
        return f"oauth:{self.name}"


def new_verifier() -> str:
    """A PKCE code verifier: 64 characters of base64url (RFC 7636 allows 43 to 128)."""
    return secrets.token_urlsafe(48)


def _client(provider: OAuthProvider, redirect_uri: str) -> Any:
    from ..oauth_http import oauth2_client  # noqa: PLC0415 (httpx and Authlib load with a provider's first login)

    return oauth2_client(
        client_id=provider.client_id,
        client_secret=provider.client_secret,
        scope=provider.scope,
        redirect_uri=redirect_uri,
        code_challenge_method="S256",
        token_endpoint_auth_method="client_secret_post" if provider.client_secret else "none",
    )


def authorization_url(provider: OAuthProvider, redirect_uri: str, state: str, verifier: str) -> str:
    client = _client(provider, redirect_uri)
    url, _ = client.create_authorization_url(provider.authorize_url, state=state, code_verifier=verifier)
    return str(url)


async def exchange(provider: OAuthProvider, redirect_uri: str, code: str, verifier: str) -> dict[str, Any]:
    """Trade the authorization code (and the PKCE verifier) for the provider's token response."""
    async with _client(provider, redirect_uri) as client:
        token = await client.fetch_token(provider.token_url, code=code, code_verifier=verifier)
    return dict(token)
