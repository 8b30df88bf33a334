"""In-process CPU of tracing: an MRTR round trip through `server.runtime.handle` with the SDK set up as
`baton serve` sets it up (`baton.telemetry.setup.from_env`: `BatchSpanProcessor`, OTLP/HTTP exporters to a
receiver in another process), and the SDK's own floor on the same set-up.

Process CPU (`time.process_time`, so the exporter thread's OTLP encoding counts), after a forced flush.
Run with ``PYTHONPATH`` at a tree's ``src`` and the OTLP endpoint in ``OTEL_EXPORTER_OTLP_ENDPOINT``
(bench/otel_compare.py starts bench/otlp_sink.py and runs this); without the endpoint, tracing is off.

    otel_inproc.py round-trips --n 3000      -> {"us_per_round_trip": ..., "traced": ...}
    otel_inproc.py floor --n 20000           -> {"bare_span_us": ..., "unsampled_span_us": ..., "histogram_us": ...}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from baton import Context, KeyRing, Server
from baton.protocol.headers import Headers
from baton.protocol.messages import Message
from baton.server import Exchange, RequestInfo
from baton.telemetry import setup

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
    "io.modelcontextprotocol/clientInfo": {"name": "inproc", "version": "0"},
}
HEADERS = {
    "host": "127.0.0.1:3101",
    "mcp-protocol-version": "2026-07-28",
    "mcp-method": "tools/call",
    "mcp-name": "book",
    "content-type": "application/json",
    "accept": "application/json, text/event-stream",
}
BATCH = 256
"""Flows between flushes: 512 spans, the `BatchSpanProcessor`'s export batch."""
ANSWER = {"confirm": {"action": "accept", "content": {"confirm": True}}}


def flush(spans_only: bool = False) -> None:
    """Export what the span processors (and the metric readers) hold, so its encoding is inside the measured CPU."""
    from opentelemetry import metrics, trace

    providers = (
        [trace.get_tracer_provider()] if spans_only else [trace.get_tracer_provider(), metrics.get_meter_provider()]
    )
    for provider in providers:
        force = getattr(provider, "force_flush", None)
        if force is not None:
            force()


def cpu_us(run: Callable[[int], None], n: int, traced: bool) -> float:
    """CPU µs per unit of `run(n)`, the whole process's, after a warm-up and with the telemetry flushed on both
    ends."""
    run(max(n // 10, 50))
    if traced:
        flush()
    start = time.process_time()
    run(n)
    if traced:
        flush()
    return (time.process_time() - start) / n * 1e6


def make_server() -> Server:
    """A server with one tool that asks one confirmation, checked for serving over HTTP."""
    server = Server("inproc", state_keys=KeyRing.ephemeral_key())

    @server.tool()
    async def book(ctx: Context, city: str) -> str:
        return "booked" if await ctx.confirm(f"Book {city}?", key="confirm") else "no"

    server.check_startup("http")
    return server


def flows_of(server: Server) -> Callable[[int], Awaitable[None]]:
    """`flows(count)`: that many two-round `tools/call` flows through `server.runtime.handle` over an HTTP-like
    exchange, the confirmation answered on the retry."""
    ex = Exchange(RequestInfo("http", Headers.of(HEADERS), ("127.0.0.1", 50000)))
    args = {"city": "Oslo"}
    handle = server.runtime.handle

    async def flows(count: int) -> None:
        for i in range(count):
            first = await handle(Message("tools/call", {"name": "book", "arguments": args, "_meta": META}, i, True), ex)
            state = first.body["result"]["requestState"]  # type: ignore[union-attr]
            params = {"name": "book", "arguments": args, "_meta": META, "requestState": state, "inputResponses": ANSWER}
            await handle(Message("tools/call", params, i, True), ex)

    return flows


def round_trips(n: int, traced: bool) -> dict[str, float]:
    """CPU µs per round trip of a two-round `tools/call` flow over an HTTP-like exchange."""
    flows = flows_of(make_server())

    async def batches(count: int) -> None:
        for done in range(0, count, BATCH):
            await flows(min(BATCH, count - done))
            if traced:  # the exporter keeps up, as on a server: no queue of thousands of spans for the GC to walk
                flush(spans_only=True)

    return {"us_per_round_trip": cpu_us(lambda count: asyncio.run(batches(count)), n, traced) / 2}


def floor(n: int) -> dict[str, float]:
    """The SDK's own cost on this set-up: a bare SERVER span (no attribute) through the batch processor and the
    OTLP exporter, a span its sampler drops, and one histogram record with two attributes."""
    from opentelemetry import metrics, trace

    tracer = trace.get_tracer("floor")
    kind = trace.SpanKind.SERVER

    def spans(count: int) -> None:
        for i in range(count):
            tracer.start_span("tools/call", kind=kind).end()
            if i % (2 * BATCH) == 2 * BATCH - 1:
                flush(spans_only=True)

    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

    dropped = TracerProvider(sampler=ALWAYS_OFF).get_tracer("floor")

    def unsampled(count: int) -> None:
        for _ in range(count):
            dropped.start_span("tools/call", kind=kind).end()

    histogram = metrics.get_meter("floor").create_histogram("floor.duration", unit="s")
    attributes = {"mcp.method.name": "tools/call", "network.transport": "tcp"}

    def records(count: int) -> None:
        for _ in range(count):
            histogram.record(0.001, attributes)

    return {
        "bare_span_us": cpu_us(spans, n, True),
        "unsampled_span_us": cpu_us(unsampled, n, True),
        "histogram_us": cpu_us(records, n, True),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("round-trips", "floor"))
    parser.add_argument("--n", type=int, default=3000, help="flows (two round trips each), or spans and records")
    opts = parser.parse_args()
    traced = setup.from_env("inproc", "inproc") if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else False
    figures: dict[str, Any]
    if opts.what == "floor":
        if not traced:
            raise SystemExit("otel_inproc floor: set OTEL_EXPORTER_OTLP_ENDPOINT")
        figures = floor(opts.n)
    else:
        figures = {**round_trips(opts.n, traced), "traced": traced}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
