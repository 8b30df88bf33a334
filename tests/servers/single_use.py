"""A server with a single-use tool whose body logs every run; principal from `Authorization: Bearer <name>`."""

from __future__ import annotations

import asyncio
import os
import secrets

from baton import Context, RequestInfo, Server

RUNLOG = os.environ["BATON_TEST_RUNLOG"]


def principal(info: RequestInfo) -> str | None:
    # Test stand-in for token verification: the bearer value names the caller.
    auth = (info.headers.get("authorization") if info.headers is not None else None) or ""
    return auth.removeprefix("Bearer ").strip() or None


server = Server("single-use", principal=principal)  # ledger from $BATON_LEDGER


@server.tool(single_use=True)
async def transfer(ctx: Context, amount: int) -> str:
    """Moves money once per confirmation, however often the final round is sent."""
    if not await ctx.confirm(f"Transfer {amount}?"):
        return "cancelled"
    run = secrets.token_hex(8)
    with open(RUNLOG, "a") as fh:  # noqa: ASYNC230 - a tiny append in a test server
        fh.write(f"{run} pid={os.getpid()}\n")
    await asyncio.sleep(0.3)  # long enough for duplicates to arrive while the round runs
    return f"transferred {amount} (run {run})"
