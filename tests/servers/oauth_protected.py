"""A server protected as an OAuth resource by the test authorization server (`oauth_as.py`).

Environment: `BATON_TEST_ISSUER` (the AS's issuer), `BATON_TEST_RESOURCE` (this server's MCP endpoint
URL, the tokens' audience); with `BATON_TEST_INTROSPECT=client_id:secret` tokens are introspected
(cache `BATON_TEST_CACHE_S`, default 2 s), else they are JWTs checked against the AS's JWKS.
Every request needs `mcp:read`; `mcp:admin` implies `files:read` and `files:write`.
"""

from __future__ import annotations

import os

from baton import Context, Server
from baton.auth import Introspection, OAuthResource

issuer = os.environ["BATON_TEST_ISSUER"]
introspect = os.environ.get("BATON_TEST_INTROSPECT")
if introspect:
    client_id, _, secret = introspect.partition(":")
    cache_s = float(os.environ.get("BATON_TEST_CACHE_S", "2"))
    verify: dict[str, object] = {
        "introspection": Introspection(f"{issuer}/introspect", client_id, secret, cache_ttl_s=cache_s)
    }
else:
    verify = {"jwks_url": f"{issuer}/jwks.json", "leeway_s": 0}

server = Server(
    "oauth-protected",
    auth=OAuthResource(
        resource=os.environ["BATON_TEST_RESOURCE"],
        issuer=issuer,
        scopes=["mcp:read"],
        implies={"mcp:admin": ["files:read", "files:write"]},
        resource_name="Baton OAuth test server",
        **verify,  # type: ignore[arg-type]
    ),
)


@server.tool()
def whoami(ctx: Context) -> str:
    """Who the caller is and which scopes its token carries."""
    return f"{ctx.principal} scopes={' '.join(sorted(ctx.scopes or ()))}"


@server.tool(scopes=["files:write"])
def write_file(name: str) -> str:
    """Needs files:write besides mcp:read."""
    return f"wrote {name}"


@server.tool(scopes="files:write")
async def deploy(ctx: Context, target: str) -> str:
    """Asks for a confirmation (an MRTR round) before it deploys."""
    ok = await ctx.confirm(f"Deploy to {target}?")
    return f"deployed to {target} by {ctx.principal}" if ok else "not deployed"


@server.resource("files://secret", scopes=["files:read"])
def secret() -> str:
    return "the secret file"


@server.resource("files://public")
def public() -> str:
    return "the public file"


@server.prompt(scopes=["files:read"])
def review(path: str) -> str:
    """A prompt that reads files."""
    return f"Review {path}"


@server.resource("files://docs/{name}", scopes=["files:read"])
def doc(name: str) -> str:
    return f"the doc {name}"


@server.completion
def complete(ref: dict[str, str], argument: dict[str, str], context: object) -> list[str]:
    """Completes file names, for the scoped `review` prompt and the scoped docs template alike."""
    return ["secret-a.txt", "secret-b.txt"]
