"""The SSE streams of one 2025-11-25 HTTP session and their bounded event store (protocol.md P32).

A request answered with SSE writes into a `StreamLog`, never to a socket: every message becomes an
event with the id `<stream>:<seq>`, is kept, and is handed to whoever follows the log (the POST that
opened it, or a `GET` with `Last-Event-ID` after a disconnect). So a dropped connection loses nothing
that the store still holds, and a resumption replays exactly that stream. A stream id starts with a
tag of the session id, so an event id shown on another session is recognised as foreign without any
lookup. A finished stream is kept a while for a late resumption: briefly once a follower sent it to
the end, longer when its client left. Each session's `EventStore` is bounded in events and bytes, and all of an
instance's stores share one `Budget` of bytes.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
from collections.abc import AsyncIterator
from typing import Any

import orjson

RETRY_MS = 1000
"""The SSE `retry` field: how long a client waits before it reconnects to resume a stream."""
MAX_EVENTS = 1024
"""Events one session's store holds at most (all its streams together)."""
MAX_BYTES = 1024 * 1024
"""Bytes of events one session's store holds at most."""
MAX_TOTAL_BYTES = 64 * 1024 * 1024
"""Bytes of events all the sessions of one instance hold at most (`Budget`)."""
MAX_STREAMS = 128
"""Finished streams are forgotten early once a session's store has this many streams."""
KEEP_FINISHED_S = 300.0
"""How long a finished stream whose client left stays resumable (its response fetched with `GET`)."""
KEEP_DELIVERED_S = 10.0
"""How long a stream sent to the end stays resumable: the connection may have died as it went out."""
_TAG_LEN = 8
_NONCE_LEN = 8


def session_tag(session_id: str) -> str:
    """The first part of every stream id of this session: a short digest of the session id."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:_TAG_LEN]


def parse_event_id(value: str) -> tuple[str, int] | None:
    """(stream id, sequence number) of a `Last-Event-ID`, or None when it is not one of ours."""
    sid, sep, seq = value.strip().partition(":")
    # ASCII digits only: str.isdigit() also takes "²" and other digits int() refuses (protocol.md P32: 400).
    if not sep or len(sid) != _TAG_LEN + _NONCE_LEN or not (seq.isascii() and seq.isdigit()) or len(seq) > 12:
        return None
    if any(c not in "0123456789abcdef" for c in sid):
        return None
    return sid, int(seq)


def sse_event(event_id: str | None, payload: dict[str, Any]) -> bytes:
    """One JSON-RPC message as a server-sent event, with an id when it belongs to a resumable stream."""
    head = b"id: " + event_id.encode() + b"\n" if event_id else b""
    return head + b"event: message\ndata: " + orjson.dumps(payload) + b"\n\n"


class StreamLog:
    """One resumable stream: its events in order, and whether its request has ended."""

    __slots__ = ("_store", "_wake", "done", "events", "id", "keep_until", "seq", "size")

    def __init__(self, store: EventStore, sid: str) -> None:
        self._store = store
        self.id = sid
        self.seq = 0
        self.events: list[tuple[int, bytes]] = []
        self.size = 0
        self.done = False
        self.keep_until = 0.0
        self._wake = asyncio.Event()

    def priming(self) -> bytes:
        """The first event of the stream: its id at sequence 0, empty data, and the `retry` field."""
        return f"id: {self.id}:0\nretry: {RETRY_MS}\ndata: \n\n".encode()

    async def write(self, payload: dict[str, Any]) -> None:
        """Add one message (a `Stream`'s write); ignored once the stream has ended."""
        self.append(payload)

    def append(self, payload: dict[str, Any]) -> None:
        if self.done:
            return
        self.seq += 1
        data = sse_event(f"{self.id}:{self.seq}", payload)
        self.events.append((self.seq, data))
        self.size += len(data)
        self._store.added(len(data))
        self._signal()

    def finish(self, response: dict[str, Any] | None) -> None:
        """End the stream, after the response (None: the request was cancelled, nothing more is sent)."""
        if self.done:
            return
        if response is not None:
            self.append(response)
        self.done = True
        self.keep_until = time.monotonic() + KEEP_FINISHED_S
        self._signal()

    def trim(self, count: int) -> int:
        """Drop the oldest `count` events; returns the bytes freed."""
        dropped, self.events = self.events[:count], self.events[count:]
        freed = sum(len(data) for _, data in dropped)
        self.size -= freed
        return freed

    async def follow(self, after: int) -> AsyncIterator[bytes]:
        """The events after sequence number `after`, those stored and then the live ones, until the end."""
        cursor = after
        while True:
            wake = self._wake
            events = self.events
            if events:
                start = max(0, cursor + 1 - events[0][0])  # sequence numbers are contiguous
                for seq, data in events[start:]:
                    cursor = seq
                    yield data
            if self.done and (not self.events or self.events[-1][0] <= cursor):
                return
            await wake.wait()

    def _signal(self) -> None:
        wake, self._wake = self._wake, asyncio.Event()
        wake.set()


class Budget:
    """The bytes of events all sessions of one instance hold together, and the stores that hold them."""

    def __init__(self, max_bytes: int = MAX_TOTAL_BYTES) -> None:
        self.max_bytes = max_bytes
        self.used = 0
        self.stores: dict[int, EventStore] = {}

    def over(self) -> bool:
        return self.used > self.max_bytes

    def relieve(self) -> None:
        """Over budget: stores forget the finished streams kept long enough; if that is not enough, the store
        holding the most gives up the older half of its events (protocol.md P32). A finished stream another
        session's client has not fetched yet is not dropped for it early."""
        for store in list(self.stores.values()):
            if not self.over():
                return
            store.forget_finished()
        while self.over():
            largest = max(self.stores.values(), key=lambda store: store.size)
            if not largest.trim_to(largest.size // 2):
                return


class EventStore:
    """The streams of one session on this instance, bounded by `MAX_EVENTS` and `MAX_BYTES`, and by the
    instance's `Budget`."""

    def __init__(self, session_id: str, budget: Budget) -> None:
        self.tag = session_tag(session_id)
        self.streams: dict[str, StreamLog] = {}
        self._budget = budget
        self._bytes = 0
        self._events = 0
        budget.stores[id(self)] = self

    def open(self) -> StreamLog:
        """A new stream with a fresh id."""
        self.forget_finished()
        sid = self.tag + secrets.token_hex(_NONCE_LEN // 2)
        while sid in self.streams:  # pragma: no cover - 32 random bits colliding in one session
            sid = self.tag + secrets.token_hex(_NONCE_LEN // 2)
        log = StreamLog(self, sid)
        self.streams[sid] = log
        return log

    def find(self, sid: str) -> StreamLog | None:
        return self.streams.get(sid)

    def owns(self, sid: str) -> bool:
        """Whether a stream id was minted for this session (whether or not it is still stored)."""
        return sid.startswith(self.tag)

    def delivered(self, log: StreamLog) -> None:
        """A follower sent the whole stream, response included: it need not be kept long."""
        if log.done:
            log.keep_until = min(log.keep_until, time.monotonic() + KEEP_DELIVERED_S)

    def close(self) -> None:
        """End every stream without a response and give the bytes back (the session is over here)."""
        for sid in list(self.streams):
            self._drop(sid)
        self._budget.stores.pop(id(self), None)

    def added(self, size: int) -> None:
        self._bytes += size
        self._events += 1
        self._budget.used += size
        if self._bytes > MAX_BYTES or self._events > MAX_EVENTS:
            self._shrink()
        if self._budget.over():
            self._budget.relieve()

    @property
    def size(self) -> int:
        return self._bytes

    def trim_to(self, size: int) -> bool:
        """Drop the oldest events until this store holds at most `size` bytes; False if nothing was dropped."""
        before = self._bytes
        while self._bytes > size and self._trim_oldest():
            pass
        return self._bytes < before

    def forget_finished(self) -> None:
        """Drop finished streams kept long enough (all of them once the store holds `MAX_STREAMS`)."""
        now = time.monotonic()
        crowded = len(self.streams) >= MAX_STREAMS
        for sid, log in list(self.streams.items()):
            if log.done and (crowded or now > log.keep_until):
                self._drop(sid)  # running streams stay: there are only as many as requests in flight

    def _shrink(self) -> None:
        """Make room: first drop finished streams (oldest first), then the oldest events of running ones."""
        for sid, log in list(self.streams.items()):
            if self._bytes <= MAX_BYTES and self._events <= MAX_EVENTS:
                return
            if log.done:
                self._drop(sid)
        while (self._bytes > MAX_BYTES or self._events > MAX_EVENTS) and self._trim_oldest():
            pass

    def _trim_oldest(self) -> bool:
        """Drop the oldest event of the oldest stream that has one; False when there is none."""
        for log in self.streams.values():
            if log.events:
                freed = log.trim(1)
                self._bytes -= freed
                self._events -= 1
                self._budget.used -= freed
                return True
        return False

    def _drop(self, sid: str) -> None:
        log = self.streams.pop(sid)
        self._bytes -= log.size
        self._events -= len(log.events)
        self._budget.used -= log.size
        log.finish(None)
