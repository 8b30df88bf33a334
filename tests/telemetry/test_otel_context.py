"""How a request's span is made current (`attach` / `detach` in `baton.telemetry.otel`, protocol.md P110) and how
its shared attributes are found (`CommonAttributes.get`, P66, P78): the quick paths do what the API's own
functions do, and what a client makes up never becomes a cache key."""

from __future__ import annotations

import logging
from collections.abc import Iterator

import pytest
from opentelemetry import baggage, trace
from opentelemetry import context as otel_context
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from baton.telemetry import names, otel
from baton.telemetry.common import KEPT, CommonAttributes


def _span(span_id: int) -> trace.Span:
    return NonRecordingSpan(SpanContext(0xABC, span_id, is_remote=False, trace_flags=TraceFlags(0)))


@pytest.fixture(params=["one ContextVar.set", "the API's functions"])
def runtime(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Each test runs on the quick path and on the API's own functions (the fallback when the names move)."""
    if request.param == "the API's functions":
        monkeypatch.setattr(otel, "_RUNTIME", None)
    yield request.param


def test_this_api_release_keeps_the_names_the_quick_path_reads() -> None:
    """If an OpenTelemetry upgrade moves them, Baton stays correct (the fallback) but slower: this says so."""
    assert otel._RUNTIME is not None


def test_attach_makes_the_span_current_over_what_was_there_and_detach_puts_it_back(runtime: str) -> None:
    outer = otel_context.attach(baggage.set_baggage("tenant", "t1"))
    try:
        before = otel_context.get_current()
        first, second = _span(1), _span(2)
        token = otel.attach(first)
        assert trace.get_current_span() is first
        assert baggage.get_baggage("tenant") == "t1"  # the rest of the context is kept
        inner = otel.attach(second)
        assert trace.get_current_span() is second
        otel.detach(inner)
        assert trace.get_current_span() is first
        otel.detach(token)
        assert otel_context.get_current() is before
    finally:
        otel_context.detach(outer)


def test_a_token_that_cannot_be_reset_is_logged_by_the_api_not_raised(
    runtime: str, caplog: pytest.LogCaptureFixture
) -> None:
    token = otel.attach(_span(3))
    otel.detach(token)
    with caplog.at_level(logging.ERROR, logger="opentelemetry.context"):
        otel.detach(token)  # used already
        otel.detach(object())  # not a token at all
    assert caplog.text.count("Failed to detach context") == 2
    assert not trace.get_current_span().get_span_context().is_valid


def test_a_known_request_finds_its_attributes_in_one_lookup_and_made_up_text_is_never_a_key() -> None:
    common = CommonAttributes()
    known = common.get("tools/call", "book", "2026-07-28", names.TRANSPORT_TCP)
    assert common.get("tools/call", "book", "2026-07-28", names.TRANSPORT_TCP) is known
    for i in range(KEPT + 10):
        made_up = common.get(f"made/up-{i}-SECRET", None, f"v-{i}-SECRET", names.TRANSPORT_TCP)
        assert made_up.name == names.OTHER
        assert made_up.start[names.MCP_PROTOCOL_VERSION] == names.OTHER
    assert "SECRET" not in repr(common._known)
    assert len(common._known) == 2  # the known key, and the one `_OTHER` key every made-up request shares
    odd_version = common.get("tools/call", "book", "v-SECRET", names.TRANSPORT_TCP)
    assert odd_version.start[names.MCP_PROTOCOL_VERSION] == names.OTHER and "SECRET" not in repr(common._known)
