"""Work that must still happen after its request has answered: retried in the background, with backoff.

Used when a ledger call failed in a way that leaves something to finish once the store is back: a reply
that was not recorded (the server) or a claim that may still land (the Redis ledger).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from . import clock

log = logging.getLogger("baton.state")

FIRST_PAUSE_S = 0.25
LONGEST_PAUSE_S = 5.0


class Retries:
    """Background retries, each until it is done or its deadline passes; `cancel_all` at shutdown."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Future[None]] = set()

    def keep_trying(self, what: str, attempt: Callable[[], Awaitable[bool]], until: float) -> None:
        """Call `attempt` after 0.25 s, then with the pause doubling up to 5 s, until it returns True
        (done) or `until` (a `clock.now()`) passes. `attempt` returns False to be called again and
        handles its own errors."""

        async def run() -> None:
            pause = FIRST_PAUSE_S
            while clock.now() < until:
                await asyncio.sleep(pause)
                if await attempt():
                    return
                pause = min(pause * 2, LONGEST_PAUSE_S)
            log.error("gave up trying to %s: its deadline passed first", what)

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()
