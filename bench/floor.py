"""The benchmark floor: the least work a Python MRTR server on uvicorn can do for bench/load.py.

A bare ASGI callable, no framework. ``tools/call`` without ``inputResponses`` gets an
``input_required`` result (one boolean form elicitation and a constant ``requestState``); with them,
a ``complete`` result ``done: <action>``. Bodies are parsed and serialized with the stdlib ``json``
module on every request, and nothing is validated: no headers, no ``_meta``, no schema, no crypto.
It is a yardstick, not a server to deploy.

uvicorn runs with its default ``auto`` HTTP parser and event loop, so it uses httptools and uvloop
when they are installed: run it with the same Python environment as the server it is compared with.
``--workers N`` sets TCP_NODELAY on the listening socket (see bench/README.md). ``--sse`` answers
with ``text/event-stream`` bodies (a comment and a notification before the response), which is
useful to check a client, not to measure the floor.

``--otel`` is the floor of a traced server (bench/otel_compare.py): the OpenTelemetry SDK set up as an
application sets it up (OTLP/HTTP exporters, the sampler and endpoint from the standard variables), and
each request does what any instrumented server does and nothing more: a SERVER span started through the
SDK (the sampler asked), current while the request is answered, ended, and one point of the duration
histogram, with one attribute each. No ``_meta`` is read and no trace carried from one round to the next.
With ``OTEL_METRICS_EXPORTER=none`` it sets no meter provider and records no point: the span alone.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import time
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

from options import OneLineParser

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

STATE = "floor-v1"
QUESTION_SCHEMA = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "title": "Go ahead?"}},
    "required": ["confirm"],
}
JSON_TYPE = (b"content-type", b"application/json")
SSE_HEADERS = [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")]
SSE_PREAMBLE = (
    b': floor\n\nevent: message\ndata: {"jsonrpc":"2.0","method":"notifications/message",'
    b'"params":{"level":"info","data":"working"}}\n\n'
)

_dump = json.JSONEncoder(separators=(",", ":")).encode
use_sse = False  # set by --sse (single process only)
traced: Any = None  # set by --otel: `traced(method, call, params)`, `call(params)` in a span, then a point


def call_tool(params: dict[str, Any]) -> dict[str, Any]:
    """Ask once, then finish."""
    arguments = params.get("arguments") or {}
    action = arguments.get("action", "") if isinstance(arguments, dict) else ""
    if params.get("inputResponses") is None:
        ask = {"mode": "form", "message": f"Go ahead with {action}?", "requestedSchema": QUESTION_SCHEMA}
        return {
            "resultType": "input_required",
            "inputRequests": {"confirm": {"method": "elicitation/create", "params": ask}},
            "requestState": STATE,
        }
    text = f"done: {action}"
    return {"resultType": "complete", "content": [{"type": "text", "text": text}], "isError": False}


async def app(scope: Scope, receive: Receive, send: Send) -> None:
    """The ASGI entry point."""
    if scope["type"] == "lifespan":
        while True:
            event = await receive()
            if event["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif event["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] != "http":
        return
    chunks = []
    while True:
        event = await receive()
        chunks.append(event.get("body", b""))
        if not event.get("more_body"):
            break
    if scope["method"] != "POST":
        await reply(send, 405, b"", [(b"allow", b"POST")])
        return
    try:
        message = json.loads(b"".join(chunks))
        method = message["method"]
        params = message.get("params") or {}
    except (ValueError, KeyError, TypeError):
        error = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
        await reply(send, 400, _dump(error).encode(), [JSON_TYPE])
        return
    if "id" not in message:
        await reply(send, 202, b"", [])
        return
    status = 200
    answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
    if method == "tools/call":
        answer["result"] = call_tool(params) if traced is None else traced(method, call_tool, params)
    else:
        status = 404
        answer["error"] = {"code": -32601, "message": f"Method not found: {method}"}
    body = _dump(answer).encode()
    if use_sse and status == 200:
        await send({"type": "http.response.start", "status": 200, "headers": SSE_HEADERS})
        await send({"type": "http.response.body", "body": SSE_PREAMBLE, "more_body": True})
        await send({"type": "http.response.body", "body": b"event: message\ndata: " + body + b"\n\n"})
        return
    await reply(send, status, body, [JSON_TYPE])


async def reply(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    headers = [*headers, (b"content-length", b"%d" % len(body))]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def tracing() -> Callable[[str, Callable[[dict[str, Any]], dict[str, Any]], dict[str, Any]], dict[str, Any]]:
    """Set the SDK up from the standard variables (OTLP/HTTP); what a request then does through it."""
    from opentelemetry import context, metrics, trace
    from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import PeriodicExportingMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor

    spans = TracerProvider()  # shut down, and so flushed, at exit (SIGTERM ends uvicorn normally)
    spans.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(spans)
    metered = os.environ.get("OTEL_METRICS_EXPORTER", "otlp").strip().lower() != "none"
    if metered:
        metrics.set_meter_provider(MeterProvider(metric_readers=[PeriodicExportingMetricReader(OTLPMetricExporter())]))
    tracer = trace.get_tracer("floor")
    histogram = metrics.get_meter("floor").create_histogram("mcp.server.operation.duration", unit="s")
    server = trace.SpanKind.SERVER

    def traced(
        method: str, answer: Callable[[dict[str, Any]], dict[str, Any]], params: dict[str, Any]
    ) -> dict[str, Any]:
        start = time.time_ns()
        attributes = {"mcp.method.name": method}
        span = tracer.start_span(method, kind=server, attributes=attributes, start_time=start)
        token = context.attach(trace.set_span_in_context(span))
        try:
            return answer(params)
        finally:
            context.detach(token)
            end = time.time_ns()
            span.end(end_time=end)
            if metered:
                histogram.record((end - start) / 1e9, attributes)

    return traced


def nodelay_listener(uvicorn_module: Any) -> None:
    """Make the socket uvicorn binds for ``--workers`` set TCP_NODELAY on every accepted connection.

    Older uvicorn releases create that socket without ``IPPROTO_TCP``, and asyncio then leaves
    TCP_NODELAY off on the accepted connections: each response (head and body are two writes) waits
    for a delayed ACK, about 40 ms. On Linux, accepted sockets inherit the option from the listener.
    """
    config_class = uvicorn_module.Config
    original = config_class.bind_socket

    def bind_socket(self: Any) -> socket.socket:
        sock: socket.socket = original(self)
        if sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock

    config_class.bind_socket = bind_socket


def main() -> None:
    parser = OneLineParser(description="Bare ASGI MRTR server, the benchmark floor (127.0.0.1).")
    parser.add_argument("--port", type=int, default=8800, help="TCP port on 127.0.0.1 (default 8800)")
    parser.add_argument("--workers", type=int, default=1, help="uvicorn worker processes (default 1)")
    parser.add_argument("--http", default="auto", help="uvicorn HTTP parser: auto (default), h11, httptools")
    parser.add_argument("--loop", default="auto", help="uvicorn event loop: auto (default), asyncio, uvloop")
    parser.add_argument("--sse", action="store_true", help="answer with text/event-stream (1 worker only)")
    parser.add_argument("--otel", action="store_true", help="trace as any instrumented server does (1 worker only)")
    opts = parser.parse_args()
    if (opts.sse or opts.otel) and opts.workers > 1:
        parser.error("--sse and --otel work with one worker only")

    import uvicorn

    global use_sse, traced  # noqa: PLW0603 - process-wide switches read by the ASGI app
    use_sse = opts.sse
    if opts.otel:
        try:
            traced = tracing()
        except ImportError as exc:
            parser.error(f"--otel needs the OpenTelemetry SDK and its OTLP/HTTP exporter ({exc.name} is missing)")
    stack = []
    for label, choice, fast, stock in (
        ("http", opts.http, "httptools", "h11"),
        ("loop", opts.loop, "uvloop", "asyncio"),
    ):
        picked = choice
        if choice == "auto":
            try:
                __import__(fast)
                picked = f"auto={fast}"
            except ImportError:
                picked = f"auto={stock}"
        stack.append(f"{label} {picked}")
    print(
        f"floor: http://127.0.0.1:{opts.port}/mcp  uvicorn {uvicorn.__version__}, {', '.join(stack)}, "
        f"workers {opts.workers}",
        file=sys.stderr,
        flush=True,
    )
    target: Any = app
    if opts.workers > 1:
        nodelay_listener(uvicorn)
        target = "floor:app"  # worker processes import the app by name
    uvicorn.run(
        target,
        host="127.0.0.1",
        port=opts.port,
        workers=opts.workers,
        http=opts.http,
        loop=opts.loop,
        app_dir=str(Path(__file__).resolve().parent),
        log_level="warning",
        access_log=False,
    )


if __name__ == "__main__":
    main()
