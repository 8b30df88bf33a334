"""Requests the server sends to a 2025-11-25 client, and the way back of one request (protocol.md P29).

In the handshake era a server asks by sending its own JSON-RPC request (`elicitation/create`, ...)
on the stream of the client request being answered; the client answers with a JSON-RPC response
(on stdin, or in a POST of its own). `Outbound` is the table of those open requests for one
client (a stdio connection, or one HTTP session on this instance): ids are minted here, and an
answer resolves only a request this table sent and still waits for; anything else is dropped.
`Stream` is one client request's way back: notifications and server requests, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from ..protocol.messages import RequestId, notification, request
from ..state.entropy import random_bytes

log = logging.getLogger("baton.server")

Write = Callable[[dict[str, Any]], Awaitable[None]]
"""Write one JSON-RPC message on a request's stream (stdout, or that POST's SSE stream)."""


class PeerError(Exception):
    """The client answered one of the server's requests with a JSON-RPC error."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


class PeerGone(PeerError):
    """The client went away (EOF, session deleted) before it answered: no answer will come."""

    def __init__(self, reason: str) -> None:
        super().__init__(0, reason)


class Outbound:
    """The server's open requests to one client, by the id the server gave them."""

    def __init__(self, prefix: str = "baton-") -> None:
        # A random part per table: a table rebuilt for the same client (soft state lost, another instance)
        # never reuses an id an old answer could still name (protocol.md P29).
        self._prefix = f"{prefix}{random_bytes(4).hex()}-"
        self._ids = itertools.count(1)
        self._waiting: dict[RequestId, asyncio.Future[dict[str, Any]]] = {}

    def open(self) -> tuple[str, asyncio.Future[dict[str, Any]]]:
        """A fresh request id and the future its answer will resolve."""
        rid = f"{self._prefix}{next(self._ids)}"
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._waiting[rid] = future
        return rid, future

    def answer(self, message: dict[str, Any]) -> bool:
        """Resolve the request a JSON-RPC response names; False (and nothing happens) when this table never
        sent it, or no longer waits for it (protocol.md P29: such a response answers nothing)."""
        rid = message.get("id")
        future = self._waiting.pop(rid, None) if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None
        if future is None or future.done():
            log.info("dropped a response to %r: no request of this session waits for it", rid)
            return False
        error = message.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            future.set_exception(
                PeerError(code if isinstance(code, int) else 0, str(error.get("message", "")), error.get("data"))
            )
        elif isinstance(message.get("result"), dict):
            future.set_result(message["result"])
        else:
            future.set_exception(PeerError(0, "the response carries neither a result object nor an error"))
        return True

    def forget(self, rid: RequestId) -> None:
        self._waiting.pop(rid, None)

    def fail(self, rid: RequestId, reason: str) -> None:
        """End one open request: no answer can come for it (the stream it went out on was closed)."""
        future = self._waiting.pop(rid, None)
        if future is not None and not future.done():
            future.set_exception(PeerGone(reason))

    def fail_all(self, reason: str) -> None:
        """End every open request (the connection or the session ended)."""
        waiting, self._waiting = self._waiting, {}
        for future in waiting.values():
            if not future.done():
                future.set_exception(PeerGone(reason))

    def __len__(self) -> int:
        return len(self._waiting)


class Stream:
    """One client request's way back to the client: its notifications and the server's requests.

    `can_request` is False where the stream cannot carry server requests (an HTTP POST answered with
    JSON only); asks then fail fast (protocol.md P29). `close` is for a stream the client closed: the
    requests it carries, and any it would carry, end at once with `PeerGone` (protocol.md P95).
    """

    def __init__(self, write: Write, outbound: Outbound, *, can_request: bool = True) -> None:
        self._write = write
        self.outbound = outbound
        self.can_request = can_request
        self.keys: dict[RequestId, str] = {}  # request id -> the ask key it carries; never sent (protocol.md P72)
        self._open: set[RequestId] = set()
        self._gone: str | None = None

    def close(self, reason: str) -> None:
        """The client closed this stream: its open requests end now, and later ones fail at once."""
        self._gone = reason
        for rid in list(self._open):
            self.outbound.fail(rid, reason)

    async def notify(self, method: str, params: dict[str, Any]) -> None:
        await self._write(notification(method, params))

    async def request(
        self, method: str, params: dict[str, Any] | None, wait_s: float, key: str | None = None
    ) -> dict[str, Any]:
        """Send a request to the client and await its result; raises `PeerError` when the client answered an
        error, `TimeoutError` when it did not answer in time (it is then told the request is cancelled).
        `key` is the handler's ask key, kept in `keys` for an in-process transport to read."""
        if self._gone is not None:
            raise PeerGone(self._gone)
        rid, future = self.outbound.open()
        if key is not None:
            self.keys[rid] = key
        self._open.add(rid)
        sent = False
        try:
            await self._write(request(rid, method, params))
            sent = True
            return await asyncio.wait_for(future, wait_s)
        except (TimeoutError, asyncio.CancelledError, PeerGone) as exc:
            self.outbound.forget(rid)
            if not sent:  # it never went out: nothing to withdraw
                raise
            if isinstance(exc, PeerGone):
                reason = exc.message
            else:
                reason = "timed out" if isinstance(exc, TimeoutError) else "the request it served was cancelled"
            with contextlib.suppress(Exception):
                await asyncio.shield(self.notify("notifications/cancelled", {"requestId": rid, "reason": reason}))
            raise
        finally:
            self._open.discard(rid)
