"""The 2025-11-25 side of the HTTP transport: `initialize`, and everything that carries `Mcp-Session-Id`
(protocol.md P28, P30-P32).

The session id is sealed and opens on any instance (`server.sessions`), for the principal that
initialized it only. What a session changes while it lives is soft state kept here, per instance, in a
bounded map that forgets idle sessions (`SessionState`): the log level and subscriptions, the table of
server requests it has open, its SSE streams and their events, its standalone `GET` stream and the
backlog of notifications waiting for one. `initialize` makes none: the first request of a session
that needs it builds it from the id with defaults, on whichever instance serves it. A full table forgets
only sessions with nothing running and no open GET, and otherwise refuses the new one (503). `DELETE`
ends the session on this instance and refuses the id from then on.

A request that may emit (`tools/call`, `prompts/get`, `resources/read`, `completion/complete`) is
answered with SSE when the client accepts it; its messages go through a `StreamLog`, so a client that
disconnects does not cancel it (only `notifications/cancelled` or `DELETE` does) and can resume it
with `GET` and `Last-Event-ID`; the questions it asked wait for that resume (`Followers`, protocol.md
P111). The ids of the requests the server sends name this instance's route, so an answer POSTed to
another instance is passed on to this one through the Redis they share (`AnswerBus`, P113). Every
JSON-RPC error of a session is sent with HTTP 200; 4xx statuses are for transport conditions only
(421: an answer that cannot reach the instance that asked).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.asgi import Receive, Send
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from ..protocol.messages import Message, RequestId, error_response, is_response, notification, result_response
from ..server.exchange import Exchange, RequestInfo
from ..server.outbound import Outbound, Stream
from ..server.sessions import ServerSession
from ..server.subscriptions import RESOURCE_UPDATED
from ..state.answer_bus import AnswerBus, BusUnavailable
from ..state.entropy import random_bytes
from ..state.store_url import parse_store_url
from .asgi import HeaderPairs, disconnected, send_empty, send_json, send_reply
from .event_store import Budget, EventStore, StreamLog, parse_event_id, sse_event
from .followers import Followers

if TYPE_CHECKING:
    from ..server.core import Server

log = logging.getLogger("baton.http")

IDLE_S = 1800.0
"""A session's soft state is forgotten after this long without traffic (and nothing running)."""
MAX_SESSIONS = 10_000
"""Sessions with soft state on one instance; past it the least recently used one with nothing running and
no open GET is forgotten, and when every one is busy a new one is refused (503), never cancelled."""
MAX_DELETED = 100_000
"""Deleted session ids one instance remembers (each until it would have expired)."""
BACKLOG = 32
"""Notifications a session's standalone stream holds unsent: waiting for the next `GET` when none is open,
or not yet taken by a slow client (identical ones kept once, then the oldest dropped)."""
KEEPALIVE_S = 15.0
"""An idle standalone stream sends an SSE comment this often, so a dead connection is noticed and closed."""
KEEPALIVE = b": keepalive\n\n"
RETRY_AFTER_S = 5
"""The `Retry-After` of a 503 for a session this instance has no room for."""
SSE_METHODS = frozenset({"tools/call", "prompts/get", "resources/read", "completion/complete", "tasks/result"})
"""Requests whose handlers may notify or ask (`tasks/result` asks a waiting task's questions, P205): answered
with SSE when the client accepts it."""
SESSION_HEADER = b"mcp-session-id"
ROUTE_BYTES = 4
"""Random bytes of an instance's route: the Redis channel its answers come on, new at each start (P113)."""
_SWEEP_S = 60.0


class SessionState:
    """What one instance keeps for one live session (protocol.md P30)."""

    __slots__ = ("backlog", "followers", "last_used", "outbound", "running", "session", "standalone", "store")

    standalone: Channel | None

    def __init__(self, session: ServerSession, budget: Budget, route: str = "") -> None:
        assert session.id is not None
        self.session = session
        self.outbound = Outbound(route_prefix(route))  # its ids name this instance (protocol.md P113)
        self.store = EventStore(session.id, budget)
        self.running: dict[RequestId, asyncio.Task[Any]] = {}
        self.followers = Followers()
        self.standalone = None
        self.backlog = Channel(merge=True)
        self.last_used = time.monotonic()

    def deliver(self, method: str, params: dict[str, Any]) -> None:
        """A list change or resource update: on the standalone stream, else kept for the next one (P31)."""
        if method == RESOURCE_UPDATED and params.get("uri") not in self.session.subscriptions:
            return
        channel = self.backlog if self.standalone is None else self.standalone  # (an empty one is falsy)
        channel.put(sse_event(None, notification(method, params)))

    def busy(self) -> bool:
        """Something would be lost by forgetting it: a running request or an open standalone stream."""
        return bool(self.running) or self.standalone is not None

    def idle(self, now: float) -> bool:
        return now - self.last_used > IDLE_S and not self.busy()

    def end(self, reason: str) -> None:
        """The session is over here: cancel its requests, end its streams, fail its server requests."""
        for task in list(self.running.values()):
            task.cancel()
        self.followers.close()
        self.store.close()
        self.outbound.fail_all(reason)
        if self.standalone is not None:
            self.standalone.close()


class Channel:
    """The notifications of a standalone stream not yet sent, at most `BACKLOG` (protocol.md P32), so a
    client that never reads costs a bounded amount. When full, one identical to a waiting one is dropped,
    else the oldest gives way; a backlog (`merge`, no stream open) keeps identical ones once always."""

    __slots__ = ("_items", "_merge", "_wake", "closed")

    def __init__(self, *, merge: bool = False) -> None:
        self._items: deque[bytes] = deque()
        self._merge = merge
        self._wake = asyncio.Event()
        self.closed = False

    def __len__(self) -> int:
        return len(self._items)

    def put(self, data: bytes) -> None:
        if self.closed:
            return
        full = len(self._items) >= BACKLOG
        if (full or self._merge) and data in self._items:  # the same change twice tells nothing more
            return
        if full:
            self._items.popleft()
        self._items.append(data)
        self._wake.set()

    def take(self, other: Channel) -> None:
        """Move what `other` holds (a backlog, or a replaced stream's unsent events) in front of this one's."""
        for data in other._items:
            self.put(data)
        other._items.clear()

    def close(self) -> None:
        """End the stream that reads this channel once it has sent what is waiting."""
        self.closed = True
        self._wake.set()

    async def drain(self, keepalive_s: float) -> AsyncIterator[bytes]:
        """The notifications as they come, an SSE comment after `keepalive_s` without one, until closed."""
        while True:
            while self._items:
                yield self._items.popleft()
            if self.closed:
                return
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), keepalive_s)
            except TimeoutError:
                yield KEEPALIVE


class Crowded(Exception):
    """This instance holds `MAX_SESSIONS` sessions and every one of them is busy: no room for another."""


class SessionTable:
    """The live sessions of this instance (bounded, idle ones forgotten) and the ids deleted here."""

    def __init__(self, ttl_s: float, route: str = "") -> None:
        self.route = route
        self._live: OrderedDict[str, SessionState] = OrderedDict()
        self._deleted: dict[str, float] = {}
        self._ttl_s = ttl_s
        self._swept = time.monotonic()
        self._budget = Budget()

    def __len__(self) -> int:
        return len(self._live)

    def states(self) -> list[SessionState]:
        return list(self._live.values())

    def deleted(self, sid: str) -> bool:
        until = self._deleted.get(sid)
        if until is None:
            return False
        if until < time.monotonic():
            del self._deleted[sid]
            return False
        return True

    def find(self, sid: str) -> SessionState | None:
        """The soft state this instance has for a session, if any (made by no one)."""
        state = self._live.get(sid)
        if state is not None:
            self._live.move_to_end(sid)
            state.last_used = time.monotonic()
        return state

    def state(self, session: ServerSession) -> SessionState:
        """The soft state of a session that just opened, made with defaults when this instance has none.

        Raises `Crowded` rather than forget a session that has work running (protocol.md P30)."""
        sid = session.id
        assert sid is not None
        now = time.monotonic()
        state = self._live.get(sid)
        if state is None:
            if now - self._swept > _SWEEP_S or len(self._live) >= MAX_SESSIONS:
                self._sweep(now)
            if len(self._live) >= MAX_SESSIONS:
                raise Crowded
            state = self._live[sid] = SessionState(session, self._budget, self.route)
        else:
            self._live.move_to_end(sid)
        state.last_used = now
        return state

    def delete(self, sid: str) -> None:
        state = self._live.pop(sid, None)
        if state is not None:
            state.end("the session was deleted")
        if len(self._deleted) >= MAX_DELETED:
            del self._deleted[next(iter(self._deleted))]
        self._deleted[sid] = time.monotonic() + self._ttl_s

    def close(self) -> None:
        for state in self._live.values():
            state.end("the server is shutting down")
        self._live.clear()

    def _sweep(self, now: float) -> None:
        self._swept = now
        for sid, state in list(self._live.items()):
            if now - state.last_used <= IDLE_S:
                break  # ordered by last use: the rest are recent
            if state.idle(now):
                del self._live[sid]
                state.end("the session was idle")
        if len(self._live) >= MAX_SESSIONS:
            # Least recently used first, but only sessions with nothing running and no open GET: whoever
            # may initialize must not be able to cancel another principal's work (protocol.md P30).
            for sid, state in list(self._live.items()):
                if len(self._live) < MAX_SESSIONS:
                    break
                if not state.busy():
                    del self._live[sid]
                    state.end("too many sessions on this instance")
            if len(self._live) >= MAX_SESSIONS:
                log.warning("no room for another session: %d sessions on this instance, all busy", MAX_SESSIONS)
        for sid, until in list(self._deleted.items()):
            if until < now:
                del self._deleted[sid]


class SessionEndpoints:
    """Serves the handshake-era traffic of one HTTP app: POSTs of a session, `GET` and `DELETE`."""

    def __init__(self, server: Server, *, json_head: HeaderPairs, sse_head: HeaderPairs, tag: HeaderPairs) -> None:
        self.server = server
        self.route = random_bytes(ROUTE_BYTES).hex()  # new at each start: a restarted instance asked nothing
        self.table = SessionTable(server.settings.session_ttl_s, self.route)
        self.bus: AnswerBus | None = None
        self._json_head = json_head
        self._sse_head = sse_head
        self._tag = tag
        self._unwatch = server.runtime.hub.watch(self._changed)

    def close(self) -> None:
        self._unwatch()
        self.table.close()

    async def start(self) -> None:
        """Join the answer bus when the instances share a Redis ledger (protocol.md P113)."""
        url = bus_url(self.server.runtime.ledger_url)
        if url is None or self.bus is not None:
            return
        try:
            self.bus = AnswerBus(url, self.route, self._passed_on)
        except ModuleNotFoundError as exc:  # the redis extra is missing: the ledger will say so too
            log.error("no answer bus between instances: %s", parse_store_url(url, "ledger").redis_missing(exc))
            return
        except ValueError as exc:  # a URL the Redis client cannot use
            log.error("no answer bus between instances: %s", exc)
            return
        await self.bus.start()

    async def stop(self) -> None:
        if self.bus is not None:
            await self.bus.close()
            self.bus = None

    def _passed_on(self, sid: str, message: dict[str, Any]) -> None:
        """An answer another instance received for a question of this one (protocol.md P113)."""
        state = self.table.find(sid)
        if state is None:
            log.info("dropped an answer passed on for a session with nothing open here")
            return
        state.outbound.answer(message)

    def _changed(self, method: str, params: dict[str, Any]) -> None:
        for state in self.table.states():
            state.deliver(method, params)

    # -- POST ---------------------------------------------------------------------------------------

    async def request(
        self, msg: Message, info: RequestInfo, raw: dict[bytes, bytes], receive: Receive, send: Send
    ) -> None:
        """A handshake-era request (`is_modern` said so): `initialize`, `ping` before a session, or a session's."""
        ex = Exchange(info)
        # protocol.md P38: a 401 or 403 (scopes) is the POST's HTTP status; the session is unaffected.
        if not await self._admit(msg, ex, send):
            return
        principal = ex.principal
        sid = raw.get(SESSION_HEADER)
        session = self._open(sid, principal) if sid is not None else None
        if msg.method == "initialize":
            if session is not None:
                error = McpError(INVALID_REQUEST, "Invalid request: this session is already initialized")
                await self._error(send, 400, msg.id, error)
                return
            # protocol.md P32: an initialize naming a session that no longer opens simply starts a new one.
            reply, new = self.server.runtime.initialize(msg, ex)
            head = self._json_head
            if new is not None and new.id is not None:
                # No soft state yet (protocol.md P30): the first request that needs it builds it from the id,
                # so initializing costs this instance nothing.
                head = [*head, (SESSION_HEADER, new.id.encode())]
            await send_json(send, 200, head, reply.body)
            return
        if sid is None:
            if msg.method == "ping":  # protocol.md P31: harmless before a session
                await send_json(send, 200, self._json_head, result_response(msg.id, {}))
                return
            error = McpError(
                INVALID_REQUEST,
                f"Invalid request: {msg.method} needs a session: initialize first, or send the 2026-07-28 _meta",
            )
            await self._error(send, 400, msg.id, error)
            return
        if session is None:
            await self._gone(send)
            return
        state = await self._state(session, send)
        if state is None:
            return
        if msg.id in state.running:
            error = McpError(INVALID_REQUEST, f"Invalid request: id {msg.id!r} is already in use in this session")
            await self._error(send, 200, msg.id, error)
            return
        if msg.method in SSE_METHODS and b"text/event-stream" in raw.get(b"accept", b""):
            await self._streamed(state, msg, ex, receive, send)
        else:
            await self._plain(state, msg, ex, send)

    async def notification(self, msg: Message, info: RequestInfo, raw: dict[bytes, bytes], send: Send) -> None:
        """A notification of a session: 202 (a cancellation stops the request it names), 404 for a dead id."""
        session = await self._session(raw, info, send)
        if session is None:
            return
        state = self.table.find(session.id or "")  # soft state that does not exist has nothing to cancel
        if state is not None and msg.method == "notifications/cancelled":
            rid = msg.params.get("requestId")
            task = state.running.get(rid) if isinstance(rid, (str, int)) else None
            if task is not None:
                log.info("request %r cancelled by the client", rid)
                task.cancel()
        await send_empty(send, 202, self._tag)

    async def response(self, data: dict[str, Any], info: RequestInfo, raw: dict[bytes, bytes], send: Send) -> None:
        """A client's answer to a server request: 202 once applied here or passed on to the instance that asked
        (protocol.md P113); 202 too when it answers nothing (P29); an error when it cannot reach its instance."""
        session = await self._session(raw, info, send)
        if session is None:
            return
        assert session.id is not None
        route = route_of(data.get("id"))
        if route is not None and route != self.route:
            await self._pass_on(route, session.id, data, send)
            return
        state = self.table.find(session.id)  # without soft state no server request is open
        if state is not None:
            state.outbound.answer(data)
        await send_empty(send, 202, self._tag)

    async def _pass_on(self, route: str, sid: str, data: dict[str, Any], send: Send) -> None:
        """An answer to a question another instance asked: through the bus, else a 421 that says why."""
        rid = str(data.get("id"))[:100]
        if self.bus is None:
            error = McpError(
                INVALID_REQUEST,
                f"Misdirected answer: request {rid!r} was sent by another instance of this server, and the instances "
                "share no answer bus; send all of a session's requests to one instance (hash on Mcp-Session-Id), or "
                "give every instance the same Redis ledger (BATON_LEDGER=redis://...)",
            )
            log.warning("refused an answer to %r: it belongs to another instance and there is no answer bus", rid)
            await self._error(send, 421, None, error)
            return
        try:
            delivered = await self.bus.publish(route, sid, data)
        except BusUnavailable as exc:
            log.error("could not pass an answer on to the instance that asked: %s", exc)
            error = McpError(
                INTERNAL_ERROR,
                f"Server busy: the answer to {rid!r} could not be passed on to the instance that asked ({exc}); retry",
            )
            head = [*self._json_head, (b"retry-after", str(RETRY_AFTER_S).encode())]
            await send_json(send, 503, head, error_response(None, error))
            return
        if not delivered:
            error = McpError(
                INVALID_REQUEST,
                f"Misdirected answer: the instance that sent request {rid!r} is gone (stopped or restarted), and the "
                "request with it; the call it belonged to has ended",
            )
            await self._error(send, 421, None, error)
            return
        await send_empty(send, 202, self._tag)

    async def _streamed(self, state: SessionState, msg: Message, ex: Exchange, receive: Receive, send: Send) -> None:
        """SSE: a priming event, the request's notifications and server requests, its response, the end."""
        stream_log = state.store.open()
        stream = Stream(stream_log.write, state.outbound)
        state.followers.opened(stream_log.id, stream)
        task = self._run(state, msg, ex, stream, stream_log)
        await send({"type": "http.response.start", "status": 200, "headers": self._sse_head})
        await send({"type": "http.response.body", "body": stream_log.priming(), "more_body": True})
        if await self._pump(stream_log.follow(0), receive, send):
            state.store.delivered(stream_log)
        elif not task.done():
            window = self.server.settings.resume_window_s
            log.info(
                "client left the stream of request %r; it goes on, its questions wait %g s for a resume", msg.id, window
            )
            # A disconnection is not a cancellation (protocol.md P111): a resume within the window replays them.
            state.followers.left(stream_log.id, window)

    def _run(
        self, state: SessionState, msg: Message, ex: Exchange, stream: Stream, stream_log: StreamLog
    ) -> asyncio.Future[None]:
        rid = msg.id
        assert rid is not None

        async def run() -> None:
            try:
                reply = await self.server.runtime.handle_handshake(msg, ex, state.session, stream)
            except asyncio.CancelledError:
                stream_log.finish(None)  # protocol.md P31: no response for a cancelled request
                return
            finally:
                state.running.pop(rid, None)
                state.followers.ended(stream_log.id)
            stream_log.finish(reply.body)

        task = asyncio.ensure_future(run())
        state.running[rid] = task
        return task

    async def _plain(self, state: SessionState, msg: Message, ex: Exchange, send: Send) -> None:
        """A JSON response; its stream cannot carry server requests (the bridge refuses asks, P29)."""
        rid = msg.id
        assert rid is not None

        async def dropped(payload: dict[str, Any]) -> None:
            log.debug("dropped %s for request %r: its response is JSON", payload.get("method"), rid)

        task = asyncio.ensure_future(
            self.server.runtime.handle_handshake(
                msg, ex, state.session, Stream(dropped, state.outbound, can_request=False)
            )
        )
        state.running[rid] = task
        try:
            await asyncio.wait((task,))
        except asyncio.CancelledError:
            task.cancel()
            raise
        finally:
            state.running.pop(rid, None)
        if task.cancelled():
            # No stream to end without a response: say why none came (the client ignores it).
            error = McpError(INTERNAL_ERROR, "Request cancelled: the client cancelled it or ended the session")
            await self._error(send, 200, rid, error)
            return
        await send_json(send, 200, self._json_head, task.result().body)

    # -- GET and DELETE -----------------------------------------------------------------------------

    async def get(self, info: RequestInfo, raw: dict[bytes, bytes], receive: Receive, send: Send) -> None:
        """Resume a stream (`Last-Event-ID`) or open the session's one standalone stream."""
        session = await self._session(raw, info, send)
        if session is None:
            return
        state = await self._state(session, send)
        if state is None:
            return
        last = raw.get(b"last-event-id")
        if last is not None:
            await self._resume(state, last.decode("latin-1"), receive, send)
            return
        # protocol.md P32: a new standalone GET replaces the open one, which may be a dead connection the
        # client has given up on; what the old one had not sent moves to the new one.
        channel = Channel()
        old, state.standalone = state.standalone, channel
        if old is not None:
            channel.take(old)
            old.close()
            log.info("a new standalone GET replaced the open one")
        channel.take(state.backlog)
        try:
            await send({"type": "http.response.start", "status": 200, "headers": self._sse_head})
            await self._pump(channel.drain(KEEPALIVE_S), receive, send)
        finally:
            if state.standalone is channel:
                state.standalone = None
                state.backlog.take(channel)  # undelivered: kept for the next GET

    async def _resume(self, state: SessionState, last: str, receive: Receive, send: Send) -> None:
        parsed = parse_event_id(last)
        if parsed is None or not state.store.owns(parsed[0]):
            error = McpError(
                INVALID_REQUEST, f"Invalid request: Last-Event-ID {last[:100]!r} names no stream of this session"
            )
            await self._error(send, 400, None, error)
            return
        sid, seq = parsed
        stream_log = state.store.find(sid)
        if stream_log is not None and seq > stream_log.seq:
            # protocol.md P103: an event this stream never sent; following from it would skip its response.
            error = McpError(
                INVALID_REQUEST,
                f"Invalid request: Last-Event-ID {last[:100]!r} is past the end of its stream (event "
                f"{stream_log.seq} is the last sent); resume from an id the server sent",
            )
            await self._error(send, 400, None, error)
            return
        await send({"type": "http.response.start", "status": 200, "headers": self._sse_head})
        if stream_log is None:  # its events are gone (expired, or kept by another instance): nothing to replay
            log.info("resumption of stream %s: nothing stored on this instance", sid)
            await send({"type": "http.response.body", "body": b""})
            return
        state.followers.joined(sid)  # its questions wait on while this GET follows it (protocol.md P111)
        if await self._pump(stream_log.follow(seq), receive, send):
            state.store.delivered(stream_log)
        else:
            state.followers.left(sid, self.server.settings.resume_window_s)

    async def delete(self, info: RequestInfo, raw: dict[bytes, bytes], send: Send) -> None:
        """End the session (protocol.md P30): its requests, streams and server requests; later use is 404."""
        session = await self._session(raw, info, send)
        if session is None:
            return
        assert session.id is not None
        self.table.delete(session.id)
        await send_empty(send, 200, self._tag)

    # -- helpers ------------------------------------------------------------------------------------

    async def _session(self, raw: dict[bytes, bytes], info: RequestInfo, send: Send) -> ServerSession | None:
        """The live session the request names, or None once the refusal (401, 403, 404) has been sent."""
        ex = Exchange(info)
        if not await self._admit(None, ex, send):
            return None
        session = self._open(raw[SESSION_HEADER], ex.principal)
        if session is None:
            await self._gone(send)
        return session

    async def _state(self, session: ServerSession, send: Send) -> SessionState | None:
        """The session's soft state here, or None once 503 has been sent: no room without cancelling work."""
        try:
            return self.table.state(session)
        except Crowded:
            error = McpError(
                INTERNAL_ERROR, "Server busy: this instance has no room for another session's state; retry later"
            )
            head = [*self._json_head, (b"retry-after", str(RETRY_AFTER_S).encode())]
            await send_json(send, 503, head, error_response(None, error))
            return None

    def _open(self, sid_raw: bytes, principal: str) -> ServerSession | None:
        sid = sid_raw.decode("latin-1").strip()
        if not sid or len(sid) > 8192 or self.table.deleted(sid):
            return None
        return self.server.runtime.sessions.open(sid, principal)

    async def _admit(self, msg: Message | None, ex: Exchange, send: Send) -> bool:
        """Authenticate (and check the scopes of) a request of a session; False once the 401/403 is sent."""
        refusal = await self.server.runtime.admit(msg, ex)
        if refusal is None:
            return True
        await send_reply(send, self._json_head, refusal)  # 401, 403, or 503 (protocol.md P46)
        return False

    async def _gone(self, send: Send) -> None:
        error = McpError(
            INVALID_REQUEST, "Session not found: it expired, was deleted, or is not yours; initialize a new one"
        )
        await self._error(send, 404, None, error)

    async def _error(self, send: Send, status: int, rid: RequestId | None, error: McpError) -> None:
        await send_json(send, status, self._json_head, error_response(rid, error))

    async def _pump(self, events: AsyncIterator[bytes], receive: Receive, send: Send) -> bool:
        """Send events until they end (then end the response: True) or the client leaves (then just stop)."""

        async def forward() -> None:
            async for data in events:
                await send({"type": "http.response.body", "body": data, "more_body": True})
            await send({"type": "http.response.body", "body": b""})

        work = asyncio.ensure_future(forward())
        watcher = asyncio.ensure_future(disconnected(receive))
        delivered = False
        try:
            await asyncio.wait((work, watcher), return_when=asyncio.FIRST_COMPLETED)
            # sent to the end while the client was still there (sends after a disconnect are dropped)
            delivered = work.done() and not watcher.done() and not work.cancelled() and work.exception() is None
        finally:
            for task in (work, watcher):
                task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await work
        return delivered


def route_prefix(route: str) -> str:
    """The start of the ids of the requests a session's table sends on this instance (protocol.md P113)."""
    return f"baton-{route}-" if route else "baton-"


def route_of(rid: Any) -> str | None:
    """The route a request id minted by `route_prefix` names (`baton-<route>-<table>-<n>`), or None."""
    if not isinstance(rid, str) or not rid.startswith("baton-"):
        return None
    parts = rid.split("-")
    route = parts[1] if len(parts) == 4 else ""
    if len(route) != 2 * ROUTE_BYTES or any(c not in "0123456789abcdef" for c in route):
        return None
    return route


def bus_url(ledger_url: str | None) -> str | None:
    """The Redis the instances share (the ledger's), or None: no answer bus (protocol.md P113)."""
    if ledger_url is None:
        return None
    try:
        return ledger_url if parse_store_url(ledger_url, "ledger").kind == "redis" else None
    except ValueError:
        return None


def response_object(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC response a POST body holds (an answer to a server request), or None if it is not one."""
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    return data if is_response(data) else None


__all__ = ["SESSION_HEADER", "SessionEndpoints", "response_object"]
