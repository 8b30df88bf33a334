"""A server with no auth of its own, for `baton serve --auth-issuer ... --auth-audience ...`: one tool
without extra scopes, one that needs `files:write`."""

from __future__ import annotations

from baton import Context, Server

server = Server("oauth-plain")


@server.tool()
def whoami(ctx: Context) -> str:
    return f"{ctx.principal} scopes={' '.join(sorted(ctx.scopes or ()))}"


@server.tool(scopes=["files:write"])
def write_file(name: str) -> str:
    return f"wrote {name}"
