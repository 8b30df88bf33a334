"""The one clock telemetry reads: when a span starts or ends and when a histogram point is taken.

Never the test kit's clock (`baton.state.clock`, protocol.md P73): that one moves expiries, and a trace or a
metric should say when things really happened. No OpenTelemetry import here, so that Baton's own histograms
(`baton.telemetry.durations`) read the same clock without it.
"""

from __future__ import annotations

import time

now_ns = time.time_ns
"""Real time, in nanoseconds since the epoch: the C function itself, no call of ours around it (a span's start and
end and a histogram point each read it, on every request)."""
