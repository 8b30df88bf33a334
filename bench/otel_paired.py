"""What tracing adds to a round trip, in one process: the same two-round `tools/call` flow through
`server.runtime.handle` on a server started before the OpenTelemetry SDK was set up (telemetry off) and on one
started after it (traced as `baton serve` traces: `baton.telemetry.setup.from_env`), in alternating batches.

Measuring both in one process, batch beside batch, keeps what moves between processes (memory layout, another
process's load, the CPU's clock) out of the difference: the figure is the median of the batches' differences.
Process CPU (`time.process_time`: the exporter thread's work counts), the span processor flushed after each
traced batch so its encoding lands in that batch. Set the sampler with the standard variables; the endpoint in
``OTEL_EXPORTER_OTLP_ENDPOINT`` (bench/otlp_sink.py in another process):

    OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4391 OTEL_TRACES_SAMPLER=parentbased_traceidratio \\
        OTEL_TRACES_SAMPLER_ARG=0 bench/otel_paired.py --batches 30 --n 300

Prints ``{"off_us": ..., "traced_us": ..., "added_us": ..., "added_quartiles": [...]}``: CPU µs per round trip
(half a flow), medians over the batches. ``--bare`` traces with spans that record and cost nothing instead of
the SDK's (no endpoint needed): ``added_us`` is then Baton's own share of a recorded round, outside the SDK's
span and export code.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from options import OneLineParser
from otel_inproc import flows_of, flush, make_server

from baton.telemetry import setup

Flows = Callable[[int], Awaitable[None]]


async def batch_us(flows: Flows, n: int, traced: bool) -> float:
    start = time.process_time()
    await flows(n)
    if traced:
        flush(spans_only=True)
    return (time.process_time() - start) / (2 * n) * 1e6


def install_bare() -> None:
    """A tracer provider whose spans record and cost nothing: with it, what tracing adds is Baton's own code (its
    attributes, screening, bookkeeping, context and histogram), the SDK's span and export code left out."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.trace import SpanContext, TraceFlags

    from baton.telemetry import durations

    context = SpanContext(0x5EED, 0xB0A7, is_remote=False, trace_flags=TraceFlags(TraceFlags.SAMPLED))

    class Span(trace.NonRecordingSpan):
        def is_recording(self) -> bool:
            return True

    class Tracer(trace.NoOpTracer):
        def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
            return Span(context)

    class Provider(trace.NoOpTracerProvider):
        def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
            return Tracer()

    trace.set_tracer_provider(Provider())
    metrics.set_meter_provider(MeterProvider())  # no reader: Baton's table takes the points (P109)
    durations.add_table(delta=False)


async def measure(batches: int, n: int, bare: bool) -> dict[str, Any]:
    off = flows_of(make_server())  # before the SDK is set up: this server is not traced
    if bare:
        install_bare()
    elif not setup.from_env("paired", "paired"):
        raise SystemExit("otel_paired: set OTEL_EXPORTER_OTLP_ENDPOINT (bench/otlp_sink.py gives one)")
    on_server = make_server()
    if "handle" not in vars(on_server.runtime):
        raise SystemExit("otel_paired: the second server is not traced")
    on = flows_of(on_server)
    await off(n)
    await on(n)  # warm up both
    flush(spans_only=True)
    offs: list[float] = []
    ons: list[float] = []
    for i in range(batches):
        if i % 2:
            ons.append(await batch_us(on, n, True))
            offs.append(await batch_us(off, n, False))
        else:
            offs.append(await batch_us(off, n, False))
            ons.append(await batch_us(on, n, True))
    added = [b - a for a, b in zip(offs, ons, strict=True)]
    q1, q2, q3 = statistics.quantiles(added, n=4)
    return {
        "off_us": statistics.median(offs),
        "traced_us": statistics.median(ons),
        "added_us": statistics.median(added),
        "added_quartiles": [q1, q2, q3],
        "batches": batches,
        "flows_per_batch": n,
        "tracer": "bare (Baton's own code only)" if bare else "SDK",
        "sampler": os.environ.get("OTEL_TRACES_SAMPLER", "parentbased_always_on"),
        "sampler_arg": os.environ.get("OTEL_TRACES_SAMPLER_ARG"),
    }


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batches", type=int, default=30, help="batches of each server, alternating (30)")
    parser.add_argument("--n", type=int, default=300, help="two-round flows per batch (300)")
    parser.add_argument(
        "--bare",
        action="store_true",
        help="spans that record and cost nothing instead of the SDK's: what Baton's own tracing code adds",
    )
    opts = parser.parse_args(argv)
    if opts.batches < 2 or opts.n < 1:
        parser.error("--batches must be at least 2 and --n at least 1")
    try:
        print(json.dumps(asyncio.run(measure(opts.batches, opts.n, opts.bare))))
    except KeyboardInterrupt:
        print("otel_paired: interrupted", file=sys.stderr)
        return 130
    finally:
        setup.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
