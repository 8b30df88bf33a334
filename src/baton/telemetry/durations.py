"""The duration histograms `baton serve` keeps itself, one table per metric reader (protocol.md P109).

Why not the SDK's `Histogram.record`: the OpenTelemetry Python SDK has no bound instruments, so every record
builds a measurement, cleans and hashes its attributes and looks its series up again, about 5 µs with no
attribute and 9 µs with a tool call's four on the bench machine, more than all the rest of a sampled-out round.
Where Baton set the meter provider up itself (`baton.telemetry.setup`), its reader (`baton.telemetry.reader`)
asks this module for a table, and a histogram point costs a lookup by the attribute set, a bisect and a few
additions under a lock. The reader turns the tables into the SDK's own point types at each collection, so the
exporter sees one batch, Baton's histograms beside the SDK's. A meter provider the application set up gets
Baton's points through the SDK's `Histogram.record` as before: `bind` returns None there.

Pure Python: no OpenTelemetry import here. Buckets as the SDK's explicit-bucket histogram counts them (a value
on a boundary counts in the bucket it closes); a histogram keeps at most `SERIES_LIMIT` attribute sets, the
SDK's default cardinality limit, past which points go to the overflow set the SDK uses.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

from .wallclock import now_ns

Record = Callable[[float, Mapping[str, Any]], None]
"""Records one point: its value in seconds and its attributes."""
SERIES_LIMIT = 2000
OVERFLOW: Mapping[str, Any] = {"otel.metric.overflow": True}
_INFINITY = float("inf")
BOUND_LIMIT = 512
"""Attribute dicts whose series are found by identity, at most; when one-off dicts (a failure's, made per
request) have filled the table it starts afresh, and the shared ones are found again at their next point."""


class Point(NamedTuple):
    """One attribute set's histogram over a collection interval, as the reader exports it."""

    attributes: Mapping[str, Any]
    start_ns: int
    points: int
    total: float
    counts: list[int]
    low: float
    high: float


class _Series:
    __slots__ = ("attributes", "count", "counts", "high", "low", "start_ns", "total")

    def __init__(self, attributes: Mapping[str, Any], buckets: int, start_ns: int) -> None:
        self.attributes = attributes
        self.counts = [0] * buckets
        self.count = 0
        self.total = 0.0
        self.low = float("inf")
        self.high = float("-inf")
        self.start_ns = start_ns


class DurationHistogram:
    """One histogram in one reader's table: its series by attribute set."""

    def __init__(self, name: str, unit: str, description: str, bounds: Sequence[float], delta: bool) -> None:
        self.name = name
        self.unit = unit
        self.description = description
        self.bounds = tuple(bounds)
        self.delta = delta
        self._series: dict[frozenset[tuple[str, type, Any]], _Series] = {}
        self._bound: dict[int, tuple[Mapping[str, Any], _Series]] = {}
        """Series by the identity of the attribute dict last recorded with them: the few shared dicts (one per
        method, target, version and transport, `common.Common.metric`) find theirs without hashing their items.
        Each entry keeps its dict alive, so an id here is never another dict's."""
        self._lock = threading.Lock()
        self._since = now_ns()

    def record(self, seconds: float, attributes: Mapping[str, Any]) -> None:
        if not 0 <= seconds < _INFINITY:  # the SDK's rule: a negative (the wall clock stepped back), NaN or
            return  # infinite value is dropped
        bucket = bisect_left(self.bounds, seconds)
        with self._lock:
            bound = self._bound.get(id(attributes))
            if bound is not None and bound[0] is attributes:
                series = bound[1]
            else:
                key = _key(attributes)
                series = self._series.get(key) or self._add(key, attributes)
                if len(self._bound) >= BOUND_LIMIT:  # one-off dicts filled it: the shared ones bind again
                    self._bound.clear()
                self._bound[id(attributes)] = (attributes, series)
            series.counts[bucket] += 1
            series.count += 1
            series.total += seconds
            if seconds < series.low:  # noqa: PLR1730 (a comparison costs less than a call to min)
                series.low = seconds
            if seconds > series.high:  # noqa: PLR1730
                series.high = seconds

    def _add(self, key: frozenset[tuple[str, type, Any]], attributes: Mapping[str, Any]) -> _Series:
        """A new series (the lock held): its attributes copied, or the overflow set's past the limit."""
        if len(self._series) >= SERIES_LIMIT:
            key, attributes = _key(OVERFLOW), OVERFLOW
            found = self._series.get(key)
            if found is not None:
                return found
        series = self._series[key] = _Series(dict(attributes), len(self.bounds) + 1, self._since)
        return series

    def collect(self, at_ns: int) -> list[Point]:
        """The points since the start (cumulative) or since the last collection (delta, which starts afresh)."""
        with self._lock:
            series = list(self._series.values())
            if self.delta:
                self._series = {}
                self._bound = {}
                self._since = at_ns
            points = [
                Point(s.attributes, s.start_ns, s.count, s.total, list(s.counts), s.low, s.high)
                for s in series
                if s.count
            ]
        return points


def _key(attributes: Mapping[str, Any]) -> frozenset[tuple[str, type, Any]]:
    """An attribute set's series key: each value with its type, as the SDK tells `True`, `1` and `1.0` apart, and
    a list as a tuple."""
    return frozenset((k, type(v), tuple(v) if type(v) is list else v) for k, v in attributes.items())


class Table:
    """One reader's histograms, by name."""

    def __init__(self, delta: bool) -> None:
        self.delta = delta
        self.histograms: dict[str, DurationHistogram] = {}
        self._lock = threading.Lock()

    def histogram(self, name: str, unit: str, description: str, bounds: Sequence[float]) -> DurationHistogram:
        with self._lock:
            found = self.histograms.get(name)
            if found is None:
                found = self.histograms[name] = DurationHistogram(name, unit, description, bounds, self.delta)
            return found


_tables: list[Table] = []
_declined: list[object] = []
"""Readers that want another histogram than explicit buckets: while one is there, `bind` binds nothing."""


def add_table(delta: bool) -> Table:
    """A table for a new reader; from now on `bind` records into it too."""
    table = Table(delta)
    _tables.append(table)
    return table


def remove_table(table: Table) -> None:
    """Its reader is shut down: histograms bound from now on leave it out."""
    if table in _tables:
        _tables.remove(table)


def decline(reader: object) -> None:
    """A reader that wants the SDK's own histogram (exponential buckets, say): from now on `bind` returns None, so
    that every reader gets the points through the SDK."""
    _declined.append(reader)


def undecline(reader: object) -> None:
    if reader in _declined:
        _declined.remove(reader)


def bind(name: str, unit: str, description: str, bounds: Sequence[float]) -> Record | None:
    """What records a point of the histogram `name` in every reader's table (one, unless several exporters), or
    None when no reader of Baton's is set up or one of them wants the SDK's histogram (`decline`)."""
    if not _tables or _declined:
        return None
    histograms = [table.histogram(name, unit, description, bounds) for table in _tables]
    if len(histograms) == 1:
        return histograms[0].record

    def record(seconds: float, attributes: Mapping[str, Any]) -> None:
        for histogram in histograms:
            histogram.record(seconds, attributes)

    return record
