"""Interop peer: an MCP 2026-07-28 server written with the official `mcp` SDK (mcp==2.3.0), for tests only.

`perform(action)` asks one boolean confirmation through MRTR form elicitation, the way the SDK's docs
recommend: a resolver (`Annotated[..., Resolve(fn)]`, `fn` returning `Elicit`) that the SDK turns into an
`input_required` result with a sealed `requestState`. Stateless Streamable HTTP at `/mcp` on 127.0.0.1.
Runs in its own venv (`.cache/interop/mcp`), never in Baton's.
"""

# No `from __future__ import annotations`: the SDK evaluates the resolver annotations at registration.
import argparse
from typing import Annotated

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel, Field


class Confirmation(BaseModel):
    """The one-field form the user fills in."""

    confirm: bool = Field(description="Go ahead?")


def confirmation_for(action: str) -> Elicit[Confirmation]:
    """The question; it depends only on the tool argument, so it renders the same on every round."""
    return Elicit(f"Perform {action}?", Confirmation)


server = MCPServer("interop-mcp", log_level="WARNING")


@server.tool()
async def perform(
    action: str,
    answer: Annotated[ElicitationResult[Confirmation], Resolve(confirmation_for)],
) -> str:
    """Perform an action once the user has confirmed it."""
    if isinstance(answer, AcceptedElicitation) and answer.data.confirm:
        return f"done: {action}"
    return f"not confirmed: {action}"


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp 2.3.0 interop peer server (127.0.0.1, path /mcp)")
    parser.add_argument("--port", type=int, required=True)
    opts = parser.parse_args()
    server.run("streamable-http", host="127.0.0.1", port=opts.port, stateless_http=True)


if __name__ == "__main__":
    main()
