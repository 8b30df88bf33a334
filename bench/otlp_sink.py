"""A real OTLP/HTTP receiver on loopback: what bench/otel_compare exports to, and what tests/telemetry/test_otel.py
reads.

It answers `POST /v1/traces` and `POST /v1/metrics` (protobuf, optionally gzip) with an empty
`Export*ServiceResponse`, keeps every raw body as received (so a test can assert on the exact bytes that
left the server), and decodes them with opentelemetry-proto. Run alone, it serves until killed and prints
its endpoint, then, on SIGTERM, the number of spans it received: ``python bench/otlp_sink.py PORT``.
"""

from __future__ import annotations

import argparse
import gzip
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.metrics.v1.metrics_service_pb2 import (
    ExportMetricsServiceRequest,
    ExportMetricsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

_ANSWERS = {
    "/v1/traces": ExportTraceServiceResponse().SerializeToString(),
    "/v1/metrics": ExportMetricsServiceResponse().SerializeToString(),
}


class OtlpSink:
    """`with OtlpSink() as sink:` receives on `sink.endpoint` (for `OTEL_EXPORTER_OTLP_ENDPOINT`)."""

    def __init__(self, port: int = 0, *, keep: bool = True) -> None:
        sink = self
        self.keep = keep
        self.bodies: dict[str, list[bytes]] = {"/v1/traces": [], "/v1/metrics": []}
        self.spans_received = 0
        self._lock = threading.Lock()

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                answer = _ANSWERS.get(self.path)
                if answer is None:
                    self.send_response(404)
                    self.end_headers()
                    return
                sink._received(self.path, body)
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.port = self.server.server_address[1]
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread = threading.Thread(target=self.server.serve_forever, name="otlp-sink", daemon=True)

    def _received(self, path: str, body: bytes) -> None:
        with self._lock:
            if path == "/v1/traces":
                request = ExportTraceServiceRequest.FromString(body)
                self.spans_received += sum(len(s.spans) for r in request.resource_spans for s in r.scope_spans)
            if self.keep:
                self.bodies[path].append(body)

    def __enter__(self) -> OtlpSink:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def raw(self) -> bytes:
        """Every byte received, traces and metrics."""
        with self._lock:
            return b"".join(b for bodies in self.bodies.values() for b in bodies)

    def spans(self) -> list[dict[str, Any]]:
        """Every span received, flattened: name, kind, ids (hex), parent, links, attributes, status, resource."""
        with self._lock:
            bodies = list(self.bodies["/v1/traces"])
        spans = []
        for body in bodies:
            for rs in ExportTraceServiceRequest.FromString(body).resource_spans:
                resource = {a.key: _value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        spans.append(
                            {
                                "name": s.name,
                                "kind": s.kind,
                                "trace_id": s.trace_id.hex(),
                                "span_id": s.span_id.hex(),
                                "parent": s.parent_span_id.hex(),
                                "links": [(link.trace_id.hex(), link.span_id.hex()) for link in s.links],
                                "start": s.start_time_unix_nano,
                                "end": s.end_time_unix_nano,
                                "status": s.status.code,
                                "attributes": {a.key: _value(a.value) for a in s.attributes},
                                "resource": resource,
                                "scope": ss.scope.name,
                            }
                        )
        return spans

    def metric_names(self) -> set[str]:
        with self._lock:
            bodies = list(self.bodies["/v1/metrics"])
        found = set()
        for body in bodies:
            for rm in ExportMetricsServiceRequest.FromString(body).resource_metrics:
                for sm in rm.scope_metrics:
                    found.update(m.name for m in sm.metrics)
        return found

    def histogram_points(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            bodies = list(self.bodies["/v1/metrics"])
        points = []
        for body in bodies:
            for rm in ExportMetricsServiceRequest.FromString(body).resource_metrics:
                for sm in rm.scope_metrics:
                    for m in sm.metrics:
                        if m.name == name:
                            for p in m.histogram.data_points:
                                attrs = {a.key: _value(a.value) for a in p.attributes}
                                points.append({"count": p.count, "sum": p.sum, "unit": m.unit, "attributes": attrs})
        return points


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    if kind == "array_value":
        return [_value(x) for x in v.array_value.values]
    return getattr(v, kind) if kind else None


def tree(spans: list[dict[str, Any]]) -> str:
    """One trace's spans as an indented tree, by start time: name, kind, instance and the baton.* attributes."""
    kinds = {1: "INTERNAL", 2: "SERVER", 3: "CLIENT"}
    by_id = {s["span_id"]: s for s in spans}
    children: dict[str, list[dict[str, Any]]] = {}
    roots = []
    for s in sorted(spans, key=lambda s: s["start"]):
        (children.setdefault(s["parent"], []) if s["parent"] in by_id else roots).append(s)
    lines: list[str] = []

    def show(s: dict[str, Any], depth: int) -> None:
        a = s["attributes"]
        where = s["resource"].get("service.instance.id", s["resource"].get("service.name", "?"))
        extras = [f"{k.removeprefix('baton.')}={a[k]}" for k in sorted(a) if k.startswith("baton.")]
        if "error.type" in a:
            extras.append(f"error.type={a['error.type']}")
        link = f" link->{s['links'][0][1][:8]}" if s["links"] else ""
        ms = (s["end"] - s["start"]) / 1e6
        lines.append(
            f"{'    ' * depth}{s['name']} [{kinds.get(s['kind'], s['kind'])} @ {where}] "
            f"span={s['span_id'][:8]}{link} {ms:.1f} ms  " + " ".join(extras)
        )
        for c in children.get(s["span_id"], []):
            show(c, depth + 1)

    trace_ids = sorted({s["trace_id"] for s in spans})
    for t in trace_ids:
        lines.append(f"trace {t}")
        for r in roots:
            if r["trace_id"] == t:
                show(r, 1)
    return "\n".join(lines)


def _serve(port: int) -> None:
    """Print the endpoint, receive until SIGTERM, then print how many spans were received."""
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with OtlpSink(port, keep=False) as running:
        print(running.endpoint, flush=True)
        stop.wait()
        print(running.spans_received, flush=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A real OTLP/HTTP receiver on 127.0.0.1 (traces and metrics).")
    parser.add_argument("port", nargs="?", type=int, default=4318, help="TCP port on 127.0.0.1 (default 4318)")
    try:
        _serve(parser.parse_args().port)
    except OSError as exc:
        print(f"otlp_sink: cannot listen: {exc}", file=sys.stderr)
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(130)
