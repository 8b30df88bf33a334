"""Logging in to protected MCP servers: OAuth 2.1 with PKCE, as MCP's authorization spec describes (both eras).

`Client(url, auth=OAuth(redirect_uri=..., open_browser=...))` sends no token until the server answers
401; then it discovers who issues tokens (`discovery`), registers or picks a client (`registration`),
sends the person's browser to the authorization server and checks what comes back (`flow`,
`response`), and retries the request with the token, which every later request carries (`pool`,
`login`), within the size and time bounds of `limits`. Scopes follow `scopes`; tokens are kept in
a `store`. `LoopbackRedirect` is the browser part for a program on the user's computer. The
decisions are protocol.md P48-P59. A program with no person logs in with `ClientCredentials`, `WorkloadIdentity` or
`EnterpriseLogin` instead (`machine`, P195-P196). Needs Authlib (Baton's `[oauth]` extra).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...lazy_exports import lazy_exports

if TYPE_CHECKING:
    from ..errors import AuthError
    from .config import OAuth, OpenBrowser
    from .loopback import LoopbackRedirect
    from .machine import ClientCredentials, EnterpriseLogin, ProgramLogin, WorkloadIdentity
    from .store import FileStore, MemoryStore, TokenStore, default_path

# Each public name and the module it lives in, imported on first use (baton.lazy_exports).
_WHERE = {
    "AuthError": "..errors",
    "OAuth": ".config",
    "OpenBrowser": ".config",
    "LoopbackRedirect": ".loopback",
    "ClientCredentials": ".machine",
    "EnterpriseLogin": ".machine",
    "ProgramLogin": ".machine",
    "WorkloadIdentity": ".machine",
    "FileStore": ".store",
    "MemoryStore": ".store",
    "TokenStore": ".store",
    "default_path": ".store",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = [
    "AuthError",
    "ClientCredentials",
    "EnterpriseLogin",
    "FileStore",
    "LoopbackRedirect",
    "MemoryStore",
    "OAuth",
    "OpenBrowser",
    "ProgramLogin",
    "TokenStore",
    "WorkloadIdentity",
    "default_path",
]
