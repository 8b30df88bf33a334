"""Peer server written with the official ``mcp`` SDK (mcp==2.3.0), for bench/compare and the interop tests.

The tool ``perform(action)`` asks the user for one boolean confirmation and returns ``done: <action>``.
It is written the way the SDK's documentation recommends for MCP 2026-07-28: the question hangs on a
parameter through a resolver (``Annotated[..., Resolve(fn)]`` with ``fn`` returning ``Elicit``), and
the SDK turns it into an ``input_required`` result with a sealed ``requestState`` and validates the
answer on the retry. It is served with ``mcp.run("streamable-http")``: stateless, at ``/mcp`` on
127.0.0.1 only, in the SDK's default SSE response mode (``--json`` for JSON responses, as the benchmark
asks for).

Run it in its own venv, never in Baton's: ``python -m venv V && V/bin/pip install mcp==2.3.0``
(bench/compare uses ``.cache/bench/mcp``, the interop tests ``.cache/interop/mcp``).
"""

# No `from __future__ import annotations`: the SDK reads the resolver annotations at registration.
import argparse
from typing import Annotated

from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve
from pydantic import BaseModel, Field


class Confirmation(BaseModel):
    """The form shown to the user."""

    confirm: bool = Field(description="Go ahead with the action?")


def ask_to_confirm(action: str) -> Elicit[Confirmation]:
    """Resolver: the question depends only on the tool's own argument, so it renders the same each round."""
    return Elicit(f"Go ahead with {action}?", Confirmation)


# The name is the audience sealed into every requestState: keep its length, or the bench's sizes move.
mcp = MCPServer("baton-peers-mcp", log_level="WARNING")


@mcp.tool()
async def perform(
    action: str,
    answer: Annotated[ElicitationResult[Confirmation], Resolve(ask_to_confirm)],
) -> str:
    """Perform an action once the user has confirmed it."""
    if isinstance(answer, AcceptedElicitation) and answer.data.confirm:
        return f"done: {action}"
    return f"not confirmed: {action}"


def main() -> None:
    parser = argparse.ArgumentParser(description="mcp 2.3.0 peer server (127.0.0.1, path /mcp).")
    parser.add_argument("--port", type=int, default=8765, help="TCP port on 127.0.0.1 (default 8765)")
    parser.add_argument("--json", action="store_true", help="JSON responses instead of the SDK's default SSE")
    opts = parser.parse_args()
    mcp.run("streamable-http", host="127.0.0.1", port=opts.port, json_response=opts.json, stateless_http=True)


if __name__ == "__main__":
    main()
