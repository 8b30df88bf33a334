"""A server for the `baton dev` page tests: a form with every field kind, a URL step, progress, logs, a
structured result that breaks its outputSchema, an error result, and a form with a secret-looking field."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Annotated, Literal

from baton import Accepted, Context, Field, Server, form

server = Server("dev-flows", instructions="Flows for the baton dev page tests.")


@form
@dataclass
class Signup:
    email: Annotated[str, Field(title="Email", format="email")]
    seats: Annotated[int, Field(title="Seats", minimum=1, maximum=5)]
    plan: Annotated[Literal["basic", "pro"], Field(title="Plan")] = "basic"
    newsletter: bool = False


@server.tool()
async def sign_up(ctx: Context, team: str) -> str:
    """Asks a form with an email, a bounded number, a choice and a box, then opens the billing page."""
    answer = await ctx.elicit(Signup, f"Sign up team {team}")
    if not isinstance(answer, Accepted):
        return f"no sign-up for {team}"
    billing = await ctx.elicit_url("Set up billing in your browser", "https://billing.example.com/setup")
    paid = "billing opened" if isinstance(billing, Accepted) else "no billing"
    return f"{team}: {answer.data.email}, {answer.data.seats} seats, {answer.data.plan}; {paid}"


@server.tool()
async def slow_count(ctx: Context, steps: int = 3) -> str:
    """Reports progress for each step, and logs as it goes."""
    for step in range(1, steps + 1):
        await ctx.progress(step, steps, f"step {step}")
        await ctx.log("info", f"counted {step}")
        await asyncio.sleep(0.2)
    return f"counted to {steps}"


@dataclass
class Count:
    total: int


@server.tool()
def count() -> Count:
    """Returns structured content, checked against its outputSchema."""
    return Count(3)


@server.tool()
def fails() -> str:
    """Always fails as a tool (isError)."""
    raise RuntimeError("the tool failed on purpose")


@server.tool()
def grow() -> str:
    """Adds a tool, so the page hears tools/list_changed and lists it."""

    def grown() -> str:
        """Added by grow()."""
        return "grown"

    server.add_tool(grown)
    return "added a tool"


@form(allow_secrets=True)
@dataclass
class Deploy:
    target: Annotated[str, Field(title="Target")]
    api_key: Annotated[str, Field(title="API key")]


@server.tool()
async def deploy(ctx: Context) -> str:
    """Asks a form whose second field looks like a secret (the page masks what was sent)."""
    answer = await ctx.elicit(Deploy, "Where to deploy?")
    return f"deployed to {answer.data.target}" if isinstance(answer, Accepted) else "not deployed"
