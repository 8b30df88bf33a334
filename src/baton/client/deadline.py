"""Deadlines that measure the server, not the person (protocol.md P90).

A request's `deadline_s` bounds how long the client waits for the server, each leg of a 2026-07-28
flow on its own. Time a person spends on a question (a form, a URL flow in the browser, the deprecated
sampling and roots) or on an OAuth login is not the server's, so every deadline of the client stops
while a question handler runs and starts again, with what was left, when it returns:
`Deadlines.running(what)` is one leg's deadline, `Deadlines.answering()` wraps a handler, and
`person_time()` pauses the deadlines of the request running in this task (the login). In a
2025-11-25 session the questions come while the request waits, answered in tasks of their own, so
the pause is client-wide: while anyone answers, no request of the client times out.

A deadline that fires raises `DeadlineExceeded`, which says which deadline, after how long, and how
to raise it. The person's own limit is separate and off by default (`answer_timeout_s`): a question
not answered in time is answered `cancel`, so the server's handler can fall back.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import logging
from collections.abc import AsyncIterator, Awaitable, Iterator
from typing import TypeVar

from ..forms import Cancelled
from .errors import ClientError

log = logging.getLogger("baton.client")
T = TypeVar("T")
HOW = "Client(deadline_s=...) or --timeout SECONDS raises it; time spent answering questions does not count"


_CURRENT: contextvars.ContextVar[Deadlines | None] = contextvars.ContextVar("baton_deadlines", default=None)


class DeadlineExceeded(ClientError, TimeoutError):
    """The server did not finish within the request's deadline (time answering questions not counted)."""


class Deadlines:
    """The deadlines of one client's requests in flight, and the pause while a person answers."""

    def __init__(self, deadline_s: float, answer_timeout_s: float | None = None) -> None:
        self.deadline_s = deadline_s
        self.answer_timeout_s = answer_timeout_s
        self._running: set[asyncio.Timeout] = set()
        self._paused: dict[asyncio.Timeout, float] = {}  # a timeout -> the seconds it had left
        self._answering = 0

    @contextlib.asynccontextmanager
    async def running(self, what: str) -> AsyncIterator[None]:
        """Bound the block by `deadline_s` of the server's time; DeadlineExceeded names `what` when it fires."""
        timer = asyncio.timeout(self.deadline_s)
        _CURRENT.set(self)  # for person_time() further down this task (an OAuth login)
        try:
            async with timer:
                self._running.add(timer)
                if self._answering:  # begun while someone answers: starts when they are done
                    self._paused[timer] = self.deadline_s
                    timer.reschedule(None)
                try:
                    yield
                finally:
                    self._running.discard(timer)
                    self._paused.pop(timer, None)
        except TimeoutError:
            if not timer.expired():
                raise
            raise DeadlineExceeded(f"{what}: the server did not finish within {self.deadline_s:g} s ({HOW})") from None

    async def answering(self, ask: Awaitable[T], *, limited: bool = True) -> T:
        """Await a question handler with every deadline paused. With `limited` (an elicitation) and
        `answer_timeout_s` set, a person who has not answered by then gets the question answered `cancel`."""
        with self.paused():
            if self.answer_timeout_s is None or not limited:
                return await ask
            try:
                async with asyncio.timeout(self.answer_timeout_s):
                    return await ask
            except TimeoutError:
                log.warning("no answer within %g s (answer_timeout_s): answered cancel", self.answer_timeout_s)
                return Cancelled()  # type: ignore[return-value]

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """Every deadline stopped while the block runs (a person's time), then going on with what was left."""
        self._pause()
        try:
            yield
        finally:
            self._resume()

    def _pause(self) -> None:
        self._answering += 1
        if self._answering > 1:
            return
        now = asyncio.get_running_loop().time()
        for timer in self._running:
            when = timer.when()
            if when is not None:
                self._paused[timer] = max(0.0, when - now)
                timer.reschedule(None)

    def _resume(self) -> None:
        self._answering -= 1
        if self._answering:
            return
        now = asyncio.get_running_loop().time()
        for timer, left in list(self._paused.items()):
            if timer in self._running:
                timer.reschedule(now + left)
        self._paused.clear()


@contextlib.contextmanager
def person_time() -> Iterator[None]:
    """The deadlines of the client whose request this task runs, paused for the block: a login in the browser
    is the person's time, as a question is."""
    deadlines = _CURRENT.get()
    if deadlines is None:
        yield
        return
    with deadlines.paused():
        yield
