"""The stdio transport: newline-delimited JSON on stdin/stdout, requests run concurrently, both eras in one
process (protocol.md P33).

Each request is sorted by `is_modern` (protocol.md P28). A 2026-07-28 request is served statelessly as
always. An `initialize` without the 2026 envelope makes the process one 2025-11-25 session; that
session's requests go through the bridge (`Runtime.handle_handshake`), whose server requests are written to
stdout and answered by the JSON-RPC responses the client writes to stdin. List changes and resource
updates for the session go to stdout once `notifications/initialized` has arrived (protocol.md P31).
A line over 16 MiB is dropped whole, up to its newline, and answered with one error (protocol.md P116).

stdout carries only MCP messages, built by `baton.protocol.messages`, one whole line each; logs go to
stderr. `notifications/cancelled` stops the request it names, of either era (and ends a listen stream);
nothing more is written for it. EOF on stdin (how a host stops a stdio server) fails the session's open
server requests and ends the listen streams at once, gives the calls still running `EOF_GRACE_S` to finish,
cancels the rest and exits (protocol.md P115). SIGINT and SIGTERM, before or after EOF, end it at once:
reading stops, the requests in flight are cancelled, and the process exits 130 after SIGINT, 0 after
SIGTERM or EOF, with no traceback (protocol.md P98).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable, Coroutine
from typing import TYPE_CHECKING, Any, BinaryIO

import orjson

from ..connect import mount_default_kit
from ..protocol.era import is_modern
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError
from ..protocol.lines import MAX_LINE, LineTooLong, read_line
from ..protocol.messages import (
    Message,
    RequestId,
    error_response,
    from_object,
    is_response,
    notification,
    parse,
    result_response,
)
from ..server.exchange import Exchange, RequestInfo, Unauthenticated
from ..server.lifespan import LifespanFailed
from ..server.outbound import Outbound, PeerGone, Stream
from ..server.sessions import ServerSession
from ..server.subscriptions import RESOURCE_UPDATED, Subscription
from ..stop_signals import STOP_SIGNALS, exit_status
from ..telemetry.logs import LogFormat, log_format
from ..telemetry.logs import line as stderr_line

if TYPE_CHECKING:
    from ..server.core import Server

log = logging.getLogger("baton.stdio")
EOF_GRACE_S = 2.0
"""How long the calls still running at EOF on stdin may take before they are cancelled (protocol.md P115):
short, since the host that closed stdin sends SIGTERM, then SIGKILL, soon after."""
_NOT_INITIALIZED = (
    "Invalid request: initialize first, or send the 2026-07-28 _meta"
    " (io.modelcontextprotocol/protocolVersion) on every request"
)
_ALREADY_INITIALIZED = "Invalid request: this process is already initialized (one 2025-11-25 session per stdio process)"


class StdioServer:
    """Serves one `Server` over a pair of byte streams (by default this process's stdin and stdout)."""

    def __init__(self, server: Server, reader: asyncio.StreamReader, out: BinaryIO) -> None:
        self.server = server
        self.reader = reader
        self.out = out
        self.inflight = InFlight()
        self._listening: set[asyncio.Task[Any]] = set()  # the tasks serving a `subscriptions/listen` stream
        self.info = RequestInfo("stdio")
        # The process's one 2025-11-25 session (protocol.md P33), and its open server requests.
        self.session: ServerSession | None = None
        self.outbound = Outbound()
        self._ready = False  # notifications/initialized arrived: list changes may be sent
        self._eof = False
        self._unwatch: Callable[[], None] | None = None
        self.signal: int | None = None  # the signal that stopped the server, if one did
        self._reading: asyncio.Future[None] | None = None

    def write(self, payload: dict[str, Any]) -> None:
        # One message per line: orjson never emits a raw newline inside a document. Writes never await,
        # so concurrent requests cannot interleave within a line.
        self.out.write(orjson.dumps(payload) + b"\n")
        self.out.flush()

    def stop(self, signum: int) -> None:
        """A signal asks the server to end: stop reading and cancel what is in flight, now, also after EOF
        while `run` waits for the calls still running (P98, P115)."""
        self.signal = signum
        if self._reading is not None:
            self._reading.cancel()
        for task in list(self.inflight.values()):
            task.cancel()

    async def run(self) -> None:
        _ = self.server.runtime.sealer  # load the key ring before the first request
        mount_default_kit(self.server)  # ctx.secret asks for the connect kit's pages
        self._reading = asyncio.ensure_future(self._read())
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        # Nobody is left to answer the session's server requests: the requests waiting on them end (P33).
        self._eof = True
        self.outbound.fail_all("the client closed stdin" if self.signal is None else "the server is stopping")
        if self.signal is None:
            # EOF: the host is stopping the server. Listen streams end now, the calls still running get a
            # short grace, then are cancelled (P115); a signal meanwhile cancels them at once (`stop`).
            for task in list(self._listening):
                task.cancel()
            if self.inflight:
                await asyncio.wait(list(self.inflight.values()), timeout=EOF_GRACE_S)
            if self.inflight:
                left = len(self.inflight)
                log.warning("stdin closed: %d request(s) still running after %g s were cancelled", left, EOF_GRACE_S)
        for task in list(self.inflight.values()):
            task.cancel()
        if self.inflight:
            await asyncio.gather(*self.inflight.values(), return_exceptions=True)
        if self._unwatch is not None:
            self._unwatch()
        await self.server.aclose()

    async def _read(self) -> None:
        """Read and dispatch lines until EOF."""
        async for line in peer_lines(self.reader, self.write):
            handshake = self._dispatch(line)
            if handshake is not None:
                # Finished before the next line is read, so that what the client sends next (its
                # notifications/initialized, the session's first requests) finds the session open.
                await handshake

    def _dispatch(self, line: bytes) -> Coroutine[Any, Any, None] | None:
        """Answer, or start answering, one line; returns the `initialize` to finish before reading on."""
        try:
            msg = incoming(line)
        except BadLine as exc:
            self.write(error_response(exc.rid, exc.error))
            return None
        if not isinstance(msg, Message):
            self.outbound.answer(msg)  # the client's answer to a server request; others are dropped (P29)
            return None
        if not msg.is_request:
            self._notified(msg)
            return None
        if msg.id in self.inflight:
            self.write(
                error_response(msg.id, McpError(INVALID_REQUEST, f"Invalid request: id {msg.id!r} is already in use"))
            )
            return None
        assert msg.id is not None
        # Each request by its own era (protocol.md P28): a session and 2026 requests share the process.
        if is_modern(msg.method, msg.params):
            work: Coroutine[Any, Any, None] | None = self._serve(msg)
        elif msg.method == "initialize":
            return self._initialize(msg)
        else:
            work = self._in_session(msg)
        if work is None:
            return None
        self.inflight.start(msg.id, work)
        return None

    def _notified(self, msg: Message) -> None:
        if msg.method == "notifications/cancelled":
            self.inflight.cancel(msg.params)  # a 2025-11-25 request's open server requests are cancelled with it (P31)
        elif msg.method == "notifications/initialized" and self.session is not None:
            self._ready = True
        # other notifications are accepted and dropped

    def _in_session(self, msg: Message) -> Coroutine[Any, Any, None] | None:
        """The work that answers a 2025-11-25 request; None when it was refused (or pinged) already."""
        if self.session is None:
            if msg.method == "ping":  # harmless before a session (protocol.md P31)
                self.write(result_response(msg.id, {}))
            else:
                self.write(error_response(msg.id, McpError(INVALID_REQUEST, _NOT_INITIALIZED)))
            return None
        return self._serve_handshake(msg, self.session)

    async def _serve(self, msg: Message) -> None:
        async def emit(method: str, params: dict[str, Any]) -> None:
            self.write(notification(method, params))

        try:
            reply = await self.server.runtime.handle(msg, Exchange(self.info, emit))
        except asyncio.CancelledError:
            return  # cancelled by the client: nothing more is sent for this request
        if isinstance(reply, Subscription):
            await self._listen(reply)
            return
        self.write(reply.body)

    async def _listen(self, sub: Subscription) -> None:
        task = asyncio.current_task()
        assert task is not None
        if self._eof:  # opened while the server is ending (P115)
            self.server.runtime.hub.close(sub)
            return
        self._listening.add(task)
        try:
            self.write(notification(*sub.acknowledgement()))
            async for method, params in sub.notifications():
                self.write(notification(method, params))
        except asyncio.CancelledError:
            return
        finally:
            self._listening.discard(task)
            self.server.runtime.hub.close(sub)
        # The server ended it: send the listen result and, for older clients, the cancel (protocol.md P20).
        self.write(result_response(sub.listen_id, sub.result()))
        self.write(
            notification("notifications/cancelled", {"requestId": sub.listen_id, "reason": "server shutting down"})
        )

    # -- the 2025-11-25 session (protocol.md P33) ---------------------------------------------------

    async def _initialize(self, msg: Message) -> None:
        """The handshake: the process becomes the session, once (a later `initialize` is refused)."""
        if self.session is not None:
            self.write(error_response(msg.id, McpError(INVALID_REQUEST, _ALREADY_INITIALIZED)))
            return
        ex = Exchange(self.info)
        try:
            ex.principal = await self.server.runtime.principal_of(self.info)
        except Unauthenticated as exc:
            self.write(error_response(msg.id, McpError(INVALID_REQUEST, f"Unauthorized: {exc.message}")))
            return
        except Exception:  # a broken principal hook must not end the read loop it runs in
            log.exception("the principal hook failed during initialize")
            self.write(error_response(msg.id, McpError(INTERNAL_ERROR, "Internal error while answering initialize")))
            return
        reply, session = self.server.runtime.initialize(msg, ex)
        if session is not None:
            self.session = session
            self._unwatch = self.server.runtime.hub.watch(self._changed)
        self.write(reply.body)

    async def _serve_handshake(self, msg: Message, session: ServerSession) -> None:
        stream = Stream(self._send, self.outbound)
        try:
            reply = await self.server.runtime.handle_handshake(
                msg, Exchange(self.info, principal=session.principal), session, stream
            )
        except asyncio.CancelledError:
            return  # cancelled by the client: nothing more is sent for this request
        self.write(reply.body)

    async def _send(self, message: dict[str, Any]) -> None:
        """A session request's way back: its notifications and the server's own requests."""
        if self._eof and "id" in message:  # a server request nobody can answer any more
            raise PeerGone("the client closed stdin")
        self.write(message)

    def _changed(self, method: str, params: dict[str, Any]) -> None:
        """A list changed or a resource was updated: tell the session, once it is initialized (P31)."""
        session = self.session
        if session is None or not self._ready or self._eof:
            return
        if method == RESOURCE_UPDATED and params.get("uri") not in session.subscriptions:
            return
        self.write(notification(method, params))


async def peer_lines(reader: asyncio.StreamReader, write: Callable[[dict[str, Any]], None]) -> AsyncIterator[bytes]:
    """The non-blank lines a peer writes, until EOF; a line over 16 MiB is dropped whole, up to its newline,
    and answered with one error (protocol.md P116)."""
    while True:
        try:
            line = await read_line(reader)
        except LineTooLong:
            write(error_response(None, McpError(INVALID_REQUEST, f"Message too large (limit {MAX_LINE} bytes)")))
            continue
        if not line:
            return
        if line.strip():
            yield line


class InFlight(dict[RequestId, asyncio.Task[None]]):
    """A peer's requests being answered, by id: a task each, gone from the table when it ends."""

    def start(self, rid: RequestId, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self[rid] = task
        task.add_done_callback(lambda _task: self.pop(rid, None))

    def cancel(self, params: dict[str, Any]) -> None:
        """`notifications/cancelled`: stop the request it names, if it is still running."""
        rid = params.get("requestId")
        task = self.get(rid) if isinstance(rid, (str, int)) else None
        if task is not None:
            task.cancel()


class BadLine(Exception):
    """A line that is no JSON-RPC message: the error to answer, and the id to answer it under (if readable)."""

    def __init__(self, rid: RequestId | None, error: McpError) -> None:
        super().__init__(error.message)
        self.rid = rid
        self.error = error


def incoming(line: bytes) -> Message | dict[str, Any]:
    """One line a peer wrote: its request or notification, or its response (the decoded object, for an
    `Outbound` to take); `BadLine` for anything else. Shared with `baton bridge`'s host side."""
    try:
        data = orjson.loads(line)
    except orjson.JSONDecodeError:
        try:
            parse(line)  # raises the parse error, worded in one place
        except McpError as exc:
            raise BadLine(None, exc) from None
        raise  # pragma: no cover - parse accepts nothing orjson refused
    if is_response(data):
        assert isinstance(data, dict)
        return data
    try:
        return from_object(data)
    except McpError as exc:
        raise BadLine(_id_of(data), exc) from None


def _id_of(data: Any) -> RequestId | None:
    """The id of a decoded message that is not a valid request, when it can still be read."""
    rid = data.get("id") if isinstance(data, dict) else None
    return rid if isinstance(rid, (str, int)) and not isinstance(rid, bool) else None


async def serve_stdio_async(server: Server) -> int:
    """Serve on this process's stdin/stdout until stdin closes, or SIGINT or SIGTERM (after the start-up
    checks, protocol.md P36); the exit status: 0, or 130 after SIGINT (protocol.md P98)."""
    mount_default_kit(server)
    server.check_startup("stdio")
    try:
        await server.runtime.start()  # Server(lifespan=...), before the first line is read (protocol.md P132)
    except LifespanFailed as exc:
        print(stderr_line(str(exc), "ERROR", _log_format()), file=sys.stderr)
        return 2
    loop = asyncio.get_running_loop()
    reader, out = await open_stdio()
    stdio = StdioServer(server, reader, out)
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stdio.stop, signum)
    try:
        with contextlib.closing(out):
            await stdio.run()
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
    return exit_status(stdio.signal)


async def open_stdio() -> tuple[asyncio.StreamReader, BinaryIO]:
    """This process's stdin as a stream of lines (up to `MAX_LINE`) and its stdout as the protocol stream;
    `sys.stdout` then points at stderr, so that stray print() calls stay off the protocol stream."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    mode = os.fstat(sys.stdin.fileno()).st_mode
    if stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:  # a file, /dev/null or a terminal: the event loop cannot watch those, a thread reads them
        threading.Thread(target=_feed, args=(loop, reader), name="baton-stdin", daemon=True).start()
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    return reader, out


def _log_format() -> LogFormat:
    try:
        return log_format(None)
    except ValueError:  # a bad $BATON_LOG_FORMAT: `baton serve` refused it already; Server.run() did not look
        return "text"


def _feed(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader) -> None:
    """Copy stdin into `reader` from a thread, for a stdin the event loop cannot watch; EOF at the end."""
    fd = sys.stdin.fileno()
    try:
        while chunk := os.read(fd, 65536):
            loop.call_soon_threadsafe(reader.feed_data, chunk)
        loop.call_soon_threadsafe(reader.feed_eof)
    except (OSError, RuntimeError):  # stdin went away, or the loop is closed: the server is ending anyway
        return


def serve_stdio(server: Server) -> int:
    """Blocking: serve `server` over stdio (uvloop when available) until stdin closes or SIGINT / SIGTERM;
    returns the exit status (0, or 130 after SIGINT)."""
    try:
        import uvloop  # noqa: PLC0415 (not on Windows or PyPy)
    except ImportError:
        return asyncio.run(serve_stdio_async(server))
    return uvloop.run(serve_stdio_async(server))
