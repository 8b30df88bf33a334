"""The metric reader `baton serve` sets up: the SDK's periodic exporting reader, with Baton's own duration
histograms (`baton.telemetry.durations`) added to each collection it exports (protocol.md P109).

The Python SDK has no metric producer to register, so the reader is where the two meet: `_receive_metrics`,
the hook the SDK calls with each collection, adds Baton's points under the `baton` instrumentation scope, and
`collect` exports Baton's alone when the SDK had nothing to collect (the SDK calls no hook then). The
histograms are the SDK's point types, with the temporality the exporter prefers for histograms. Imported only
by `baton.telemetry.setup`, once the `otel` extra is known to be installed.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any

from opentelemetry.sdk.metrics import Histogram as SdkHistogram
from opentelemetry.sdk.metrics.export import (
    AggregationTemporality,
    HistogramDataPoint,
    Metric,
    MetricExporter,
    MetricsData,
    PeriodicExportingMetricReader,
    ResourceMetrics,
    ScopeMetrics,
)
from opentelemetry.sdk.metrics.export import Histogram as HistogramData
from opentelemetry.sdk.metrics.view import Aggregation, DefaultAggregation, ExplicitBucketHistogramAggregation
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.util.instrumentation import InstrumentationScope

from ..version import __version__
from . import durations, names
from .wallclock import now_ns


class ReaderWithDurations(PeriodicExportingMetricReader):
    """A `PeriodicExportingMetricReader` whose every export carries Baton's duration histograms."""

    def __init__(self, exporter: MetricExporter, resource: Resource) -> None:
        # What the exporter prefers for histograms, as the SDK reads it off every exporter.
        temporality: dict[type, AggregationTemporality] = getattr(exporter, "_preferred_temporality", None) or {}
        aggregation: dict[type, Aggregation] = getattr(exporter, "_preferred_aggregation", None) or {}
        self._temporality = temporality.get(SdkHistogram, AggregationTemporality.CUMULATIVE)
        self._resource = resource
        self._scope = InstrumentationScope(names.INSTRUMENTATION, __version__)
        self._collecting = threading.Lock()
        self._merged = False
        self._table: durations.Table | None = None
        """None when the exporter asks for another histogram than explicit buckets (exponential, say): the
        SDK's histogram then records Baton's points, as the exporter wants them."""
        super().__init__(exporter)  # its ticker may collect from now on: every field above is set
        wanted = aggregation.get(SdkHistogram, DefaultAggregation())
        if isinstance(wanted, DefaultAggregation | ExplicitBucketHistogramAggregation):
            self._table = durations.add_table(self._temporality is AggregationTemporality.DELTA)
        else:
            durations.decline(self)

    # `collect` is final in the SDK's typing; overridden all the same, because the SDK calls no hook at all when it
    # had nothing to collect, and Baton's histograms must be exported then too. It only adds to what the SDK does.
    def collect(self, timeout_millis: float = 10_000) -> None:  # type: ignore[misc]
        with self._collecting:  # the ticker, a flush and the shutdown may collect at once
            self._merged = False
            super().collect(timeout_millis=timeout_millis)
            if not self._merged:  # the SDK had no point: Baton's go alone
                data = self._with_durations(MetricsData(resource_metrics=[]))
                if data.resource_metrics:
                    super()._receive_metrics(data, timeout_millis=timeout_millis)

    def shutdown(self, timeout_millis: float = 30_000, **kwargs: Any) -> None:
        super().shutdown(timeout_millis=timeout_millis, **kwargs)  # its last collection exports the last points
        if self._table is not None:
            durations.remove_table(self._table)
        durations.undecline(self)

    def _receive_metrics(self, metrics_data: MetricsData, timeout_millis: float = 10_000, **kwargs: Any) -> None:
        self._merged = True
        super()._receive_metrics(self._with_durations(metrics_data), timeout_millis=timeout_millis, **kwargs)

    def _with_durations(self, data: MetricsData) -> MetricsData:
        """`data` with Baton's histograms added to the `baton` scope of this resource (made if absent)."""
        metrics = self._durations(now_ns())
        if not metrics:
            return data
        resources = list(data.resource_metrics)
        for i, resource in enumerate(resources):
            if resource.resource == self._resource:
                scopes = _with_scope(resource.scope_metrics, self._scope, metrics)
                resources[i] = ResourceMetrics(resource.resource, scopes, resource.schema_url)
                break
        else:
            resources.append(ResourceMetrics(self._resource, [ScopeMetrics(self._scope, metrics, "")], ""))
        return MetricsData(resource_metrics=resources)

    def _durations(self, now: int) -> list[Metric]:
        """Baton's histograms with a point since the last collection, as the SDK's metrics."""
        if self._table is None:
            return []
        metrics = []
        for histogram in list(self._table.histograms.values()):
            points = histogram.collect(now)
            if not points:
                continue
            bounds = list(histogram.bounds)
            series = [
                HistogramDataPoint(
                    attributes=dict(p.attributes),
                    start_time_unix_nano=p.start_ns,
                    time_unix_nano=now,
                    count=p.points,
                    sum=p.total,
                    bucket_counts=p.counts,
                    explicit_bounds=bounds,
                    min=p.low,
                    max=p.high,
                )
                for p in points
            ]
            data = HistogramData(data_points=series, aggregation_temporality=self._temporality)
            metrics.append(
                Metric(name=histogram.name, description=histogram.description, unit=histogram.unit, data=data)
            )
        return metrics


def _with_scope(
    scopes: Sequence[ScopeMetrics], scope: InstrumentationScope, metrics: list[Metric]
) -> list[ScopeMetrics]:
    """`scopes` with `metrics` added to `scope`'s (made if absent)."""
    merged = list(scopes)
    for j, found in enumerate(merged):
        if found.scope == scope:
            merged[j] = ScopeMetrics(found.scope, [*found.metrics, *metrics], found.schema_url)
            return merged
    merged.append(ScopeMetrics(scope, metrics, ""))
    return merged
