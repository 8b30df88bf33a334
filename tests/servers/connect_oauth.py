"""A server whose tool calls a third party with the caller's OAuth token, obtained with `ctx.connect`.

The provider is the Authlib authorization server of `connect_oauth_as.py` at `$BATON_TEST_AS_URL`; the
public URL comes from `$BATON_TEST_PUBLIC_URL`; the principal from `Authorization: Bearer <name>`.
"""

from __future__ import annotations

import hashlib
import json
import os

from baton import Context, RequestInfo, Server
from baton.connect import ConnectKit, OAuthProvider

AS_URL = os.environ["BATON_TEST_AS_URL"]
acme = OAuthProvider("acme", "baton-test", f"{AS_URL}/authorize", f"{AS_URL}/token", scope="read")


def principal(info: RequestInfo) -> str | None:
    auth = (info.headers.get("authorization") if info.headers is not None else None) or ""
    return auth.removeprefix("Bearer ").strip() or None


server = Server(
    "connect-oauth",
    principal=principal,
    public_url=os.environ["BATON_TEST_PUBLIC_URL"],
    connect=ConnectKit(providers=[acme]),
)


@server.tool()
async def inbox(ctx: Context) -> str:
    """Reads the caller's (pretend) Acme inbox with their own access token."""
    handle = await ctx.connect("acme")
    token = json.loads(await handle.reveal())["access_token"]
    return f"inbox of {handle.principal}, token digest {hashlib.sha256(token.encode()).hexdigest()[:16]}"
