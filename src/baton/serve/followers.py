"""Who follows the running SSE streams of one 2025-11-25 session, and the resume window (protocol.md P111).

A closed POST stream is not a cancellation: its request goes on, and the questions it asked keep waiting
for the client to come back with `GET` and `Last-Event-ID`, which replays them so the answer can still
be given. The wait is bounded: once no connection has followed a running stream for `resume_window_s`,
its questions end as unanswered (`Stream.close`), as before the window; a resume within it stops the
clock, and a resumed stream left again starts it anew. The ask timeout bounds every question anyway.
"""

from __future__ import annotations

import asyncio
import logging

from ..server.outbound import Stream

log = logging.getLogger("baton.http")


class Followers:
    """The running streams of one session (by stream id) and how many connections follow each."""

    __slots__ = ("_clocks", "_count", "_ways")

    def __init__(self) -> None:
        self._ways: dict[str, Stream] = {}
        self._count: dict[str, int] = {}
        self._clocks: dict[str, asyncio.TimerHandle] = {}

    def opened(self, sid: str, stream: Stream) -> None:
        """A request's stream starts, followed by the POST that opened it."""
        self._ways[sid] = stream
        self._count[sid] = 1

    def ended(self, sid: str) -> None:
        """Its request ended: nothing left to wait for."""
        self._ways.pop(sid, None)
        self._count.pop(sid, None)
        self._stop(sid)

    def joined(self, sid: str) -> None:
        """A `GET` with `Last-Event-ID` follows the stream again: its questions wait on."""
        if sid in self._ways:
            self._count[sid] += 1
            self._stop(sid)

    def left(self, sid: str, window_s: float) -> None:
        """A connection following the stream closed; with none left, the window starts (P111)."""
        if sid not in self._ways:
            return
        self._count[sid] -= 1
        if self._count[sid] > 0:
            return
        if window_s <= 0:
            self._expire(sid, window_s)
            return
        self._stop(sid)
        self._clocks[sid] = asyncio.get_running_loop().call_later(window_s, self._expire, sid, window_s)

    def close(self) -> None:
        """The session is over here: no clock runs on (its requests are cancelled by the caller)."""
        for clock in self._clocks.values():
            clock.cancel()
        self._clocks.clear()

    def _stop(self, sid: str) -> None:
        clock = self._clocks.pop(sid, None)
        if clock is not None:
            clock.cancel()

    def _expire(self, sid: str, window_s: float) -> None:
        self._clocks.pop(sid, None)
        stream = self._ways.get(sid)
        if stream is None or self._count.get(sid, 0) > 0:
            return
        log.info("stream %s was not resumed within %g s: its questions end as unanswered", sid, window_s)
        stream.close(f"the client closed the request's stream and did not resume it within {window_s:g} s")
