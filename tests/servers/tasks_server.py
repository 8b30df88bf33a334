"""The task kill test's server, written only with Baton's public API: a task of `ctx.once` steps.

`steps(n, pause)` runs as a task; each step sleeps `pause` seconds, then appends `step<i> <instance>` to
`$BATON_TEST_RUNLOG` (one O_APPEND write, atomic among the instances), inside `ctx.once`: the test counts
where and how often each step ran. Leases are `$BATON_TEST_TASK_LEASE_MS` (one second by default), so a
task whose instance is killed is taken over quickly.
"""

from __future__ import annotations

import asyncio
import os

from baton import Context, Server

RUNLOG = os.environ["BATON_TEST_RUNLOG"]
INSTANCE = os.environ.get("BATON_INSTANCE", f"pid{os.getpid()}")
LEASE_MS = int(os.environ.get("BATON_TEST_TASK_LEASE_MS", "1000"))

server = Server("tasks-scaleout", task_lease_ms=LEASE_MS, task_poll_interval_ms=100)  # ledger: $BATON_LEDGER


@server.tool(task="required")
async def steps(ctx: Context, n: int = 6, pause: float = 0.4) -> str:
    """Run `n` steps of `pause` seconds each, each once."""
    for i in range(n):
        await ctx.once(f"step{i}", lambda i=i: step(i, pause))  # type: ignore[misc]
    return f"{n} steps done"


async def step(i: int, pause: float) -> int:
    await asyncio.sleep(pause)
    fd = os.open(RUNLOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"step{i} {INSTANCE}\n".encode())
    finally:
        os.close(fd)
    return i
