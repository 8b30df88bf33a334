"""The one module of the library that imports the OpenTelemetry API: tracers, meters, W3C propagation
through `params._meta` (SEP-414) and the parent of a round's span (protocol.md P61, P63).

Imported only once telemetry is on (`switch.configured`): with the extra absent or no provider set,
nothing imports it, so serving costs what it did without it (protocol.md P60).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextvars import ContextVar
from typing import Any, Literal

from opentelemetry import context as otel_context
from opentelemetry import metrics, propagate, trace
from opentelemetry.context import Context
from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
from opentelemetry.metrics import Histogram
from opentelemetry.metrics._internal import _ProxyMeterProvider
from opentelemetry.trace import Link, NonRecordingSpan, Span, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from ..version import __version__
from . import durations, names
from .flowtrace import FlowTrace, encode
from .wallclock import now_ns

TRACE_KEYS = ("traceparent", "tracestate", "baggage")
"""The `_meta` keys that carry W3C trace context and baggage (SEP-414)."""
TRACE_LIMITS = {"traceparent": 128, "tracestate": 512, "baggage": 8192}
"""The longest value of each key handed to the propagator, in bytes (protocol.md P100): a `traceparent` is 55
characters (version 00), a `tracestate` need not be kept past 512, baggage past 8,192 (W3C). A longer one
comes from the client, unchecked, and some propagator versions parse it with a regular expression whose
time grows with it (CVE-2026-126360, fixed in opentelemetry-api 1.45.2): it is dropped, whatever is installed."""
SERVER, CLIENT = SpanKind.SERVER, SpanKind.CLIENT
ERROR = Status(StatusCode.ERROR)
"""A span's error status carries no description: messages may quote the user (protocol.md P64)."""


__all__ = [
    "CLIENT",
    "ERROR",
    "SERVER",
    "Context",
    "Instruments",
    "Span",
    "attach",
    "current",
    "detach",
    "flow_of",
    "from_meta",
    "meter_provider_configured",
    "now_ns",
    "open_current",
    "parent_of_round",
    "provider_configured",
    "sampled_out",
]


def provider_configured() -> bool:
    """Whether a real tracer provider is set globally (the SDK's, a vendor's), not the API's default proxy."""
    provider = trace.get_tracer_provider()
    return not isinstance(provider, trace.ProxyTracerProvider | trace.NoOpTracerProvider)


def meter_provider_configured() -> bool:
    """Whether a real meter provider is set globally, not the API's default proxy (`OTEL_METRICS_EXPORTER=none`
    under `baton serve` sets none)."""
    provider = metrics.get_meter_provider()
    return not isinstance(provider, _ProxyMeterProvider | metrics.NoOpMeterProvider)


_EMPTY = Context()
"""The parent of a span that has none (a context is immutable: one serves every such span)."""


class Instruments:
    """One side's tracer and its `mcp.{side}.operation.duration` histogram, from the global providers, under the
    instrumentation scope `baton` at Baton's version. Without a meter provider (`metered` false) there is no
    histogram and the side records nothing: one check a request."""

    def __init__(self, side: Literal["server", "client"]) -> None:
        version = __version__
        self.tracer = trace.get_tracer(names.INSTRUMENTATION, version)
        self.traced = provider_configured()
        """Whether spans are made at all: without a tracer provider (a meter's only) nothing goes into `_meta`."""
        self.metered = meter_provider_configured()
        self.record: durations.Record | None = None
        """One histogram point: `record(seconds, attributes)`, the attributes `common.Common.metric` (or
        `common.failed` of them); None without a meter provider."""
        if self.metered:
            name = names.SERVER_DURATION if side == "server" else names.CLIENT_DURATION
            description = f"Duration of MCP requests as the {side} sees them"
            # Baton's own table where `baton serve` set the reader up, else the SDK's histogram (protocol.md P109).
            self.record = durations.bind(name, names.DURATION_UNIT, description, names.DURATION_BUCKETS)
            if self.record is None:
                histogram: Histogram = metrics.get_meter(names.INSTRUMENTATION, version).create_histogram(
                    name,
                    unit=names.DURATION_UNIT,
                    description=description,
                    explicit_bucket_boundaries_advisory=names.DURATION_BUCKETS,
                )
                self.record = histogram.record

    def start(
        self,
        name: str,
        kind: SpanKind,
        parent: Context | None,
        attributes: Mapping[str, Any],
        start_ns: int,
        links: Sequence[Link] = (),
    ) -> Span:
        return self.tracer.start_span(
            name, parent or _EMPTY, kind, attributes, links, start_time=start_ns, record_exception=False
        )

    def finish(
        self, span: Span, start_ns: int, metric: Mapping[str, Any], failed: bool, recording: bool | None = None
    ) -> None:
        """End `span` (with the error status when `failed`: no description, P64) and record its duration with
        `metric`, the histogram's attributes (`error.type` among them when it failed). A span that does not record
        has nothing to end; `recording`, when the caller knows it already, saves asking the span."""
        end_ns = now_ns()
        if span.is_recording() if recording is None else recording:
            if failed:
                span.set_status(ERROR)
            span.end(end_time=end_ns)
        if self.record is not None:
            self.record((end_ns - start_ns) / 1e9, metric)

    def inject(self, meta: dict[str, Any], span: Span, *, baggage: bool = True) -> None:
        """Write `span`'s context into an outgoing request's `_meta` (the configured propagators), only when spans
        are made (`traced`); without `baggage`, only the trace context: what the sender's own context holds is
        not sent."""
        if not self.traced:
            return
        if baggage:
            propagate.inject(meta, context=trace.set_span_in_context(span))
            return
        carrier: dict[str, str] = {}
        propagate.inject(carrier, context=trace.set_span_in_context(span, Context()))
        meta.update(carrier)


def from_meta(meta: Any) -> Context | None:
    """The context a request's `_meta` carries (`traceparent`, `tracestate`, `baggage`), or None when it
    carries no valid `traceparent`."""
    if type(meta) is not dict or "traceparent" not in meta:
        return None
    carrier = {k: v for k in TRACE_KEYS if isinstance(v := meta.get(k), str) and _within(v, TRACE_LIMITS[k])}
    if "traceparent" not in carrier:
        return None
    try:
        ctx = propagate.extract(carrier, context=Context())
    except (TypeError, ValueError):
        return None
    return ctx if trace.get_current_span(ctx).get_span_context().is_valid else None


def _within(value: str, limit: int) -> bool:
    """Whether a header value is at most `limit` bytes in UTF-8 (counted without encoding a long one)."""
    return len(value) <= limit and (value.isascii() or len(value.encode("utf-8", "surrogatepass")) <= limit)


def parent_of_round(client: Context | None, flow: FlowTrace | None) -> tuple[Context | None, list[Link]]:
    """The parent and links of a server span (protocol.md P63). The flow's trace always wins, so every round
    of a flow is in one trace: without a flow the client's context (or none: a new trace); with one, the
    client's span when it is in the flow's trace already, linked to the previous round; else the previous
    round's span, linked to the client's."""
    if flow is None:
        return client, []
    previous = SpanContext(flow.trace_id, flow.span_id, is_remote=True, trace_flags=TraceFlags(flow.flags))
    theirs = trace.get_current_span(client).get_span_context() if client is not None else None
    if theirs is not None and theirs.trace_id == flow.trace_id:
        return client, [Link(previous)]
    parent = trace.set_span_in_context(NonRecordingSpan(previous), client or Context())
    return parent, [Link(theirs)] if theirs is not None else []


def sampled_out(flow: FlowTrace) -> Span | None:
    """The span of a later round of a flow that round 1 sampled out, or None when round 1 was sampled in
    (protocol.md P108): the flow's own context, not recording, made without asking the sampler again, so that
    the handler's spans inherit the decision and the state seals the same trace."""
    if flow.flags & TraceFlags.SAMPLED:
        return None
    context = SpanContext(flow.trace_id, flow.span_id, is_remote=True, trace_flags=TraceFlags(flow.flags))
    return NonRecordingSpan(context)


def flow_of(span: Span) -> str:
    """The span's trace context as sealed into the flow's state (`flowtrace`), or "" when it has none."""
    sc = span.get_span_context()
    return encode(sc.trace_id, sc.span_id, int(sc.trace_flags)) if sc.is_valid else ""


def current() -> Context:
    """The ambient context (a client span's parent when the caller is inside a span of its own)."""
    return otel_context.get_current()


def open_current() -> Context | None:
    """The ambient context if its span is still open (or sampled out: its children follow it), else None: a
    task that outlived the span it began in (a session's reader) must not make new spans its children."""
    ctx = otel_context.get_current()
    span = trace.get_current_span(ctx)
    if span.is_recording() or not span.get_span_context().trace_flags.sampled:
        return ctx
    return None


def _runtime_var() -> tuple[ContextVar[Context], str] | None:
    """The `ContextVar` under the API's current context and the key of its span, when the API keeps them where
    1.x keeps them and the runtime context is its default one (protocol.md P110); else None."""
    runtime = getattr(otel_context, "_RUNTIME_CONTEXT", None)
    var = getattr(runtime, "_current_context", None)
    key = getattr(trace.propagation, "_SPAN_KEY", None)
    if type(runtime) is ContextVarsRuntimeContext and isinstance(var, ContextVar) and isinstance(key, str):
        return var, key
    return None


_RUNTIME = _runtime_var()


def attach(span: Span) -> object:
    """Make `span` current (the handler's own spans become its children); `detach` undoes it. What the API's
    `attach(set_span_in_context(span))` does, in one `ContextVar.set` where it can (protocol.md P110)."""
    if _RUNTIME is None:
        return otel_context.attach(trace.set_span_in_context(span))
    var, key = _RUNTIME
    return var.set(Context({**var.get(), key: span}))


def detach(token: object) -> None:
    """Restore the context `attach` replaced; a token that cannot be reset is logged by the API, as its own
    `detach` would."""
    if _RUNTIME is not None:
        try:
            _RUNTIME[0].reset(token)  # type: ignore[arg-type]
            return
        except (ValueError, RuntimeError, TypeError):  # another context's token, one used already, not a token:
            pass  # the API's `detach` logs it
    otel_context.detach(token)  # type: ignore[arg-type]
