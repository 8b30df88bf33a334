"""Interop peer: a FastMCP 4.x server (fastmcp[tasks]==4.1.4) whose tools run as tasks of the 2026-07-28
Tasks extension (`io.modelcontextprotocol/tasks`, FastMCP's `TasksExtension` on Docket's in-memory
backend), for tests only. Its tasks ask to be polled every 200 ms.

`crunch(n)` runs as a task when the client opts in: it sleeps a second, then says
`crunched <n>`. `dawdle()` runs only as a task and takes a minute, to be cancelled. `approve(change)` runs
as a task and asks who approves while it runs: FastMCP 4 refuses `ctx.elicit` inside a task, so it asks
the guard way (returns an `InputRequiredResult`; the task parks in `input_required` and runs again once
the client answers with `tasks/update`); it says `approved <change> by <name>` or `refused <change>`.
`ask_inline()` asks with `ctx.elicit` inside its task, which FastMCP 4 answers with a tool error.

    python fastmcp4_tasks_server.py --port PORT

Stateless Streamable HTTP at 127.0.0.1:PORT/mcp. Runs in its own venv (`.cache/interop/fastmcp4tasks`),
never Baton's. (4.1.4: the newest `fastmcp-tasks` published; `fastmcp[tasks]==4.1.6` cannot install.)
"""

# No `from __future__ import annotations`: FastMCP reads the tool's annotations (Context) at registration.
import argparse
import asyncio
from datetime import timedelta

from fastmcp import Context, FastMCP
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

mcp = FastMCP("fastmcp4-tasks-peer")
mcp.add_extension(TasksExtension(url="memory://"))
POLL = timedelta(milliseconds=200)  # the pollIntervalMs a task says (FastMCP's default is 5 s)
NAME_FORM = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}


@mcp.tool(task=TaskConfig(poll_interval=POLL))
async def crunch(n: int) -> str:
    """Crunch n, in the background."""
    await asyncio.sleep(1)
    return f"crunched {n}"


@mcp.tool(task=TaskConfig(mode="required", poll_interval=POLL))
async def dawdle() -> str:
    """Take a minute (a task to cancel)."""
    await asyncio.sleep(60)
    return "dawdled"


@mcp.tool(task=TaskConfig(poll_interval=POLL))
async def approve(change: str, ctx: Context) -> str | InputRequiredResult:
    """Ask who approves the change, while running as a task."""
    answer = (ctx.input_responses or {}).get("who")
    if not isinstance(answer, ElicitResult):
        form = ElicitRequestFormParams(message=f"Who approves {change}?", requested_schema=NAME_FORM)
        return InputRequiredResult(input_requests={"who": ElicitRequest(params=form)})
    if answer.action == "accept" and answer.content:
        return f"approved {change} by {answer.content['name']}"
    return f"refused {change}"


@mcp.tool(task=TaskConfig(poll_interval=POLL))
async def ask_inline(ctx: Context) -> str:
    """Ask with `ctx.elicit` inside a task, which FastMCP 4 refuses (the task completes with a tool error)."""
    answer = await ctx.elicit("Anyone there?", str)
    return f"answered {answer.action}"


def main() -> None:
    parser = argparse.ArgumentParser(description="fastmcp 4 peer server with 2026-07-28 tasks (127.0.0.1).")
    parser.add_argument("--port", type=int, required=True, help="TCP port on 127.0.0.1")
    opts = parser.parse_args()
    mcp.run(
        transport="http", host="127.0.0.1", port=opts.port, stateless_http=True, show_banner=False, log_level="WARNING"
    )


if __name__ == "__main__":
    main()
