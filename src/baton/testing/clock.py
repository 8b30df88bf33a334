"""A fake wall clock for expiry tests: `requestState`, session ids, ledger entries, tickets (protocol.md P73).

Baton reads the time of day only through `baton.state.clock.now()`; `FakeClock` is a source for it
that moves only when told. Use it as a context manager (or the `fake_clock` fixture), which puts the
real clock back at the end.
"""

from __future__ import annotations

from types import TracebackType

from ..state import clock


class FakeClock:
    """A wall clock that starts at `start` (default: the real time now) and moves only by `advance`."""

    def __init__(self, start: float | None = None) -> None:
        self.now = clock.now() if start is None else float(start)
        self._previous: list[clock.TimeSource] = []

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> float:
        """Move the clock forward (or back, with a negative number); the new time."""
        self.now += seconds
        return self.now

    def __enter__(self) -> FakeClock:
        self._previous.append(clock.use(self))
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        clock.use(self._previous.pop())
