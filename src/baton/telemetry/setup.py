"""The OpenTelemetry SDK set up from the standard environment variables, for `baton serve` (protocol.md POT1).

Export is OTLP over HTTP (protobuf): `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
/ `..._METRICS_ENDPOINT`, `OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`,
`OTEL_TRACES_SAMPLER`, `OTEL_BSP_*` and `OTEL_METRIC_EXPORT_INTERVAL` are read by the SDK itself;
`OTEL_TRACES_EXPORTER` / `OTEL_METRICS_EXPORTER` take `otlp` (the default), `console` or `none`;
`OTEL_SDK_DISABLED=true` turns it all off. Spans leave through a `BatchSpanProcessor`, off the request path.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from . import names
from .switch import EXTRA_HINT, export_requested, installed

log = logging.getLogger("baton.telemetry")


def from_env(service: str, instance: str, environ: Mapping[str, str] = os.environ) -> bool:
    """Set the global tracer and meter providers when the variables ask for export; whether it did.

    `service` is `service.name` unless `OTEL_SERVICE_NAME` (or `OTEL_RESOURCE_ATTRIBUTES`) names one;
    `instance` is `service.instance.id` (the `baton-instance` of HTTP responses) unless they name one."""
    if not export_requested(environ):
        return False
    if not installed():
        log.warning("OpenTelemetry variables are set, but the SDK is not installed: %s", EXTRA_HINT)
        return False
    from opentelemetry import metrics, trace
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import (
        ConsoleMetricExporter,
        MetricExporter,
        MetricReader,
        PeriodicExportingMetricReader,
    )
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, ConsoleSpanExporter, SpanExporter

    protocol = environ.get("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
    if protocol != "http/protobuf":
        log.warning("OTEL_EXPORTER_OTLP_PROTOCOL=%s: Baton exports OTLP over HTTP (http/protobuf) only", protocol)
    detected = Resource.create()
    own: dict[str, str] = {}
    if str(detected.attributes.get(names.SERVICE_NAME, "")).startswith("unknown_service"):
        own[names.SERVICE_NAME] = service
    # The SDK makes up a random instance id; Baton's is the one in its `baton-instance` header.
    if names.SERVICE_INSTANCE + "=" not in environ.get("OTEL_RESOURCE_ATTRIBUTES", ""):
        own[names.SERVICE_INSTANCE] = instance
    resource = detected.merge(Resource(own))

    tracer_provider = TracerProvider(resource=resource)
    for kind in _exporters(environ, "OTEL_TRACES_EXPORTER"):
        span_exporter: SpanExporter
        if kind == "console":
            span_exporter = ConsoleSpanExporter()
        else:
            from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

            span_exporter = OTLPSpanExporter()
        tracer_provider.add_span_processor(BatchSpanProcessor(span_exporter))
    trace.set_tracer_provider(tracer_provider)

    readers: list[MetricReader] = []
    for kind in _exporters(environ, "OTEL_METRICS_EXPORTER"):
        metric_exporter: MetricExporter
        if kind == "console":
            metric_exporter = ConsoleMetricExporter()
        else:
            from opentelemetry.exporter.otlp.proto.http.metric_exporter import OTLPMetricExporter

            metric_exporter = OTLPMetricExporter()
        readers.append(PeriodicExportingMetricReader(metric_exporter))
    metrics.set_meter_provider(MeterProvider(resource=resource, metric_readers=readers))
    log.info("OpenTelemetry: exporting as %s (%s)", resource.attributes.get(names.SERVICE_NAME), instance)
    return True


def _exporters(environ: Mapping[str, str], variable: str) -> list[str]:
    """The exporters a variable names: `otlp` (its default), `console`, or none (`none`); others are ignored."""
    chosen = [e.strip().lower() for e in environ.get(variable, "otlp").split(",") if e.strip()]
    unknown = [e for e in chosen if e not in ("otlp", "console", "none")]
    if unknown:
        log.warning("%s=%s: Baton knows otlp, console and none", variable, ",".join(unknown))
    return [e for e in chosen if e in ("otlp", "console")]
