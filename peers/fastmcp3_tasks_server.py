"""Interop peer: a FastMCP 3.x server (fastmcp[tasks]==3.4.11) with tools that run as 2025-11-25 experimental
tasks (SEP-1686, on Docket's in-memory backend), for tests only. FastMCP 4 serves tasks only as the 2026-07-28
extension; 3.x is the last to serve them to 2025-11-25 sessions.

`crunch(n)` runs as a task (`task=True`): it sleeps a little, then says `crunched <n>`. `approve(change)` runs
as a task and asks while it runs (`ctx.elicit`: FastMCP parks the task in `input_required` and sends the
question on the session); it says `approved <change> by <name>` or `refused <change>`. `hello` is a plain tool.

    python fastmcp3_tasks_server.py --port PORT

Stateful Streamable HTTP at 127.0.0.1:PORT/mcp. Runs in its own venv (`.cache/interop/fastmcp3`), never Baton's.
"""

# No `from __future__ import annotations`: FastMCP reads the tool's annotations (Context) at registration.
import argparse
import asyncio
from dataclasses import dataclass

from fastmcp import Context, FastMCP

mcp = FastMCP("fastmcp3-tasks-peer")


@dataclass
class Approval:
    name: str


@mcp.tool(task=True)
async def crunch(n: int) -> str:
    """Crunch n, in the background."""
    await asyncio.sleep(0.3)
    return f"crunched {n}"


@mcp.tool(task=True)
async def approve(change: str, ctx: Context) -> str:
    """Ask who approves the change, while running as a task."""
    answer = await ctx.elicit(f"Who approves {change}?", Approval)
    if answer.action == "accept":
        return f"approved {change} by {answer.data.name}"
    return f"refused {change}"


@mcp.tool()
def hello() -> str:
    """A plain tool."""
    return "hello"


def main() -> None:
    parser = argparse.ArgumentParser(description="fastmcp 3.4.11 peer server with 2025-11-25 tasks (127.0.0.1).")
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    opts = parser.parse_args()
    mcp.run(
        transport="http", host="127.0.0.1", port=opts.port, stateless_http=False, show_banner=False, log_level="WARNING"
    )


if __name__ == "__main__":
    main()
