"""In-process CPU of tracing: an MRTR round trip through `Server.handle` with the SDK set up as `baton serve` sets
it up (`baton.telemetry.setup.from_env`: `BatchSpanProcessor`, OTLP/HTTP exporters to a receiver in another
process), and the SDK's own floor on the same set-up.

Process CPU (`time.process_time`, so the exporter thread's OTLP encoding counts), after a forced flush.
Run with ``PYTHONPATH`` at a tree's ``src`` and the OTLP endpoint in ``OTEL_EXPORTER_OTLP_ENDPOINT``
(bench/otel_compare.py starts bench/otlp_sink.py and runs this); without the endpoint, tracing is off.

    otel_inproc.py round-trips --n 3000      -> {"us_per_round_trip": ...}
    otel_inproc.py floor --n 20000           -> {"bare_span_us": ..., "histogram_us": ...}
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import time
from collections.abc import Callable
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
ANSWER = {"confirm": {"action": "accept", "content": {"confirm": True}}}


def flush() -> None:
    """Export what the processors and readers hold, so its encoding is inside the measured CPU."""
    from opentelemetry import metrics, trace

    for provider in (trace.get_tracer_provider(), metrics.get_meter_provider()):
        force = getattr(provider, "force_flush", None)
        if force is not None:
            force()


def cpu_us(run: Callable[[int], None], n: int, traced: bool) -> float:
    """CPU µs per unit of `run(n)`, after a warm-up and with the telemetry flushed on both ends."""
    run(max(n // 10, 50))
    if traced:
        flush()
    start = time.process_time()
    run(n)
    if traced:
        flush()
    return (time.process_time() - start) / n * 1e6


def round_trips(n: int, traced: bool) -> float:
    """CPU µs per round trip of a two-round `tools/call` flow over an HTTP-like exchange."""
    server = Server("inproc", state_keys=KeyRing.ephemeral_key())

    @server.tool()
    async def book(ctx: Context, city: str) -> str:
        return "booked" if await ctx.confirm(f"Book {city}?", key="confirm") else "no"

    server.check_startup("http")
    ex = Exchange(RequestInfo("http", Headers.of(HEADERS), ("127.0.0.1", 50000)))
    args = {"city": "Oslo"}

    async def flows(count: int) -> None:
        for i in range(count):
            first = await server.handle(
                Message("tools/call", {"name": "book", "arguments": args, "_meta": META}, i, True), ex
            )
            state = first.body["result"]["requestState"]  # type: ignore[union-attr]
            params = {"name": "book", "arguments": args, "_meta": META, "requestState": state, "inputResponses": ANSWER}
            await server.handle(Message("tools/call", params, i, True), ex)

    return cpu_us(lambda count: asyncio.run(flows(count)), n, traced) / 2


def floor(n: int) -> dict[str, float]:
    """The SDK's own cost on this set-up: a bare SERVER span (no attribute) through the batch processor and the
    OTLP exporter, and one histogram record with two attributes."""
    from opentelemetry import metrics, trace

    tracer = trace.get_tracer("floor")
    kind = trace.SpanKind.SERVER

    def spans(count: int) -> None:
        for _ in range(count):
            tracer.start_span("tools/call", kind=kind).end()

    histogram = metrics.get_meter("floor").create_histogram("floor.duration", unit="s")
    attributes = {"mcp.method.name": "tools/call", "network.transport": "tcp"}

    def records(count: int) -> None:
        for _ in range(count):
            histogram.record(0.001, attributes)

    return {"bare_span_us": cpu_us(spans, n, True), "histogram_us": cpu_us(records, n, True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("round-trips", "floor"))
    parser.add_argument("--n", type=int, default=3000, help="flows (two round trips each), or spans and records")
    opts = parser.parse_args()
    # A queue as long as the run: a tight loop outruns the exporter, and a dropped span is CPU not measured.
    os.environ.setdefault("OTEL_BSP_MAX_QUEUE_SIZE", str(4 * opts.n + 10000))
    traced = setup.from_env("inproc", "inproc") if os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT") else False
    figures: dict[str, Any]
    if opts.what == "floor":
        if not traced:
            raise SystemExit("otel_inproc floor: set OTEL_EXPORTER_OTLP_ENDPOINT")
        figures = floor(opts.n)
    else:
        figures = {"us_per_round_trip": round_trips(opts.n, traced), "traced": traced}
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
