"""A 2025-11-25 session over Streamable HTTP: its headers, its streams, and its end (protocol.md P32, P34).

Every request after `initialize` carries `Mcp-Session-Id` (once the server issued one) and
`MCP-Protocol-Version: 2025-11-25`, and none of the 2026 headers. An answer is JSON or an SSE
stream; on a stream the server's own requests are handed to `Inbound` and answered with a new POST,
notifications reach the caller's callback, and a stream that ends before the response is resumed:
after the server's `retry` delay, a GET with `Last-Event-ID`, read on as if nothing had happened.
A 404 to a request that carried the session id raises `SessionGone` (the caller initializes again).
Once the session is open, `listen()` opens the standalone GET stream and keeps it open, where a
server may send requests that belong to no client request (the `mcp` 1.x SDK sends `roots/list`
there), and waits for its head before any request goes out, since a server drops what it would
send there while it is not open; a server that offers none (405, or any other refusal but 409) is left
alone, a 409 (an older GET still holds the stream) is tried again with growing pauses, and a stream
that stayed open a while or brought anything is no failure however it ended. The server's asks that
came on a request's stream are stopped when that request ends, whyever it ends. A 404 while resuming
a request's stream is a `ClientError` (the request may have run). Closing sends DELETE, whatever the
server answers.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable
from typing import Any

import orjson

from ..protocol.constants import HANDSHAKE_VERSION
from ..protocol.messages import notification
from .callbacks import Notify
from .errors import ClientError
from .http11 import Disconnected, HttpError, ProtocolError, Response, encode_headers
from .http_transport import LEG_S, HttpTransport, SseDecoder, _decode, _excerpt, read_body, sse_message
from .inbound import Inbound

log = logging.getLogger("baton.client")

DEFAULT_RETRY_MS = 1000  # the wait before resuming when the server gave no `retry` field
IDLE_RESUMES = 5  # resumptions in a row that bring no new event before the request is given up
END_S = 5.0  # how long closing waits for the DELETE
LISTEN_WAIT_S = 2.0  # how long opening the session waits for the standalone stream's head
LISTEN_FAILURES = 3  # standalone streams in a row that fail or bring nothing before the client stops listening
LISTEN_STEADY_S = 10.0  # a standalone stream open this long was a good one, however it ended
LISTEN_BUSY_S = 0.5  # the first wait after a 409 to the standalone GET; doubled each time, up to:
LISTEN_BUSY_MAX_S = 30.0
_NO_REQUEST = object()  # the standalone stream answers no request of ours
_OURS = frozenset(
    {"mcp-protocol-version", "mcp-method", "mcp-name", "mcp-session-id", "last-event-id", "content-length"}
)


class SessionGone(ConnectionError):
    """The server answered 404 to a request carrying the session id: the session is over (MCP transports)."""


class SessionHttp:
    """The HTTP side of one session, sharing the connection pool of the client's 2026 transport."""

    def __init__(self, http: HttpTransport, inbound: Inbound) -> None:
        self.pool = http.pool
        self.target = http.target
        self.timeout = http.timeout or LEG_S  # a head, an answer, a listen GET: one exchange each
        self.inbound = inbound
        self.session_id: str | None = None
        extra = [(k, v) for k, v in http.extra_headers.items() if k.lower() not in _OURS and not _param(k)]
        given = {k.lower() for k, _ in extra}
        auth = http.target.authorization
        if auth is not None and "authorization" not in given:
            extra.append(("Authorization", auth))
        post = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]
        self._post = encode_headers([(k, v) for k, v in post if k.lower() not in given] + extra)
        get = [] if "accept" in given else [("Accept", "text/event-stream")]
        self._get = encode_headers(get + [(k, v) for k, v in extra if k.lower() != "content-type"])
        self._session = b""
        self._background: set[asyncio.Task[None]] = set()
        self._listener: asyncio.Task[None] | None = None
        self._listening: asyncio.Event | None = None  # set once the standalone GET was answered, either way
        self._heard = False  # the standalone stream being read brought some bytes

    def reset(self) -> None:
        """Forget the session (before initializing again), and stop listening to its standalone stream."""
        self.session_id = None
        self._session = b""
        if self._listener is not None:
            self._listener.cancel()
            self._listener = None

    def _open(self, session_id: str) -> None:
        try:
            self._session = encode_headers(
                [("Mcp-Session-Id", session_id), ("MCP-Protocol-Version", HANDSHAKE_VERSION)]
            )
        except ValueError:
            raise ProtocolError(f"the server issued a session id that cannot be sent back: {session_id!r}") from None
        self.session_id = session_id

    def _head(self, initialize: bool = False) -> bytes:
        if initialize:  # the version header is for requests after initialize; no session yet
            return self._post
        if self.session_id is None:
            return self._post + b"MCP-Protocol-Version: " + HANDSHAKE_VERSION.encode() + b"\r\n"
        return self._post + self._session

    # -- requests --------------------------------------------------------------------------------------------

    async def request(self, message: dict[str, Any], notify: Notify | None) -> dict[str, Any]:
        """POST one request of the session; returns its JSON-RPC response, however many streams it took."""
        initialize = message["method"] == "initialize"
        if notify is not None:
            message.setdefault("params", {}).setdefault("_meta", {})["progressToken"] = f"p{message['id']}"
        with_session = self.session_id is not None and not initialize
        asked: list[asyncio.Task[None]] = []  # the server's asks that came on this request's streams
        try:
            async with self.pool.limit(self.timeout):  # the head; a stream may then last the caller's deadline
                resp = await self.pool.send(self.target, "POST", self._head(initialize), orjson.dumps(message))
            if resp.status == 404 and with_session:
                resp.release()
                raise SessionGone(f"the server ended the session ({message['method']} answered 404)")
            if initialize and 200 <= resp.status < 300:
                session_id = resp.headers.get("mcp-session-id")
                if session_id:
                    self._open(session_id)
            if resp.headers.get("content-type", "").lower().startswith("text/event-stream"):
                return await self._stream(resp, message["id"], notify, asked)
            return _decode(resp.status, await read_body(resp))
        except (asyncio.CancelledError, TimeoutError):
            if not initialize:  # 2025-11-25: a dropped stream is no cancellation; this is (MCP cancellation)
                note = notification("notifications/cancelled", {"requestId": message["id"]})
                self._later(self.send(note))
            raise
        finally:
            self.inbound.drop(asked)

    async def _stream(
        self, resp: Response, rid: Any, notify: Notify | None, asked: list[asyncio.Task[None]]
    ) -> dict[str, Any]:
        decoder = SseDecoder()
        idle = 0
        while True:
            seen = decoder.last_id
            try:
                reply = await self._read(resp, decoder, rid, notify, asked)
            except Disconnected:
                resp.close()
                reply = None
            except BaseException:
                resp.close()
                raise
            else:
                resp.release()
            if reply is not None:
                return reply
            last = decoder.last_id
            if last is None:
                raise Disconnected("the SSE stream ended before the response, with no event id to resume from")
            idle = 0 if last != seen else idle + 1
            if idle >= IDLE_RESUMES:
                raise Disconnected(f"the SSE stream ended before the response {IDLE_RESUMES} times in a row")
            retry = decoder.retry_ms if decoder.retry_ms is not None else DEFAULT_RETRY_MS
            await asyncio.sleep(retry / 1000)  # the server's retry field is a MUST-wait (MCP transports)
            resp = await self._resume(last)
            decoder = SseDecoder(last, decoder.retry_ms)

    async def _read(
        self,
        resp: Response,
        decoder: SseDecoder,
        rid: Any,
        notify: Notify | None,
        asked: list[asyncio.Task[None]] | None = None,
    ) -> dict[str, Any] | None:
        """Read one SSE stream until the response to `rid` or its end; the server's asks on it go to
        `Inbound`, and their tasks into `asked`."""
        while chunk := await resp.next_chunk():
            if rid is _NO_REQUEST:
                self._heard = True
            for data in decoder.feed(chunk):
                if not data.strip():
                    continue
                message = sse_message(data, resp.status)
                if message is None:
                    continue
                if "method" in message:
                    if "id" in message:
                        task = self.inbound.take(message, self.send)
                        if task is not None and asked is not None:
                            asked.append(task)
                    elif not self.inbound.notice(message) and notify is not None:
                        await notify(message)
                elif message.get("id") == rid and ("result" in message or "error" in message):
                    return message
        return None

    async def _resume(self, last_id: bytes) -> Response:
        try:
            head = self._get + self._session + encode_headers([("Last-Event-ID", last_id.decode("latin-1"))])
        except ValueError:
            raise ProtocolError(f"the server's event id cannot be sent back: {last_id!r}") from None
        async with self.pool.limit(self.timeout):
            resp = await self.pool.send(self.target, "GET", head, b"")
        if resp.status == 404 and self.session_id is not None:
            resp.release()
            # Not SessionGone: the request reached the server, which may have run it; sending it again
            # in a new session could run it twice (protocol.md P34).
            raise ClientError(
                "the server ended the session while the request's stream was being resumed (404); "
                "whether the request took effect is unknown"
            )
        if resp.status != 200 or not resp.headers.get("content-type", "").lower().startswith("text/event-stream"):
            resp.close()
            raise HttpError(resp.status, f"HTTP {resp.status}: the server did not resume the SSE stream")
        return resp

    # -- messages that get no response -----------------------------------------------------------------------

    async def send(self, message: dict[str, Any]) -> None:
        """POST a notification or an answer to a server request; the server says 202 (any 2xx will do)."""
        async with self.pool.limit(self.timeout):
            resp = await self.pool.send(self.target, "POST", self._head(), orjson.dumps(message))
            body = await read_body(resp)
        if resp.status == 404 and self.session_id is not None:
            raise SessionGone("the server ended the session")
        if not 200 <= resp.status < 300:
            raise HttpError(resp.status, f"HTTP {resp.status} for {_what(message)}: {_excerpt(body)}")

    # -- the standalone stream -------------------------------------------------------------------------------

    async def listen(self) -> None:
        """Open the session's standalone GET stream (once; the session must be open) and read it in the
        background; returns once the server answered the GET, or after `LISTEN_WAIT_S`."""
        if self.session_id is None or self._listener is not None:
            return
        self._listening = asyncio.Event()
        self._listener = asyncio.ensure_future(self._listen())
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LISTEN_WAIT_S):
                await self._listening.wait()

    async def _listen(self) -> None:
        try:
            await self._listen_until_refused()
        finally:
            if self._listening is not None:
                self._listening.set()

    async def _listen_until_refused(self) -> None:
        last: bytes | None = None
        retry: int | None = None
        failures = 0
        busy = 0  # 409s in a row: another GET of this session holds the stream (being replaced)
        while self.session_id is not None and failures < LISTEN_FAILURES:
            head = self._get + self._session
            if last is not None:
                head += encode_headers([("Last-Event-ID", last.decode("latin-1"))])
            decoder = SseDecoder(last, retry)
            self._heard = False
            began = None
            try:
                async with self.pool.limit(self.timeout):
                    resp = await self.pool.send(self.target, "GET", head, b"")
                if self._listening is not None:
                    self._listening.set()
                if resp.status == 409:  # the server holds an older GET of ours: try again, later each time
                    resp.close()
                    busy += 1
                    await asyncio.sleep(min(LISTEN_BUSY_S * 2 ** (busy - 1), LISTEN_BUSY_MAX_S))
                    continue
                busy = 0
                if resp.status != 200 or not resp.headers.get("content-type", "").startswith("text/event-stream"):
                    resp.close()
                    log.debug("no standalone stream: GET answered %s", resp.status)
                    return
                began = asyncio.get_running_loop().time()
                try:
                    await self._read(resp, decoder, _NO_REQUEST, None)
                finally:
                    resp.close()
            except (OSError, TimeoutError, ValueError) as exc:
                log.debug("the standalone stream failed: %s", exc)
            # A stream that was open a while, or brought anything (a keepalive will do), was a good one:
            # an idle stream a proxy closes is no failure (protocol.md P34).
            lasted = began is not None and asyncio.get_running_loop().time() - began >= LISTEN_STEADY_S
            failures = 0 if lasted or self._heard or decoder.last_id != last else failures + 1
            last, retry = decoder.last_id, decoder.retry_ms
            await asyncio.sleep((retry if retry is not None else DEFAULT_RETRY_MS) / 1000)

    def _later(self, work: Awaitable[None]) -> None:
        async def quietly() -> None:
            with contextlib.suppress(Exception):
                await work

        task = asyncio.ensure_future(quietly())
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def end(self) -> None:
        """DELETE the session; 405, 400, 404 or no answer at all change nothing (the client is done)."""
        listener, self._listener = self._listener, None
        if listener is not None:
            listener.cancel()
            with contextlib.suppress(BaseException):
                await listener
        if self._background:
            await asyncio.wait(self._background, timeout=1.0)
        if self.session_id is None:
            return
        try:
            async with asyncio.timeout(END_S):
                resp = await self.pool.send(self.target, "DELETE", self._get + self._session, b"")
                resp.release()
        except (OSError, TimeoutError, RuntimeError) as exc:
            log.debug("DELETE of the session failed: %s", exc)
        self.reset()


def _param(name: str) -> bool:
    return name.lower().startswith("mcp-param-")


def _what(message: dict[str, Any]) -> str:
    method = message.get("method")
    return str(method) if method is not None else f"the answer to request {message.get('id')!r}"
