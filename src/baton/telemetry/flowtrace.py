"""What of a trace a sealed `requestState` carries, so that every round of a flow is in one trace
whichever instance serves it (protocol.md P61).

Exactly three things, as one 50-character hex string in the journal (`Journal.trace`): the trace id
(16 bytes), the span id of the server span that answered `input_required` (8 bytes), and the trace
flags (1 byte, the sampled bit). Not `tracestate`, not baggage, nothing the client sent: a later round
continues the trace the flow began in, and the state grows by about 75 bytes, only when tracing is on.
"""

from __future__ import annotations

from typing import NamedTuple

_LENGTH = 32 + 16 + 2


class FlowTrace(NamedTuple):
    trace_id: int
    span_id: int
    flags: int


def encode(trace_id: int, span_id: int, flags: int) -> str:
    return "%032x%016x%02x" % (trace_id, span_id, flags & 0xFF)  # noqa: UP031 (a third cheaper than the f-string)


def decode(text: str) -> FlowTrace | None:
    """The flow's trace from the journal, or None (absent, or not a valid one: a round then starts afresh)."""
    if len(text) != _LENGTH:
        return None
    try:
        trace_id, span_id, flags = int(text[:32], 16), int(text[32:48], 16), int(text[48:], 16)
    except ValueError:
        return None
    if not trace_id or not span_id:
        return None
    return FlowTrace(trace_id, span_id, flags)
