"""A small HTTP/1.1 client on asyncio Protocols: a keep-alive pool, one write per request, streamed bodies."""

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

MAX_HEAD = 64 * 1024  # the status line and headers of one response, and its trailers
MAX_LINE = 8 * 1024  # one chunk-size line
HIGH_WATER = 1024 * 1024  # body bytes buffered before the socket stops being read
KEEPALIVE_S = 4.0  # an idle connection older than this is closed, not reused (uvicorn closes at 5 s)
MAX_IDLE = 32  # idle connections kept per origin
DRAIN_S = 5.0  # how long a released, unfinished response may take to end before its connection is dropped

_HEAD_END = re.compile(rb"\r?\n\r?\n")
_HEX = re.compile(rb"[0-9A-Fa-f]{1,15}\Z")
_DIGITS = re.compile(r"[0-9]{1,18}\Z")
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+\Z")
_VALUE = re.compile(r"[\t\x20-\x7e]*\Z")
_SET_HERE = frozenset({"host", "content-length", "transfer-encoding", "connection"})
_PATH_SAFE = "/!$&'()*+,;=:@%-._~"
_QUERY_SAFE = _PATH_SAFE + "?"
_IDLE, _HEAD, _FIXED, _SIZE, _DATA, _DATA_END, _TRAILER, _UNTIL_CLOSE = range(8)


class ConnectError(ConnectionError):
    """No connection could be made (refused, unresolvable name, TLS failure)."""


class Disconnected(ConnectionError):
    """The server closed the connection before the response was complete."""

    def __init__(self, message: str, *, before_response: bool = False) -> None:
        super().__init__(message)
        self.before_response = before_response  # not one byte of a response had arrived


class ProtocolError(ConnectionError):
    """The server's response is not valid HTTP/1.1 (or uses something this client does not support)."""


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
    """One keep-alive connection; parses each response as its bytes arrive."""

    def __init__(self, pool: Pool, key: tuple[str, str, int], loop: asyncio.AbstractEventLoop) -> None:
        self.pool = pool
        self.key = key
        self.loop = loop
        self.transport: asyncio.Transport | None = None
        self.closed = False
        self.idle_since = 0.0
        self.lost: asyncio.Future[None] = loop.create_future()
        self._response: Response | None = None
        self._buf = b""
        self._state = _IDLE
        self._remaining = 0
        self._keep_alive = False
        self._head_only = False
        self._got_bytes = False
        self._paused = False

    async def request(self, data: bytes, head_only: bool) -> Response:
        """Write one whole request and wait for the response head (1xx responses skipped)."""
        assert self.transport is not None
        response = Response(self)
        self._response = response
        self._state = _HEAD
        self._head_only = head_only
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
            if self._state == _UNTIL_CLOSE and exc is None:
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
        if self._response is None:  # bytes nobody asked for: this connection cannot be trusted
            self.abort()
            return
        self._got_bytes = True
        self._buf = self._buf + data if self._buf else data
        try:
            self._parse()
        except ProtocolError as exc:
            response, self._response = self._response, None
            self.abort()
            if response is not None:
                response._fail(exc)

    # -- parsing ---------------------------------------------------------------------------------------

    def _parse(self) -> None:
        while (response := self._response) is not None:
            state, buf = self._state, self._buf
            if state == _HEAD:
                match = _HEAD_END.search(buf)
                if match is None:
                    if len(buf) > MAX_HEAD:
                        raise ProtocolError("the response head is larger than 64 KiB")
                    return
                self._buf = buf[match.end() :]
                self._on_head(response, buf[: match.start()])
            elif state in (_FIXED, _DATA):
                if not buf:
                    return
                n = self._remaining
                if len(buf) > n:
                    buf, self._buf = buf[:n], buf[n:]
                else:
                    self._buf = b""
                self._remaining = n - len(buf)
                response._feed(buf)
                if self._remaining == 0:
                    if state == _FIXED:
                        self._finish()
                    else:
                        self._state = _DATA_END
            elif state == _DATA_END:
                if buf[:2] == b"\r\n":
                    self._buf = buf[2:]
                elif buf[:1] == b"\n":
                    self._buf = buf[1:]
                elif buf in (b"", b"\r"):
                    return
                else:
                    raise ProtocolError("a chunk of the body is not followed by CRLF")
                self._state = _SIZE
            elif state in (_SIZE, _TRAILER):
                end = buf.find(b"\n")
                if end < 0:
                    if len(buf) > (MAX_LINE if state == _SIZE else MAX_HEAD - self._remaining):
                        raise ProtocolError("a chunk-size or trailer line is too long")
                    return
                line, self._buf = buf[:end].rstrip(b"\r"), buf[end + 1 :]
                if state == _TRAILER:  # trailer fields are read and ignored
                    self._remaining += len(line)
                    if not line:
                        self._finish()
                    elif self._remaining > MAX_HEAD:
                        raise ProtocolError("the trailer fields are larger than 64 KiB")
                    continue
                size = line.split(b";", 1)[0].strip(b" \t")  # chunk extensions are ignored
                if not _HEX.match(size):
                    raise ProtocolError(f"invalid chunk size line {line[:40]!r}")
                self._remaining = int(size, 16)
                self._state = _DATA if self._remaining else _TRAILER
            else:  # _UNTIL_CLOSE
                if buf:
                    self._buf = b""
                    response._feed(buf)
                return

    def _on_head(self, response: Response, head: bytes) -> None:
        lines = head.split(b"\n")
        status_line = lines[0].rstrip(b"\r")
        version, _, rest = status_line.partition(b" ")
        code = rest[:3]
        if not version.startswith(b"HTTP/1.") or not code.isdigit() or rest[3:4] not in (b"", b" "):
            raise ProtocolError(f"not an HTTP/1.1 status line: {status_line[:80]!r}")
        status = int(code)
        headers: dict[str, str] = {}
        key = ""
        for raw in lines[1:]:
            line = raw.rstrip(b"\r")
            if line[:1] in (b" ", b"\t") and key:  # obsolete line folding: one more piece of the last value
                headers[key] += " " + line.strip(b" \t").decode("latin-1")
                continue
            name, colon, value = line.partition(b":")
            if not colon or not _TOKEN.match(name.decode("latin-1")):
                raise ProtocolError(f"malformed header line {line[:80]!r}")
            key = name.decode("latin-1").lower()
            text = value.strip(b" \t").decode("latin-1")
            old = headers.get(key)
            headers[key] = text if old is None else f"{old}, {text}"
        if status < 200:
            if status == 101:
                raise ProtocolError("the server switched protocols, which was never asked for")
            return  # informational (100 Continue, 103 Early Hints): the final response follows
        tokens = {t.strip().lower() for t in headers.get("connection", "").split(",")}
        keep_alive = "close" not in tokens if version == b"HTTP/1.1" else "keep-alive" in tokens
        coding = headers.get("content-encoding", "identity").strip().lower()
        if coding not in ("", "identity"):
            raise ProtocolError(f"unsupported Content-Encoding {coding!r} (none was asked for)")
        te = headers.get("transfer-encoding")
        length = headers.get("content-length")
        if self._head_only or status in (204, 304):
            self._state, self._remaining = _FIXED, 0
        elif te is not None:
            codings = [c.strip().lower() for c in te.split(",")]
            if codings[-1] != "chunked":
                self._state, keep_alive = _UNTIL_CLOSE, False
            elif len(codings) > 1:
                raise ProtocolError(f"unsupported Transfer-Encoding {te!r}")
            else:
                self._state = _SIZE
                keep_alive = keep_alive and length is None  # both framings: never reuse (RFC 9112 §6.3)
        elif length is not None:
            values = {v.strip() for v in length.split(",")}
            number = values.pop()
            if values or not _DIGITS.match(number):
                raise ProtocolError(f"invalid Content-Length {length!r}")
            self._state, self._remaining = _FIXED, int(number)
        else:
            self._state, keep_alive = _UNTIL_CLOSE, False
        self._keep_alive = keep_alive
        response.status = status
        response.headers = headers
        if not response._head.done():
            response._head.set_result(None)
        if self._state == _FIXED and self._remaining == 0:
            self._finish()

    def _finish(self) -> None:
        response, self._response = self._response, None
        self._state = _IDLE
        if response is not None:
            response._end()
        if self._keep_alive and not self._buf and not self.closed:
            self.pool.release(self)
        else:
            self.close()


class Pool:
    """Connections per origin: idle keep-alive ones reused (at most `max_idle` kept), new ones made as needed."""

    def __init__(self, *, max_idle: int = MAX_IDLE, ssl_context: ssl.SSLContext | None = None) -> None:
        self.max_idle = max_idle
        self._ssl = ssl_context
        self._idle: dict[tuple[str, str, int], list[Connection]] = {}
        self._all: set[Connection] = set()
        self._closed = False

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
        return conn

    def _tls(self) -> ssl.SSLContext:
        if self._ssl is None:
            self._ssl = ssl.create_default_context()
            self._ssl.set_alpn_protocols(["http/1.1"])
        return self._ssl
