"""The wall clock behind every expiry Baton reads: one place, so that a test can move it (protocol.md P73).

`requestState` and session ids (`seal`), single-use ledger entries (`ledger_memory`, `ledger_sqlite`),
background retries (`background`) and the connect kit's tickets and browser sessions read the time of
day only through `now()`. Durations and deadlines inside one process (`time.monotonic`) are not expiries
and stay on the monotonic clock. `baton.testing.FakeClock` sets the source and puts it back.
"""

from __future__ import annotations

import time
from collections.abc import Callable

TimeSource = Callable[[], float]
_source: list[TimeSource] = [time.time]  # a list, not a global statement: one slot the test kit swaps


def now() -> float:
    """Seconds since the epoch, from the current source (`time.time` unless a test set another)."""
    return _source[0]()


def use(source: TimeSource | None) -> TimeSource:
    """Read the time from `source` from now on (None: `time.time` again); the source it replaces."""
    previous = _source[0]
    _source[0] = source or time.time
    return previous
