"""A bounded map whose entries each expire at their own time: the least recently used entry goes first
when it is full, and an expired entry is never returned. Times are `baton.state.clock.now()` values,
given by the caller, so the testing kit's fake clock moves them."""

from __future__ import annotations

from collections import OrderedDict
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class TtlCache(Generic[K, V]):
    """At most `size` entries, each kept until the time it was stored with."""

    def __init__(self, size: int) -> None:
        if size < 1:
            raise ValueError("a cache holds at least one entry")
        self.size = size
        self._entries: OrderedDict[K, tuple[float, V]] = OrderedDict()

    def get(self, key: K, now: float) -> tuple[V] | None:
        """`(value,)` while the entry lives (and it becomes the most recently used), else None."""
        hit = self._entries.get(key)
        if hit is None:
            return None
        if hit[0] <= now:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return (hit[1],)

    def put(self, key: K, value: V, until: float, now: float) -> None:
        """Keep `value` until `until` (nothing is kept when that has passed), evicting the least recently used."""
        if until <= now:
            self._entries.pop(key, None)
            return
        self._entries[key] = (until, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    def __len__(self) -> int:
        return len(self._entries)
