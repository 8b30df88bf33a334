"""A server whose callers are identified by verified bearer JWTs (issuer keys from a JWKS URL)."""

from __future__ import annotations

import os

from baton import Context, Server
from baton.principals import bearer_jwt

server = Server(
    "jwt-guarded",
    principal=bearer_jwt(
        issuer="https://issuer.test", audience="https://mcp.test", jwks_url=os.environ["BATON_TEST_JWKS"]
    ),
)


@server.tool()
async def whoami(ctx: Context) -> str:
    """Asks a confirmation, then says who the caller is."""
    ok = await ctx.confirm("Show who you are?")
    return f"{ctx.principal} ok={ok}"
