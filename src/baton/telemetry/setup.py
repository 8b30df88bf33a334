"""The OpenTelemetry SDK set up from the standard environment variables, for `baton serve` (protocol.md P60).

Export is OTLP over HTTP (protobuf): `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
/ `..._METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER`, `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL` are read by the SDK itself;
`OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` take `otlp` (the default), `console` (written to stderr,
always: under `--stdio` stdout is the protocol stream) or `none`;
`OTEL_SDK_DISABLED=true` turns it all off. Spans leave through a `BatchSpanProcessor`, off the request path.
`OTEL_METRICS_EXPORTER=none` sets no meter provider: no histogram is recorded at all (protocol.md P69);
`OTEL_TRACES_EXPORTER=none` sets no tracer provider: no span is sampled or built (P80).

`shutdown` flushes and shuts down what `from_env` set, within a bound (`SHUTDOWN_S`); `baton serve` calls it
when uvicorn shuts the app down (SIGTERM, SIGINT), in every worker, and at exit (protocol.md P70).
"""

from __future__ import annotations

import atexit
import logging
import os
import sys
import threading
from collections.abc import Callable, Mapping

from . import names
from .switch import EXTRA_HINT, export_requested, installed

log = logging.getLogger("baton.telemetry")

SHUTDOWN_S = 5.0
"""How long `shutdown` waits for the queued spans and the last metrics to be exported, at most."""
_shutdowns: list[Callable[[], object]] = []
"""The providers' flush-and-shutdown steps `from_env` set up, run once by `shutdown`."""


def from_env(service: str, instance: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Set the global tracer and meter providers when the variables ask for export; whether it did.

    `service` is `service.name` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) names one;
    `instance` is `service.instance.id` (`baton.serve.http.instance_name`) unless they name one."""
    if not export_requested(environ):
        return False
    if not installed():
        log.warning("OpenTelemetry variables are set, but the SDK is not installed: %s", EXTRA_HINT)
        return False
    from opentelemetry import metrics, trace  # noqa: PLC0415 (the optional otel extra)
    from opentelemetry.sdk.metrics import MeterProvider  # noqa: PLC0415 (the optional otel extra)
    from opentelemetry.sdk.metrics.export import (  # noqa: PLC0415 (the optional otel extra)
        ConsoleMetricExporter,
        MetricExporter,
        MetricReader,
    )
    from opentelemetry.sdk.resources import Resource  # noqa: PLC0415 (the optional otel extra)
    from opentelemetry.sdk.trace import TracerProvider  # noqa: PLC0415 (the optional otel extra)
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter  # noqa: PLC0415 (the optional otel extra)

    from .reader import ReaderWithDurations  # noqa: PLC0415 (the optional otel extra)

    protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    if protocol != "http/protobuf":
        log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s: Baton exports OTLP over HTTP (http/protobuf) only", protocol)
    detected = Resource.create()
    own: dict[str, str] = {}
    if str(detected.attributes.get(names.SERVICE_NAME, "")).startswith("unknown_service"):
        own[names.SERVICE_NAME] = service
    # The SDK makes up a random instance id; Baton's is the process's name (its start-up lines, its header when named).
    if names.SERVICE_INSTANCE + "=" not in environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        own[names.SERVICE_INSTANCE] = instance
    resource = detected.merge(Resource(own))

    steps: list[Callable[[], object]] = []
    span_exporters = _exporters(environ, "OTEL_TRACES_EXPORTER")
    if span_exporters:  # `none`: no tracer provider, so no span is sampled or built (metrics only)
        tracer_provider = TracerProvider(resource=resource, shutdown_on_exit=False)  # `shutdown` does it, bounded
        for kind in span_exporters:
            span_exporter: SpanExporter
            if kind == "console":
                span_exporter = ConsoleSpanExporter(out=sys.stderr)  # stdout may be the stdio protocol stream
            else:
                from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter  # noqa: PLC0415 (the optional otel extra)

                span_exporter = OTLPSpanExporter()
            tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
        trace.set_tracer_provider(tracer_provider)
        steps += [tracer_provider.force_flush, tracer_provider.shutdown]

    readers: list[MetricReader] = []
    metric_exporters = _exporters(environ, "OTEL_METRICS_EXPORTER")
    for kind in metric_exporters:
        metric_exporter: MetricExporter
        if kind == "console":
            metric_exporter = ConsoleMetricExporter(out=sys.stderr)
        else:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter  # noqa: PLC0415 (the optional otel extra)

            metric_exporter = OTLPMetricExporter()
        readers.append(ReaderWithDurations(metric_exporter, resource))
    if metric_exporters:  # `none`: no meter provider, so nothing is recorded (protocol.md P69)
        meter_provider = MeterProvider(resource=resource, metric_readers=readers, shutdown_on_exit=False)
        metrics.set_meter_provider(meter_provider)
        if metrics.get_meter_provider() is meter_provider:
            steps.append(meter_provider.shutdown)  # collects and exports the last points first
        else:  # the application set one first (the SDK refused ours): its readers get Baton's points (P109)
            meter_provider.shutdown()
    if not _shutdowns:
        atexit.register(shutdown)
    _shutdowns[:] = steps
    log.info("OpenTelemetry: exporting as %s (%s)", resource.attributes.get(names.SERVICE_NAME), instance)
    return True


def _exporters(environ: Mapping[str, str], variable: str) -> list[str]:
    """The exporters a variable names: `otlp` (its default), `console`, or none (`none`); others are ignored."""
    chosen = [e.strip().lower() for e in environ.get(variable, "otlp").split(",") if e.strip()]
    unknown = [e for e in chosen if e not in ("otlp", "console", "none")]
    if unknown:
        log.warning("%s=%s: Baton knows otlp, console and none", variable, ",".join(unknown))
    return [e for e in chosen if e in ("otlp", "console")]


def shutdown(timeout: float = SHUTDOWN_S) -> bool:
    """Export what is queued and shut the providers `from_env` set down, waiting `timeout` seconds at most (an
    unreachable collector must not hold a stopping server); whether it finished in time. Runs once."""
    steps, _shutdowns[:] = list(_shutdowns), []
    if not steps:
        return True

    def run() -> None:
        for step in steps:
            try:
                step()
            except Exception:  # pragma: no cover - the SDK logs its own export failures
                log.exception("OpenTelemetry shutdown step failed")

    worker = threading.Thread(target=run, name="baton-otel-shutdown", daemon=True)
    try:
        worker.start()
    except RuntimeError:  # at interpreter exit (atexit) a new thread may be refused: run unbounded, as the SDK would
        run()
        return True
    worker.join(timeout)
    if worker.is_alive():
        log.warning("OpenTelemetry: spans or metrics not exported within %g s of shutting down; dropped", timeout)
        return False
    return True
