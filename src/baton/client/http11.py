"""A small HTTP/1.1 client on asyncio Protocols: a keep-alive pool, one write per request, streamed bodies.

Responses are parsed by `http_response.ResponseReader` (httptools); a `Connection` only moves bytes
between its socket and that reader. The pool and the connections are written here rather than taken
from httpx or aiohttp because a request is one write and one read driven from the Protocol's
callbacks, with no task or stream objects per request: the client's CPU per round trip is the
figure it is held to.
"""

from __future__ import annotations

import asyncio
import base64
import re
import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import cast
from urllib.parse import quote, unquote, urlsplit

from .http_response import End, Head, ProtocolError, ResponseReader

HIGH_WATER = 1024 * 1024  # body bytes buffered before the socket stops being read
KEEPALIVE_S = 4.0  # an idle connection older than this is closed, not reused (uvicorn closes at 5 s)
MAX_IDLE = 32  # idle connections kept per origin
DRAIN_S = 5.0  # how long a released, unfinished response may take to end before its connection is dropped

_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_VALUE = re.compile(r"[\t\x20-\x7e]*\Z")
_SET_HERE = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_PATH_SAFE = "/!$&'()*+,;=:@%-._~"
_QUERY_SAFE = _PATH_SAFE + "?"


class ConnectError(ConnectionError):
    """No connection could be made (refused, unresolvable name, TLS failure)."""


class Disconnected(ConnectionError):
    """The server closed the connection before the response was complete."""

    def __init__(self, message: str, *, before_response: bool = False) -> None:
        super().__init__(message)
        self.before_response = before_response  # not one byte of a response had arrived


class HttpError(ConnectionError):
    """An HTTP answer that carries no usable message; `status` is its HTTP status."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Url:
    """A parsed http(s) URL, ready for the request line and the Host header."""

    scheme: str
    host: str
    port: int
    target: bytes
    authority: bytes
    authorization: str | None  # Basic credentials from the URL's userinfo, if any

    @classmethod
    def parse(cls, url: str) -> Url:
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise ValueError(f"not an http(s) URL: {url!r}")
        host = parts.hostname
        if not host:
            raise ValueError(f"no host in URL {url!r}")
        host = host if host.isascii() else host.encode("idna").decode("ascii")
        default = 443 if scheme == "https" else 80
        port = parts.port or default
        authority = f"[{host}]" if ":" in host else host
        if port != default:
            authority += f":{port}"
        target = quote(parts.path or "/", safe=_PATH_SAFE)
        if parts.query:
            target += "?" + quote(parts.query, safe=_QUERY_SAFE)
        if not _VALUE.match(target) or not _VALUE.match(authority):
            raise ValueError(f"invalid characters in URL {url!r}")
        authorization = None
        if parts.username is not None:
            user_pass = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode()
            authorization = "Basic " + base64.b64encode(user_pass).decode("ascii")
        return cls(scheme, host, port, target.encode("ascii"), authority.encode("ascii"), authorization)

    @property
    def origin(self) -> str:
        return f"{self.scheme}://{self.authority.decode('ascii')}"


def encode_headers(pairs: Iterable[tuple[str, str]]) -> bytes:
    """Header lines for `Pool.send`; refuses a name that is not a token and a value with CR, LF or any control."""
    lines = []
    for name, value in pairs:
        if not _TOKEN.match(name):
            raise ValueError(f"invalid header name {name!r}")
        if not _VALUE.match(value):
            raise ValueError(f"invalid value for header {name}: control or non-ASCII characters are refused")
        if name.lower() in _SET_HERE:
            raise ValueError(f"the {name} header is set by the HTTP client itself")
        lines.append(f"{name}: {value}\r\n")
    return "".join(lines).encode("ascii")


class Response:
    """One response: status and headers at once, then the body as it arrives."""

    __slots__ = ("_chunks", "_conn", "_discard", "_done", "_error", "_head", "_size", "_waiter", "headers", "status")

    def __init__(self, conn: Connection) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}  # lowercase names; repeated fields joined with ", "
        self._conn = conn
        self._head: asyncio.Future[None] = conn.loop.create_future()
        self._chunks: list[bytes] = []
        self._size = 0
        self._done = False
        self._discard = False
        self._error: BaseException | None = None
        self._waiter: asyncio.Future[None] | None = None

    async def next_chunk(self) -> bytes:
        """The body bytes received since the last call (waiting for some); b"" once the body is complete."""
        while True:
            chunks = self._chunks
            if chunks:
                data = chunks[0] if len(chunks) == 1 else b"".join(chunks)
                self._chunks = []
                self._size = 0
                self._conn.resume()
                return data
            if self._error is not None:
                raise self._error
            if self._done:
                return b""
            self._waiter = self._conn.loop.create_future()
            await self._waiter

    async def read(self) -> bytes:
        """The whole body."""
        parts = []
        while chunk := await self.next_chunk():
            parts.append(chunk)
        return parts[0] if len(parts) == 1 else b"".join(parts)

    def close(self) -> None:
        """Give up on the response: an unfinished one drops its connection."""
        if not self._done and self._error is None:
            self._error = Disconnected("the response was abandoned")
            self._conn.abort()

    def release(self) -> None:
        """Done with the response: an unfinished one is read to its end in the background, then pooled."""
        if not self._done and self._error is None:
            self._discard = True
            self._chunks = []
            self._size = 0
            self._conn.resume()
            self._conn.loop.call_later(DRAIN_S, self.close)

    # -- called by the connection ----------------------------------------------------------------------

    def _started(self, head: Head) -> None:
        self.status = head.status
        self.headers = head.headers
        if not self._head.done():
            self._head.set_result(None)

    def _feed(self, data: bytes) -> None:
        if self._discard:
            return
        self._chunks.append(data)
        self._size += len(data)
        if self._size > HIGH_WATER:
            self._conn.pause()
        self._wake()

    def _end(self) -> None:
        self._done = True
        self._wake()

    def _fail(self, exc: BaseException) -> None:
        if self._done or self._error is not None:
            return
        self._error = exc
        if not self._head.done():
            self._head.set_exception(exc)
        self._wake()

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            if not waiter.done():
                waiter.set_result(None)


class Connection(asyncio.Protocol):
    """One keep-alive connection: moves bytes between the socket and its `ResponseReader`."""

    def __init__(self, pool: Pool, key: tuple[str, str, int], loop: asyncio.AbstractEventLoop) -> None:
        self.pool = pool
        self.key = key
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self.lost: asyncio.Future[None] = loop.create_future()
        self._response: Response | None = None
        self._reader = ResponseReader()
        self._got_bytes = False
        self._paused = False

    async def request(self, data: bytes, head_only: bool) -> Response:
        """Write one whole request and wait for the response head (1xx responses skipped)."""
        assert self.transport is not None
        response = Response(self)
        self._response = response
        if head_only:
            self._reader.expect(head_only=True)
        self._got_bytes = False
        self.transport.write(data)
        try:
            await response._head
        except BaseException:
            response.close()
            raise
        return response

    def pause(self) -> None:
        if not self._paused and self.transport is not None:
            self._paused = True
            self.transport.pause_reading()

    def resume(self) -> None:
        if self._paused and self.transport is not None:
            self._paused = False
            self.transport.resume_reading()

    def close(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.close()

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # -- asyncio.Protocol ------------------------------------------------------------------------------

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.pool.forget(self)
        response, self._response = self._response, None
        if response is not None:
            if exc is None and self._reader.eof() is not None:  # a body delimited by the close
                response._end()
            else:
                why = f": {exc}" if exc is not None else ""
                if self._got_bytes:
                    response._fail(Disconnected(f"the server closed the connection in the middle of a response{why}"))
                else:
                    message = f"the server closed the connection without answering{why}"
                    response._fail(Disconnected(message, before_response=True))
        if not self.lost.done():
            self.lost.set_result(None)

    def data_received(self, data: bytes) -> None:
        response = self._response
        if response is None:  # bytes nobody asked for: this connection cannot be trusted
            self.abort()
            return
        self._got_bytes = True
        try:
            events = self._reader.feed(data)
        except ProtocolError as exc:
            self._response = None
            self.abort()
            response._fail(exc)
            return
        last = len(events) - 1
        for i, event in enumerate(events):
            if type(event) is bytes:
                response._feed(event)
            elif type(event) is Head:
                response._started(event)
            else:  # anything after the End is a response nobody asked for: the connection is not reused
                self._finish(response, cast(End, event).keep_alive and i == last)
                return

    def _finish(self, response: Response, keep_alive: bool) -> None:
        self._response = None
        response._end()
        if keep_alive and self._reader.idle and not self.closed:
            self.pool.release(self)
        else:
            self.close()


class Pool:
    """Connections per origin: idle keep-alive ones reused (at most `max_idle` kept), new ones made as needed.

    `opened` counts the connections made so far (a figure for callers: the benchmarks report it).
    """

    limit = staticmethod(asyncio.timeout)  # what a transport bounds a request with (an OAuth pool pauses it)

    def __init__(self, *, max_idle: int = MAX_IDLE, ssl_context: ssl.SSLContext | None = None) -> None:
        self.max_idle = max_idle
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._all: set[Connection] = set()
        self._closed = False
        self.opened = 0

    async def send(self, url: Url, method: str, headers: bytes, body: bytes) -> Response:
        """Send one request (`headers` from `encode_headers`); returns once the response head is in.

        A reused connection that the server closed before any byte of the response is retried once,
        on a new connection; nothing else is retried.
        """
        if self._closed:
            raise RuntimeError("the HTTP client is closed")
        data = b"".join(
            (
                method.encode("ascii"),
                b" ",
                url.target,
                b" HTTP/1.1\r\nHost: ",
                url.authority,
                b"\r\n",
                headers,
                b"Content-Length: %d\r\n\r\n" % len(body),
                body,
            )
        )
        head_only = method == "HEAD"
        loop = asyncio.get_running_loop()
        conn = self._take((url.scheme, url.host, url.port), loop)
        if conn is not None:
            try:
                return await conn.request(data, head_only)
            except Disconnected as exc:
                if not exc.before_response:
                    raise
        conn = await self._connect(url, loop)
        return await conn.request(data, head_only)

    async def close(self) -> None:
        """Close every connection, idle or busy."""
        self._closed = True
        conns = [conn for conn in self._all if not conn.lost.done()]
        self._all.clear()
        self._idle.clear()
        loop = asyncio.get_running_loop()
        ours = [conn for conn in conns if conn.loop is loop]
        for conn in ours:
            conn.abort()
        if ours:
            await asyncio.wait([conn.lost for conn in ours], timeout=1.0)

    def release(self, conn: Connection) -> None:
        idle = self._idle.setdefault(conn.key, [])
        if self._closed or len(idle) >= self.max_idle:
            conn.close()
            return
        conn.idle_since = time.monotonic()
        idle.append(conn)

    def forget(self, conn: Connection) -> None:
        self._all.discard(conn)
        idle = self._idle.get(conn.key)
        if idle and conn in idle:
            idle.remove(conn)

    def _take(self, key: tuple[str, str, int], loop: asyncio.AbstractEventLoop) -> Connection | None:
        idle = self._idle.get(key)
        while idle:
            conn = idle.pop()  # the most recently used one
            if conn.closed or conn.loop is not loop:
                continue
            if time.monotonic() - conn.idle_since > KEEPALIVE_S:
                conn.close()
                for older in idle:
                    older.close()
                idle.clear()
                return None
            return conn
        return None

    async def _connect(self, url: Url, loop: asyncio.AbstractEventLoop) -> Connection:
        conn = Connection(self, (url.scheme, url.host, url.port), loop)
        context = self._tls() if url.scheme == "https" else None
        try:
            await loop.create_connection(
                lambda: conn, url.host, url.port, ssl=context, server_hostname=url.host if context else None
            )
        except ssl.SSLCertVerificationError as exc:
            raise ConnectError(f"{url.origin}: TLS certificate not trusted: {exc.verify_message}") from exc
        except ssl.SSLError as exc:
            raise ConnectError(f"{url.origin}: TLS handshake failed: {exc.reason or exc}") from exc
        except OSError as exc:
            raise ConnectError(f"cannot connect to {url.origin}: {exc.strerror or exc}") from exc
        if self._closed:
            conn.abort()
            raise RuntimeError("the HTTP client is closed")
        self._all.add(conn)
        self.opened += 1
        return conn

    def _tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
            self._ssl.set_alpn_protocols(["http/1.1"])
        return self._ssl


__all__ = [
    "ConnectError",
    "Connection",
    "Disconnected",
    "HttpError",
    "Pool",
    "ProtocolError",
    "Response",
    "Url",
    "encode_headers",
]
