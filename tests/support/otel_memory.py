"""In-memory OpenTelemetry providers, for telemetry checks that need no collector and no HTTP.

A tracer provider sets itself globally for the rest of a process, so these run in a fresh interpreter:
`run(code)` executes `code` there with the in-memory providers installed and `send` (a request through
`server.runtime.handle`), `spans()` and `points()` in scope, and returns the JSON the code printed last.
"""

from __future__ import annotations

import json
import os
import sys
import textwrap
from typing import Any

from support import processes
from support.paths import ROOT

_installed: dict[str, Any] = {}
"""The span exporter and the metric reader `install` set up."""


def install(traces: bool = True) -> None:
    """Set an in-memory tracer provider (every span exported at once; none without `traces`) and meter
    provider globally."""
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = _installed["spans"] = InMemorySpanExporter()
    if traces:
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
    reader = _installed["metrics"] = InMemoryMetricReader()
    metrics.set_meter_provider(MeterProvider(metric_readers=[reader]))


def spans() -> list[dict[str, Any]]:
    """The finished spans: name, kind (`SERVER`, `CLIENT`, ...), attributes (lists as lists), and the trace, span
    and parent span ids (hex; the parent None for a root)."""
    return [
        {
            "name": s.name,
            "kind": s.kind.name,
            "attributes": {k: list(v) if isinstance(v, tuple) else v for k, v in (s.attributes or {}).items()},
            "trace": f"{s.context.trace_id:032x}",
            "span": f"{s.context.span_id:016x}",
            "parent": f"{s.parent.span_id:016x}" if s.parent is not None else None,
            "scope": f"{s.instrumentation_scope.name} {s.instrumentation_scope.version}",
        }
        for s in _installed["spans"].get_finished_spans()
    ]


def points(metric: str) -> list[dict[str, Any]]:
    """The attributes of each data point of `metric` recorded so far."""
    data = _installed["metrics"].get_metrics_data()
    found: list[dict[str, Any]] = []
    for rm in data.resource_metrics if data is not None else ():
        for sm in rm.scope_metrics:
            for m in sm.metrics:
                if m.name == metric:
                    found.extend(dict(p.attributes) for p in m.data.data_points)
    return found


async def send(server: Any, method: str, params: dict[str, Any] | None = None, **meta: Any) -> dict[str, Any]:
    """One 2026-07-28 request through `server.runtime.handle` over stdio; `meta` overrides `_meta` members by their
    short name (`protocolVersion=...`). The JSON-RPC response."""
    import orjson
    from wire import meta as base

    from baton.protocol.messages import parse
    from baton.server import Exchange, RequestInfo

    body = dict(params or {})
    envelope = base()
    for key, value in meta.items():
        envelope[f"io.modelcontextprotocol/{key}"] = value
    body.setdefault("_meta", envelope)
    msg = parse(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": body}))

    async def emit(method: str, params: dict[str, Any]) -> None:
        pass

    reply = await server.runtime.handle(msg, Exchange(RequestInfo("stdio"), emit))
    body = reply.body
    assert isinstance(body, dict)
    return body


def run(code: str, env: dict[str, str] | None = None, *, traces: bool = True, providers: bool = True) -> Any:
    """Run `code` (dedented) in a fresh interpreter with the in-memory providers installed (the meter's alone
    without `traces`; none at all without `providers`, for code that sets its own); the JSON it printed last."""
    prelude = "import asyncio, json\nfrom support.otel_memory import install, points, send, spans\n"
    if providers:
        prelude += f"install({traces})\n"
    path = os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests"), os.environ.get("PYTHONPATH", "")])
    variables = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    done = processes.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        cwd=ROOT,
        env={**variables, "PYTHONPATH": path, **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])
