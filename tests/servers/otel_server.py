"""The telemetry tests' server: one tool that asks two questions in one round, then does its work in a span
of its own (when the process traces), and one that says which OpenTelemetry modules the process imported."""

from __future__ import annotations

import os
import sys
from typing import TypedDict

from baton import Accepted, Context, Server

server = Server("otel-tests", trace_arguments=os.environ.get("BATON_TEST_TRACE_ARGUMENTS") == "1")


class Note(TypedDict):
    note: str


@server.tool()
async def book(ctx: Context, city: str, card: str) -> str:
    """Book a trip to `city` after a confirmation and a note for the agent."""
    confirmed, note = await ctx.gather(
        ctx.confirm(f"Book {city}?", key="confirm"), ctx.elicit(Note, "A note?", key="note")
    )
    if not confirmed or not isinstance(note, Accepted):
        return "not booked"
    if "opentelemetry.trace" in sys.modules:  # the handler's own span nests in the round's server span
        from opentelemetry import trace

        with trace.get_tracer("otel-tests").start_as_current_span("reserve seat"):
            pass
    return f"booked {city} for card ending {card[-4:]}"


@server.tool()
def otel_modules() -> str:
    """The `opentelemetry` modules this process has imported, comma-separated."""
    return ",".join(sorted(name for name in sys.modules if name.split(".")[0] == "opentelemetry"))
