"""Peer server for the MRTR benchmark, written with the official ``mcp`` SDK (mcp==2.3.0).

The tool ``perform(action)`` asks the user for one boolean confirmation and returns ``done: <action>``.
It is written the way the SDK's documentation recommends for MCP 2026-07-28: the question hangs on a
parameter through a resolver (``Annotated[..., Resolve(fn)]`` with ``fn`` returning ``Elicit``), and
the SDK turns it into an ``input_required`` result with a sealed ``requestState`` and validates the
answer on the retry. It is served with ``mcp.run("streamable-http")``: stateless, JSON responses
(``--sse`` for the SDK's SSE response mode), on 127.0.0.1 only.

Run it in its own venv: ``python -m venv V && V/bin/pip install mcp==2.3.0``.
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


mcp = MCPServer("baton-bench-mcp", log_level="WARNING")


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
    parser = argparse.ArgumentParser(description="mcp 2.3.0 peer server for bench/load.py (127.0.0.1).")
    parser.add_argument("--port", type=int, default=8765, help="TCP port on 127.0.0.1 (default 8765)")
    parser.add_argument("--sse", action="store_true", help="the SDK's SSE response mode instead of JSON")
    opts = parser.parse_args()
    mcp.run("streamable-http", host="127.0.0.1", port=opts.port, json_response=not opts.sse, stateless_http=True)


if __name__ == "__main__":
    main()
