"""Telemetry: OpenTelemetry spans and metrics for MCP requests, and structured logs (docs/observability.md).

Importing this package imports no `opentelemetry` module: only `otel` and `setup` do, and they are
imported when telemetry is on (protocol.md P60). The rules live one per module: attribute names
(`names`), what may never be on a span (`never`), what of a trace a sealed `requestState` carries
(`flowtrace`), whether telemetry is on (`switch`), the OpenTelemetry API calls (`otel`), the SDK set
up from the standard environment variables (`setup`), and the log formats (`logs`). Internal: telemetry
is turned on and configured by environment variables (docs/observability.md), not by importing it.
"""

__all__: list[str] = []
