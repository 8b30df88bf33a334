"""Whether telemetry is on (protocol.md P60), decided without importing OpenTelemetry unless it is.

Library: on when the process has set a tracer provider or a meter provider through the OpenTelemetry API
(which it cannot have done without importing it), unless `OTEL_SDK_DISABLED=true`. `baton serve`: the SDK is set up
from the standard variables when one of them asks for export (`export_requested`) and the `otel`
extra is installed.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from collections.abc import Mapping

from ..extras import install_extra

DISABLED = "OTEL_SDK_DISABLED"
EXPORT_VARIABLES = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
)
"""Any of these set asks `baton serve` to export (`OTEL_TRACES_EXPORTER=none` alone does not)."""
EXTRA_HINT = f"to export traces and metrics, install Baton's [otel] extra: {install_extra('otel')}"


def disabled(environ: Mapping[str, str] = os.environ) -> bool:
    return environ.get(DISABLED, "").strip().lower() == "true"


def configured() -> bool:
    """Whether this process has telemetry on: a tracer provider or a meter provider is set (metrics alone, when
    `OTEL_TRACES_EXPORTER=none`), and the SDK is not disabled.

    Never imports `opentelemetry`: a process that has not imported it has configured nothing."""
    modules = sys.modules
    if ("opentelemetry.trace" not in modules and "opentelemetry.metrics" not in modules) or disabled():
        return False
    from .otel import meter_provider_configured, provider_configured  # noqa: PLC0415 (OpenTelemetry, the optional otel extra)

    return provider_configured() or meter_provider_configured()


def export_requested(environ: Mapping[str, str] = os.environ) -> bool:
    """Whether the standard variables ask for traces or metrics to be exported."""
    if disabled(environ):
        return False
    exporter = environ.get("OTEL_TRACES_EXPORTER", "").strip().lower()
    if exporter == "none":
        return any(environ.get(v) for v in EXPORT_VARIABLES[:3]) and environ.get("OTEL_METRICS_EXPORTER") != "none"
    return any(environ.get(v) for v in EXPORT_VARIABLES)


def installed() -> bool:
    """Whether the `otel` extra (SDK and OTLP/HTTP exporter) is installed, without importing it."""
    try:
        return (
            importlib.util.find_spec("opentelemetry.sdk") is not None
            and importlib.util.find_spec("opentelemetry.exporter.otlp.proto.http") is not None
        )
    except ModuleNotFoundError:
        return False
