"""The scale-out tests' server, written only with Baton's public API: two questions, then one side effect.

`transfer(flow, amount)` asks a confirmation (round 1), then a note (round 2), then "executes" the
transfer (round 3): it appends `<flow> <instance>` to `$BATON_TEST_RUNLOG` with one O_APPEND write,
so the test counts executions per flow id without asking the ledger it is testing. The tool is
`single_use`, so every round after the first is claimed in `$BATON_LEDGER` (Redis in the tests).

`held_transfer(flow)` is the same after one confirmation, but it holds its reply until the file
`$BATON_TEST_GATE` exists: the test can then stop Redis between the run and the recording of its reply.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import TypedDict

from baton import Accepted, Context, Server

RUNLOG = os.environ["BATON_TEST_RUNLOG"]
INSTANCE = os.environ.get("BATON_INSTANCE", f"pid{os.getpid()}")
GATE = Path(os.environ.get("BATON_TEST_GATE", "/nonexistent/gate"))

server = Server("scaleout")  # keys from $BATON_KEY_FILE, ledger from $BATON_LEDGER


class Note(TypedDict):
    note: str


@server.tool(single_use=True)
async def transfer(ctx: Context, flow: str, amount: int) -> str:
    """Transfer `amount` for `flow` after a confirmation and a note; the transfer itself runs once."""
    if not await ctx.confirm(f"Transfer {amount} for flow {flow}?"):
        return f"cancelled {flow}"
    note = await ctx.elicit(Note, f"A note for the transfer of flow {flow}?")
    if not isinstance(note, Accepted):
        return f"cancelled {flow}"
    executed(flow)
    return f"done {flow} on {INSTANCE}: {note.data['note']}"


@server.tool(single_use=True)
async def held_transfer(ctx: Context, flow: str) -> str:
    """Transfer after a confirmation, then hold the reply until the test opens the gate (at most 30 s)."""
    if not await ctx.confirm(f"Transfer for flow {flow}?"):
        return f"cancelled {flow}"
    executed(flow)
    deadline = time.monotonic() + 30
    while not GATE.exists() and time.monotonic() < deadline:  # noqa: ASYNC110, ASYNC240 - a test's gate file
        await asyncio.sleep(0.02)
    return f"done {flow} on {INSTANCE}"


def executed(flow: str) -> None:
    """Record one execution of `flow`'s transfer: one O_APPEND write, atomic among the instances."""
    fd = os.open(RUNLOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{flow} {INSTANCE}\n".encode())
    finally:
        os.close(fd)
