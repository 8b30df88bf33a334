"""A test server whose handlers record every time their body runs, to prove what did not run."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Annotated, Literal

from baton import Accepted, Context, Field, RequestInfo, Server, form

RUNLOG = os.environ.get("BATON_TEST_RUNLOG")


def principal(info: RequestInfo) -> str | None:
    # Test stand-in for token verification: the bearer value names the caller.
    auth = (info.headers or {}).get("authorization", "")
    return auth.removeprefix("Bearer ").strip() or None


server = Server("guarded", principal=principal, state_ttl_s=int(os.environ.get("BATON_TEST_TTL", "600")))


def ran(what: str) -> None:
    if RUNLOG:
        with open(RUNLOG, "a") as fh:
            fh.write(f"{what} pid={os.getpid()}\n")


@form
@dataclass
class Profile:
    age: Annotated[int, Field(minimum=18, maximum=130)]
    plan: Literal["free", "pro"]
    nickname: str = "anon"


@server.tool()
async def delete_project(ctx: Context, project: str) -> str:
    """Deletes a project after confirmation."""
    ran(f"delete_project:{project}")
    if not await ctx.confirm(f"Delete {project}?"):
        return "kept"
    ran(f"deleted:{project}")
    return f"deleted {project}"


@server.tool()
async def archive_project(ctx: Context, project: str) -> str:
    """The same shape of question as delete_project, for cross-tool replay."""
    ran(f"archive_project:{project}")
    if not await ctx.confirm(f"Delete {project}?"):
        return "kept"
    return f"archived {project}"


@server.tool()
async def profile(ctx: Context) -> str:
    """Asks a typed form."""
    answer = await ctx.elicit(Profile, "Your profile?", key="profile")
    if isinstance(answer, Accepted):
        return f"{answer.data.age}/{answer.data.plan}/{answer.data.nickname}"
    return type(answer).__name__


@server.tool()
async def swallow(ctx: Context) -> str:
    """Catches everything, the suspension included, and tries to return anyway."""
    try:
        ok = await ctx.confirm("Proceed?")
    except BaseException:
        return "swallowed"
    return f"ok={ok}"


@server.tool()
async def two_steps(ctx: Context) -> str:
    """Two rounds, with a step that must run once per flow."""
    quote = await ctx.once("quote", lambda: (ran("quote"), 42)[1])
    first = await ctx.confirm(f"Accept quote {quote}?", key="accept")
    second = await ctx.confirm("Really?", key="really")
    return f"pid={os.getpid()} quote={quote} first={first} second={second}"


@server.tool()
async def slow(ctx: Context, seconds: float = 5.0) -> str:
    """Sleeps, so that cancellation can be observed."""
    import asyncio

    ran("slow:start")
    await asyncio.sleep(seconds)
    ran("slow:end")
    return "slept"
