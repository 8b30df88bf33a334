"""The mcp 2.3.0 peer (peers/mcp_server.py) with the OpenTelemetry SDK set up for traces, for bench/otel_compare.

Run with the ``mcp-otel`` venv's Python (bench/venvs.py: mcp 2.3.0 with the SDK and OTLP/HTTP exporter at Baton's
versions) and the peer's arguments: ``otel_mcp_server.py --port PORT --json``. It sets the SDK up for traces as
``baton serve`` does (baton.telemetry.setup): a ``Resource`` with ``service.name`` (``OTEL_SERVICE_NAME`` and
``OTEL_RESOURCE_ATTRIBUTES`` win), a ``TracerProvider`` whose sampler the SDK takes from ``OTEL_TRACES_SAMPLER``
and ``OTEL_TRACES_SAMPLER_ARG``, a ``BatchSpanProcessor`` and an ``OTLPSpanExporter`` to
``OTEL_EXPORTER_OTLP_ENDPOINT``; then runs the peer's ``main()``. mcp's own ``OpenTelemetryMiddleware``
(mcp/server/_otel.py, on by default) makes one SERVER span per request. mcp records no metrics, so none are set
up. uvicorn stops on SIGTERM and then raises the signal again, with the handler it found at start: this one, which
exports the queued spans (shuts the provider down) and exits, as ``baton serve`` does on SIGTERM.
"""

from __future__ import annotations

import importlib
import signal
import sys
from pathlib import Path
from typing import Any

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import SERVICE_NAME, Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

PEERS = Path(__file__).resolve().parent.parent / "peers"


def main() -> None:
    provider = TracerProvider(resource=Resource.create({SERVICE_NAME: "mcp-peer"}))  # sampler: OTEL_TRACES_SAMPLER
    provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))
    trace.set_tracer_provider(provider)

    def leave(signum: int, _frame: Any) -> None:
        provider.shutdown()
        sys.exit(128 + signum)

    signal.signal(signal.SIGTERM, leave)
    sys.path.insert(0, str(PEERS))
    importlib.import_module("mcp_server").main()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(130)
