"""`OAuth`: what the host decides about logging in (`Client(url, auth=OAuth(...))`).

The host chooses where the browser part happens: `open_browser` is a coroutine function that gets the
authorization URL and returns the URL the browser was redirected to (the redirect URI with `code`,
`state`, `iss`...). How it gets there is the host's business: a system browser and a loopback listener
(`LoopbackRedirect`, what `baton call` uses), an embedded web view, a test driving Chromium. The
rest is configuration: the redirect URI, where tokens are kept, the client to use (pre-registered,
a Client ID Metadata Document URL, else Dynamic Client Registration), extra scopes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import Literal
from urllib.parse import urlsplit

from .rules import HTTP_TIMEOUT_S, METHODS, check_dpop, check_metadata_url, may_carry_tokens
from .store import MemoryStore, TokenStore

OpenBrowser = Callable[[str], Awaitable[str]]
"""Gets the authorization URL; returns the full URL the browser was redirected to."""
LOGIN_TIMEOUT_S = 300.0


class OAuth:
    """Log in with OAuth 2.1 (authorization code, PKCE) when an HTTP server answers 401.

    `redirect_uri`: https, or http to a loopback host (RFC 8252); it is registered with the
    authorization server. `open_browser(url) -> redirected_url`: the browser part. `store`: where
    tokens and dynamic registrations are kept (`MemoryStore()` by default, `FileStore()` for a file
    only the user can read). `client_id` / `client_secret` / `issuer`: a pre-registered client and the
    authorization server it belongs to (required with a secret; for a public client without one,
    the first server this object is used with, remembered in the store);
    `client_auth_method` says how it authenticates at the token endpoint (`client_secret_basic`,
    `client_secret_post` or `none`; by default chosen from the server's metadata).
    `client_metadata_url`: the https URL of this client's Client ID Metadata Document, used as its
    client_id where the authorization server supports that. `client_name`: shown on consent pages
    (dynamic registration). `scopes`: added to what the server asks for. `login_timeout_s`: how long
    the person may take at the browser. `http_timeout_s`: how long the rest of one login may take in
    all (discovery, registration, refresh, code exchange; protocol.md P49). `dpop`: bind tokens to a key of
    this client's (RFC 9449) where the server asks for it (`"auto"`: its challenge says DPoP, or its metadata
    requires it), always (`True`; refused where the authorization server does not offer it), or never.
    """

    def __init__(
        self,
        *,
        redirect_uri: str,
        open_browser: OpenBrowser,
        store: TokenStore | None = None,
        client_id: str | None = None,
        client_secret: str | None = None,
        client_auth_method: str | None = None,
        issuer: str | None = None,
        client_metadata_url: str | None = None,
        client_name: str = "Baton",
        scopes: Iterable[str] = (),
        login_timeout_s: float = LOGIN_TIMEOUT_S,
        http_timeout_s: float = HTTP_TIMEOUT_S,
        dpop: bool | Literal["auto"] = "auto",
    ) -> None:
        if not may_carry_tokens(redirect_uri) or urlsplit(redirect_uri).fragment:
            raise ValueError(f"redirect_uri must be https, or http to this computer (127.0.0.1), not {redirect_uri!r}")
        if (client_secret is not None or client_auth_method is not None) and client_id is None:
            raise ValueError("client_secret and client_auth_method belong to a pre-registered client_id")
        if client_secret is not None and issuer is None:  # protocol.md P53
            raise ValueError(
                "a pre-registered client_secret belongs to one authorization server: give its issuer= "
                "(the secret is then never sent to any other)"
            )
        if client_auth_method not in (None, *METHODS):
            raise ValueError(f"client_auth_method is one of {', '.join(METHODS)}, not {client_auth_method!r}")
        self.redirect_uri = redirect_uri
        self.open_browser = open_browser
        self.store: TokenStore = store if store is not None else MemoryStore()
        self.client_id = client_id
        self.client_secret = client_secret
        self.client_auth_method = client_auth_method
        self.issuer = issuer
        self.bound_issuer = issuer  # a public pre-registered client without issuer=: set on first use (P53)
        self.client_metadata_url = check_metadata_url(client_metadata_url) if client_metadata_url else None
        self.client_name = client_name
        self.scopes = tuple(dict.fromkeys(scopes if not isinstance(scopes, str) else scopes.split()))
        self.login_timeout_s = login_timeout_s
        self.http_timeout_s = http_timeout_s
        self.dpop = check_dpop(dpop)

    def __repr__(self) -> str:  # never the secret
        client = f", client_id={self.client_id!r}" if self.client_id else ""
        return f"OAuth(redirect_uri={self.redirect_uri!r}, store={self.store!r}{client})"
