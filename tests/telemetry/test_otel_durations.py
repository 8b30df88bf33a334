"""Baton's own duration histograms (`baton.telemetry.durations`, exported by `baton.telemetry.reader`,
protocol.md P109): the same buckets, count, sum, min and max as the SDK's histogram given the same points, in
one batch with the SDK's own metrics, with either temporality, bounded in series, and gone with their reader.

The end-to-end path (`baton serve` exporting to a real OTLP/HTTP receiver) is in tests/telemetry/test_otel.py.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from opentelemetry.sdk.metrics import Counter, Histogram, MeterProvider
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    InMemoryMetricReader,
    MetricExporter,
    MetricExportResult,
    MetricsData,
)
from opentelemetry.sdk.resources import Resource
from support import otel_memory

from baton.telemetry import durations, names
from baton.telemetry.reader import ReaderWithDurations

BOUNDS = names.DURATION_BUCKETS
TOOL = {"mcp.method.name": "tools/call", "gen_ai.tool.name": "book", "network.transport": "tcp"}


class Kept(MetricExporter):
    """Keeps every batch it is given."""

    def __init__(self, temporality: AggregationTemporality = AggregationTemporality.CUMULATIVE) -> None:
        super().__init__(preferred_temporality={Histogram: temporality, Counter: temporality})
        self.batches: list[MetricsData] = []

    def export(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> MetricExportResult:
        self.batches.append(metrics_data)
        return MetricExportResult.SUCCESS

    def force_flush(self, timeout_millis: float = 10_000) -> bool:
        return True

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        pass


@pytest.fixture
def reader() -> Iterator[tuple[ReaderWithDurations, Kept, MeterProvider]]:
    exporter = Kept()
    reader = ReaderWithDurations(exporter, Resource({"service.name": "durations-test"}))
    provider = MeterProvider(resource=Resource({"service.name": "durations-test"}), metric_readers=[reader])
    yield reader, exporter, provider
    provider.shutdown()
    assert not durations._tables, "a shut-down reader's table is left behind"


def histogram_points(batch: MetricsData, name: str) -> list[Any]:
    return [
        point
        for resource in batch.resource_metrics
        for scope in resource.scope_metrics
        for metric in scope.metrics
        if metric.name == name
        for point in metric.data.data_points  # type: ignore[union-attr]
    ]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.one_of(st.sampled_from(BOUNDS), st.floats(min_value=0, max_value=400, allow_nan=False)),
        min_size=1,
        max_size=60,
    )
)
def test_the_same_points_as_the_sdks_histogram(values: Sequence[float]) -> None:
    """Bucket counts, count, sum, min and max agree with the SDK's explicit-bucket histogram, values on a
    boundary included."""
    sdk_reader = InMemoryMetricReader()
    sdk = MeterProvider(metric_readers=[sdk_reader]).get_meter("t")
    theirs = sdk.create_histogram("d", unit="s", explicit_bucket_boundaries_advisory=BOUNDS)
    ours = durations.DurationHistogram("d", "s", "", BOUNDS, delta=False)
    for value in values:
        theirs.record(value, TOOL)
        ours.record(value, TOOL)
    data = sdk_reader.get_metrics_data()
    assert data is not None
    (expected,) = histogram_points(data, "d")
    (got,) = ours.collect(0)
    assert got.counts == list(expected.bucket_counts)
    assert (got.points, got.low, got.high) == (expected.count, expected.min, expected.max)
    assert got.total == pytest.approx(expected.sum)
    assert dict(got.attributes) == dict(expected.attributes)


def test_one_batch_with_the_sdks_metrics_under_the_baton_scope(
    reader: tuple[ReaderWithDurations, Kept, MeterProvider],
) -> None:
    """Baton's histogram and an SDK counter arrive in one export, one resource; when the SDK has nothing to
    collect, Baton's go alone (the SDK calls no hook then)."""
    ours, exporter, provider = reader
    record = durations.bind(names.SERVER_DURATION, "s", "Duration", BOUNDS)
    assert record is not None
    record(0.004, TOOL)
    record(0.03, dict(TOOL))  # an equal dict, not the same one: the same series
    record(0.5, {**TOOL, "error.type": "tool_error"})
    ours.force_flush()
    (alone,) = exporter.batches
    (resource,) = alone.resource_metrics
    assert resource.resource.attributes["service.name"] == "durations-test"
    (scope,) = resource.scope_metrics
    assert scope.scope.name == names.INSTRUMENTATION
    points = {p.attributes.get("error.type"): p for p in histogram_points(alone, names.SERVER_DURATION)}
    assert points[None].count == 2 and points[None].bucket_counts[0] == 1 and points[None].bucket_counts[2] == 1
    assert points["tool_error"].count == 1 and points["tool_error"].min == points["tool_error"].max == 0.5

    provider.get_meter("app").create_counter("app.things").add(3)
    record(0.004, TOOL)
    ours.force_flush()
    both = exporter.batches[1]
    (resource,) = both.resource_metrics
    assert {s.scope.name for s in resource.scope_metrics} == {"app", names.INSTRUMENTATION}
    (cumulative,) = [p for p in histogram_points(both, names.SERVER_DURATION) if "error.type" not in p.attributes]
    assert cumulative.count == 3, "cumulative: the first two points and the new one"


def test_delta_temporality_starts_each_interval_afresh() -> None:
    exporter = Kept(AggregationTemporality.DELTA)
    reader = ReaderWithDurations(exporter, Resource({}))
    provider = MeterProvider(metric_readers=[reader])
    try:
        record = durations.bind(names.SERVER_DURATION, "s", "Duration", BOUNDS)
        assert record is not None
        record(0.004, TOOL)
        record(0.004, TOOL)
        reader.force_flush()
        record(0.2, TOOL)  # the same dict as before the collection: a new interval's series all the same
        reader.force_flush()
        reader.force_flush()
        first, second = (histogram_points(b, names.SERVER_DURATION) for b in exporter.batches)
        assert [p.count for p in first] == [2] and [p.count for p in second] == [1]
        assert second[0].min == second[0].max == 0.2
        assert second[0].start_time_unix_nano == first[0].time_unix_nano, "a delta starts where the last one ended"
        assert len(exporter.batches) == 2, "an interval with no point exports nothing"
    finally:
        provider.shutdown()


def test_a_dict_recorded_again_finds_its_series_past_many_one_off_dicts() -> None:
    """Series are found by the attribute dict's identity only while that dict is the one recorded before; every
    point lands in the series of its attributes' values, also after one-off dicts filled the identity table."""
    histogram = durations.DurationHistogram("d", "s", "", BOUNDS, delta=False)
    shared = dict(TOOL)
    for _ in range(3):
        histogram.record(0.001, shared)
    for _ in range(durations.BOUND_LIMIT + 10):  # more one-off dicts than are bound by identity
        histogram.record(0.001, {**TOOL, "error.type": "-32602"})
    histogram.record(0.001, shared)
    points = {p.attributes.get("error.type"): p.points for p in histogram.collect(0)}
    assert points == {None: 4, "-32602": durations.BOUND_LIMIT + 10}


def test_series_past_the_limit_go_to_the_overflow_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(durations, "SERIES_LIMIT", 3)
    histogram = durations.DurationHistogram("d", "s", "", BOUNDS, delta=False)
    for tool in "abcdef":
        histogram.record(0.001, {"gen_ai.tool.name": tool})
    points = {tuple(sorted(p.attributes.items())): p.points for p in histogram.collect(0)}
    assert len(points) == 4
    assert points[(("otel.metric.overflow", True),)] == 3


def test_without_a_reader_of_batons_nothing_is_bound() -> None:
    """A meter provider the application set up itself gets the SDK's histogram (`bind` is None)."""
    assert not durations._tables
    assert durations.bind(names.SERVER_DURATION, "s", "Duration", BOUNDS) is None


def test_values_the_sdk_drops_are_dropped_and_types_keep_series_apart() -> None:
    """A negative duration (the wall clock stepped back), NaN or infinity is no point, as in the SDK; `True`, `1`
    and `1.0` are three attribute sets, as the SDK keys them."""
    histogram = durations.DurationHistogram("d", "s", "", BOUNDS, delta=False)
    for value in (-0.001, float("nan"), float("inf")):
        histogram.record(value, TOOL)
    assert histogram.collect(0) == []
    for flag in (True, 1, 1.0):
        histogram.record(0.001, {"x": flag})
    assert sorted(type(p.attributes["x"]).__name__ for p in histogram.collect(0)) == ["bool", "float", "int"]


@pytest.mark.process
def test_a_meter_provider_the_application_set_first_gets_batons_points() -> None:
    """The application set its own meter provider before `baton serve`'s set-up ran: the SDK refuses Baton's,
    so Baton's is shut down, no table is left, and the histogram reaches the application's reader."""
    found = otel_memory.run(
        """
        from baton import KeyRing, Server
        from baton.telemetry import durations, setup
        assert setup.from_env("app-first", "a")
        server = Server("p", state_keys=KeyRing.ephemeral_key())
        server.tool(name="ok")(lambda: "ok")
        server.check_startup("stdio")
        asyncio.run(send(server, "tools/call", {"name": "ok", "arguments": {}}))
        print(json.dumps({"points": points("mcp.server.operation.duration"), "tables": len(durations._tables)}))
        """,
        {"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9", "OTEL_METRIC_EXPORT_INTERVAL": "600000"},
    )
    assert found["tables"] == 0
    assert [p["gen_ai.tool.name"] for p in found["points"]] == ["ok"]


@pytest.mark.process
def test_an_exporter_that_wants_exponential_histograms_gets_the_sdks() -> None:
    """`OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION=base2_exponential_bucket_histogram`: Baton keeps
    no table of its own, and the SDK's histogram records the points the way the exporter asks."""
    found = otel_memory.run(
        """
        from baton.telemetry import durations, otel, setup
        assert setup.from_env("exponential", "e")
        record = otel.Instruments("server").record
        print(json.dumps({"tables": len(durations._tables), "sdk": type(record.__self__).__module__}))
        setup.shutdown()
        """,
        {
            "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:9",
            "OTEL_METRIC_EXPORT_INTERVAL": "600000",
            "OTEL_EXPORTER_OTLP_METRICS_DEFAULT_HISTOGRAM_AGGREGATION": "base2_exponential_bucket_histogram",
        },
        providers=False,
    )
    assert found["tables"] == 0
    assert found["sdk"].startswith("opentelemetry.sdk.metrics")
