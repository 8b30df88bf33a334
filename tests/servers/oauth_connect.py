"""A server protected by the test authorization server that also asks its users things: a form, and an
API key through the connect kit (`ctx.secret`), for the client's end-to-end test (tests/auth/test_auth_e2e.py).

Environment: `BATON_TEST_ISSUER` (the AS's issuer), `BATON_TEST_RESOURCE` (this server's MCP endpoint
URL), `BATON_TEST_PUBLIC_URL` (the connect pages' origin). Every request needs `mcp:read`; `order`
also needs `files:write`, so a client that logged in for `mcp:read` steps up first.
"""

from __future__ import annotations

import hashlib
import os

from baton import Context, Server
from baton.auth import OAuthResource
from baton.connect import ConnectKit

issuer = os.environ["BATON_TEST_ISSUER"]
server = Server(
    "oauth-connect",
    auth=OAuthResource(
        resource=os.environ["BATON_TEST_RESOURCE"],
        issuer=issuer,
        jwks_url=f"{issuer}/jwks.json",
        scopes=["mcp:read"],
        resource_name="Baton OAuth + connect kit test server",
    ),
    public_url=os.environ["BATON_TEST_PUBLIC_URL"],
    connect=ConnectKit(),
)


@server.tool(scopes=["files:write"])
async def order(ctx: Context, item: str) -> str:
    """Asks the user to confirm (a form) before it orders."""
    ok = await ctx.confirm(f"Order {item}?")
    return f"ordered {item} for {ctx.principal}" if ok else "not ordered"


@server.tool()
async def weather(ctx: Context, city: str) -> str:
    """Calls a (pretend) weather API with the caller's own API key; returns a digest of it, never the key."""
    handle = await ctx.secret("weather_api_key", "Connect your weather service account")
    key = await handle.reveal()
    return f"weather in {city} for {handle.principal}, key digest {hashlib.sha256(key.encode()).hexdigest()[:16]}"
