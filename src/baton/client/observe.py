"""Telemetry for a client, decided once when the `Client` is made (protocol.md P60).

`observer(target)` is None unless this process has configured OpenTelemetry; then it is a
`baton.client.tracing.ClientObserver` (only then is OpenTelemetry imported), which wraps each leg in a
CLIENT span and injects its context into `params._meta`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..telemetry.switch import configured

if TYPE_CHECKING:
    from .tracing import ClientObserver


def observer(target: object, arguments: bool = False) -> ClientObserver | None:
    """`arguments`: tool arguments and full resource URIs on spans (`Client(trace_arguments=True)`, P64)."""
    if not configured():
        return None
    from .tracing import ClientObserver  # noqa: PLC0415 (OpenTelemetry, the optional otel extra, only when configured)

    return ClientObserver(target, arguments)
