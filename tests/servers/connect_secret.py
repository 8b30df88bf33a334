"""A server whose tool needs the caller's API key, asked with `ctx.secret`; principal from `Bearer <name>`.

The public URL comes from `$BATON_TEST_PUBLIC_URL` (the test picks the port); stores are SQLite in the
test's data directory. The tool proves it can use the key by returning a digest of it, never the key.
"""

from __future__ import annotations

import hashlib
import os

from baton import Context, RequestInfo, Server
from baton.connect import ConnectKit


def principal(info: RequestInfo) -> str | None:
    # Test stand-in for token verification: the bearer value names the caller.
    auth = (info.headers.get("authorization") if info.headers is not None else None) or ""
    return auth.removeprefix("Bearer ").strip() or None


server = Server(
    "connect-secret",
    principal=principal,
    public_url=os.environ["BATON_TEST_PUBLIC_URL"],
    connect=ConnectKit(hold_s=float(os.environ.get("BATON_TEST_HOLD_S", "0"))),
)


@server.tool()
async def weather(ctx: Context, city: str) -> str:
    """Calls a (pretend) weather API with the caller's own API key."""
    handle = await ctx.secret("weather_api_key", "Connect your weather service account")
    key = await handle.reveal()
    return f"weather in {city} for {handle.principal}, key digest {hashlib.sha256(key.encode()).hexdigest()[:16]}"
