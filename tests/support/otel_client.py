"""Run by tests/telemetry/test_otel.py: Baton's client, traced through the standard variables, drives one flow whose
first round goes to `$OTEL_TEST_A` and second to `$OTEL_TEST_B` (step mode, one client each), inside a
span of the caller's own; then lists the tools of a stdio server. Prints the caller's trace id."""

from __future__ import annotations

import asyncio
import os
import sys

from opentelemetry import trace

from baton import Accepted
from baton.client import Client, Round
from baton.telemetry.setup import from_env


async def main() -> None:
    a, b = os.environ["OTEL_TEST_A"], os.environ["OTEL_TEST_B"]
    with trace.get_tracer("otel-test-client").start_as_current_span("plan a trip") as span:
        async with Client(a, declare=("form",), protocol="2026-07-28") as first:
            step = await first.start(
                "tools/call", {"name": "book", "arguments": {"city": "Oslo", "card": "CARD-SECRET-4111"}}
            )
            assert isinstance(step, Round), step
        async with Client(b, declare=("form",), protocol="2026-07-28") as second:
            done = await second.advance(
                step, {"confirm": Accepted({"confirm": True}), "note": Accepted({"note": "ANSWER-SECRET-7f3a"})}
            )
            assert not isinstance(done, Round) and "booked Oslo" in str(done), done
        print(f"{span.get_span_context().trace_id:032x}")
    stdio = [sys.executable, "-m", "baton", "serve", "tests/servers/otel_server.py", "--stdio"]
    async with Client(stdio, protocol="2026-07-28") as local:
        await local.list_tools()


if __name__ == "__main__":
    assert from_env("otel-test-client", "client")
    asyncio.run(main())
    trace.get_tracer_provider().shutdown()  # type: ignore[attr-defined]
