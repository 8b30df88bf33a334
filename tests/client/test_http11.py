"""The HTTP/1.1 client (`baton.client.http11`) and `HttpTransport` over real loopback sockets.

Most tests script a tiny asyncio server byte for byte (chunked, close-delimited, 1xx, SSE, Connection:
close, servers closing keep-alive connections, slow answers, TLS); the last ones run a whole
`baton.client.Client` against `baton serve examples/everything.py`.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import ipaddress
import socket
import ssl
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from support.serve import RunningServer

from baton.client import Accepted, Answer, CallToolResult, Client, Question, http11
from baton.client.http11 import ConnectError, Disconnected, HttpError, Pool, ProtocolError, Url, encode_headers
from baton.client.http_transport import HttpTransport, SseDecoder

pytestmark = pytest.mark.timeout(60)

T = TypeVar("T")
VERSION = "2026-07-28"
Respond = Callable[[asyncio.StreamWriter, "Seen"], Awaitable[bool]]  # True: keep the connection open


def run(coro: Coroutine[Any, Any, T], timeout: float = 15.0) -> T:
    """Run one coroutine in a fresh event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


# -- a scripted loopback server ----------------------------------------------------------------------


@dataclass
class Seen:
    conn: int  # which connection (1, 2, ...) carried the request
    head: bytes
    body: bytes

    def header(self, name: str) -> str | None:
        for line in self.head.decode("latin-1").split("\r\n")[1:]:
            key, _, value = line.partition(":")
            if key.lower() == name.lower():
                return value.strip()
        return None


@dataclass
class Script:
    """A loopback HTTP/1.1 server: each request gets the next reply (the last one repeats)."""

    replies: list[Respond]
    tls: ssl.SSLContext | None = None
    seen: list[Seen] = field(default_factory=list)
    connections: int = 0
    eofs: int = 0  # connections the client closed
    url: str = ""
    _server: asyncio.Server | None = None
    _writers: list[asyncio.StreamWriter] = field(default_factory=list)

    async def __aenter__(self) -> Script:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0, ssl=self.tls)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"{'https' if self.tls else 'http'}://127.0.0.1:{port}/mcp"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for writer in self._writers:
            writer.close()
        await self._server.wait_closed()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        number = self.connections
        self._writers.append(writer)
        try:
            while True:
                try:
                    head = await reader.readuntil(b"\r\n\r\n")
                except (asyncio.IncompleteReadError, ConnectionError):
                    self.eofs += 1
                    return
                seen = Seen(number, head, b"")
                length = seen.header("content-length")
                seen.body = await reader.readexactly(int(length or 0))
                self.seen.append(seen)
                reply = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
                if not await reply(writer, seen):
                    return
        finally:
            writer.close()


def say(*pieces: bytes | float, close: bool = False) -> Respond:
    """Write each piece (a float: sleep that long first), then keep or close the connection."""

    async def reply(writer: asyncio.StreamWriter, seen: Seen) -> bool:
        for piece in pieces:
            if isinstance(piece, float):
                await asyncio.sleep(piece)
            else:
                writer.write(piece)
                await writer.drain()
        return not close

    return reply


def trickle(data: bytes, pause: float = 0.001) -> list[bytes | float]:
    """`data` one byte per write, with a pause between writes."""
    out: list[bytes | float] = []
    for i in range(len(data)):
        out += [data[i : i + 1], pause]
    return out


def answer(result: Any, rid: int = 1, status: int = 200, extra: bytes = b"") -> bytes:
    body = orjson.dumps({"jsonrpc": "2.0", "id": rid, "result": result})
    return raw(status, body, extra=extra)


def raw(status: int, body: bytes, ctype: bytes = b"application/json", extra: bytes = b"") -> bytes:
    return (
        b"HTTP/1.1 %d X\r\nContent-Type: %s\r\nContent-Length: %d\r\n%s\r\n" % (status, ctype, len(body), extra)
    ) + body


def message(rid: int = 1, method: str = "tools/call", name: str = "t") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "method": method, "params": {"name": name, "arguments": {}}}


async def post(
    transport: HttpTransport,
    rid: int = 1,
    *,
    notify: Callable[[dict[str, Any]], Awaitable[None]] | None = None,
    params: dict[str, str] | None = None,
    method: str = "tools/call",
    name: str = "t",
) -> dict[str, Any]:
    return await transport.request(message(rid, method, name), VERSION, notify, params or {})


async def post_twice(replies: list[Respond]) -> tuple[Script, dict[str, Any], dict[str, Any]]:
    """Two requests on one transport against a scripted server; the server comes back for its counts."""
    async with Script(replies) as srv:
        transport = HttpTransport(srv.url)
        first = await post(transport, 1)
        second = await post(transport, 2)
        await transport.close()
        return srv, first, second


# -- requests on the wire ----------------------------------------------------------------------------


@pytest.mark.process
def test_request_is_one_write_and_connections_are_kept_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    writes: list[bytes] = []
    made = http11.Connection.connection_made

    class Counting:
        def __init__(self, inner: asyncio.Transport) -> None:
            self.inner = inner

        def write(self, data: bytes) -> None:
            writes.append(data)
            self.inner.write(data)

        def __getattr__(self, name: str) -> Any:
            return getattr(self.inner, name)

    def counting(self: http11.Connection, transport: asyncio.BaseTransport) -> None:
        made(self, Counting(transport))  # type: ignore[arg-type]

    monkeypatch.setattr(http11.Connection, "connection_made", counting)

    async def flow() -> tuple[Script, list[dict[str, Any]]]:
        async with Script([say(answer({"n": 1}, 1)), say(answer({"n": 2}, 2)), say(answer({"n": 3}, 3))]) as srv:
            transport = HttpTransport(srv.url, headers={"Authorization": "Bearer k"})
            replies = [await post(transport, i, params={"Region": "eu west"}) for i in (1, 2, 3)]
            await transport.close()
            return srv, replies

    srv, replies = run(flow())
    assert [r["result"]["n"] for r in replies] == [1, 2, 3]
    assert srv.connections == 1 and [s.conn for s in srv.seen] == [1, 1, 1]
    assert len(writes) == 3  # one write per request: request line, headers and body together
    first = srv.seen[0]
    port = srv.url.split(":")[2].split("/")[0]
    assert first.head.startswith(b"POST /mcp HTTP/1.1\r\n")
    assert writes[0] == first.head + first.body
    assert first.header("Host") == f"127.0.0.1:{port}"
    assert first.header("Content-Type") == "application/json"
    assert first.header("Accept") == "application/json, text/event-stream"
    assert first.header("MCP-Protocol-Version") == VERSION
    assert first.header("Mcp-Method") == "tools/call"
    assert first.header("Mcp-Name") == "t"
    assert first.header("Mcp-Param-Region") == "eu west"
    assert first.header("Authorization") == "Bearer k"
    assert orjson.loads(first.body) == message(1)


@pytest.mark.process
def test_extra_headers_replace_standard_ones_and_reserved_ones_are_refused() -> None:
    async def flow() -> Seen:
        async with Script([say(answer({}))]) as srv:
            transport = HttpTransport(srv.url, headers={"accept": "application/json", "Mcp-Name": "nope"})
            await post(transport, name="real")
            await transport.close()
            return srv.seen[0]

    seen = run(flow())
    assert seen.head.count(b"ccept:") == 1 and seen.header("Accept") == "application/json"
    assert seen.header("Mcp-Name") == "real"
    for name in ("Host", "Content-Length", "transfer-encoding", "Connection"):
        with pytest.raises(ValueError, match="set by the HTTP client"):
            HttpTransport("http://127.0.0.1:1/mcp", headers={name: "x"})


@pytest.mark.parametrize(
    "headers",
    [{"X-A": "a\r\nX-Evil: 1"}, {"X-A": "a\nb"}, {"X-A": "a\rb"}, {"X-A": "nul\x00"}, {"X-A": "é"}, {"Bad Name": "v"}],
    ids=["crlf", "lf", "cr", "nul", "non-ascii", "name"],
)
def test_header_injection_is_refused(headers: dict[str, str]) -> None:
    with pytest.raises(ValueError, match="header"):
        HttpTransport("http://127.0.0.1:1/mcp", headers=headers)


@pytest.mark.process
def test_injection_through_the_message_is_refused_or_encoded() -> None:
    async def flow() -> Script:
        async with Script([say(answer({}))]) as srv:
            transport = HttpTransport(srv.url)
            with pytest.raises(ValueError, match="Mcp-Method"):
                await post(transport, method="tools/call\r\nX-Evil: 1")
            with pytest.raises(ValueError, match="header name"):
                await post(transport, params={"A\r\nX-Evil": "1"})
            await post(transport, name="t\r\nX-Evil: 1")  # a value: base64-encoded, never raw
            await transport.close()
            return srv

    srv = run(flow())
    assert len(srv.seen) == 1
    assert srv.seen[0].header("X-Evil") is None
    assert (srv.seen[0].header("Mcp-Name") or "").startswith("=?base64?")


def test_url_parsing() -> None:
    url = Url.parse("https://user:p%40ss@Example.COM/a b/mcp?x=1 2#frag")
    assert (url.scheme, url.host, url.port) == ("https", "example.com", 443)
    assert url.authority == b"example.com" and url.target == b"/a%20b/mcp?x=1%202"
    assert url.authorization == "Basic dXNlcjpwQHNz"  # user:p@ss
    assert Url.parse("http://[::1]:8080").authority == b"[::1]:8080"
    assert Url.parse("http://[::1]:8080").target == b"/"
    assert Url.parse("http://h:80/").authority == b"h"
    with pytest.raises(ValueError):
        Url.parse("ftp://h/")
    with pytest.raises(ValueError):
        encode_headers([("X", "a\r\n")])


# -- response framing --------------------------------------------------------------------------------


@pytest.mark.process
def test_chunked_with_extensions_and_trailers_byte_by_byte() -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "chunked"}})
    half = len(body) // 2
    chunked = (
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b'%x;name=value;quoted="a b"\r\n%s\r\n' % (half, body[:half])
        + b"%X\r\n%s\r\n" % (len(body) - half, body[half:])
        + b"0;last\r\nX-Checksum: abc\r\nX-Other: d\r\n\r\n"
    )

    srv, first, second = run(post_twice([say(*trickle(chunked)), say(answer({"text": "again"}, 2))]))
    assert first["result"]["text"] == "chunked" and second["result"]["text"] == "again"
    assert srv.connections == 1  # the connection survived the chunked body and its trailers


@pytest.mark.process
def test_close_delimited_body() -> None:
    body = orjson.dumps({"jsonrpc": "2.0", "id": 1, "result": {"text": "until close"}})
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"

    srv, first, second = run(post_twice([say(head, body[:10], 0.05, body[10:], close=True), say(answer({"n": 2}, 2))]))
    assert first["result"]["text"] == "until close" and second["result"]["n"] == 2
    assert srv.connections == 2


@pytest.mark.process
def test_informational_responses_are_skipped() -> None:
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"

    async def flow() -> dict[str, Any]:
        async with Script([say(early, 0.02, answer({"ok": True}))]) as srv:
            transport = HttpTransport(srv.url)
            try:
                return await post(transport)
            finally:
                await transport.close()

    assert run(flow())["result"] == {"ok": True}


@pytest.mark.process
def test_connection_close_from_the_server() -> None:
    async def flow() -> tuple[Script, dict[str, Any]]:
        async with Script([say(answer({}, 1, extra=b"Connection: close\r\n")), say(answer({"n": 2}, 2))]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport, 1)
            second = await post(transport, 2)
            for _ in range(100):
                if srv.eofs:
                    break
                await asyncio.sleep(0.01)
            await transport.close()
            return srv, second

    srv, second = run(flow())
    assert second["result"]["n"] == 2
    assert srv.connections == 2 and [s.conn for s in srv.seen] == [1, 2]
    assert srv.eofs >= 1  # the client closed the first connection itself


@pytest.mark.process
def test_http10_response_without_keep_alive_is_not_reused() -> None:
    body = b'{"jsonrpc":"2.0","id":1,"result":{}}'
    old = b"HTTP/1.0 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)

    async def flow() -> Script:
        async with Script([say(old), say(answer({}, 2))]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport, 1)
            await post(transport, 2)
            await transport.close()
            return srv

    assert run(flow()).connections == 2


@pytest.mark.process
def test_head_response_has_no_body_and_the_connection_is_reused() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1234\r\n\r\n"

    async def flow() -> tuple[Script, int, dict[str, str], bytes, bytes]:
        async with Script([say(head), say(raw(200, b"{}"))]) as srv:
            pool = Pool()
            url = Url.parse(srv.url)
            resp = await pool.send(url, "HEAD", b"", b"")
            body = await resp.read()  # at once: the 1234 bytes announced are not coming
            after = await (await pool.send(url, "POST", b"", b"{}")).read()
            await pool.close()
            return srv, resp.status, resp.headers, body, after

    srv, status, headers, body, after = run(flow())
    assert status == 200 and headers["content-length"] == "1234" and body == b""
    assert after == b"{}" and srv.connections == 1


@pytest.mark.process
def test_bytes_after_a_response_spoil_the_connection() -> None:
    stray = answer({"n": 1}, 1) + answer({"stray": True}, 1)
    srv, first, second = run(post_twice([say(stray), say(answer({"n": 2}, 2))]))
    assert first["result"] == {"n": 1} and second["result"] == {"n": 2}
    assert srv.connections == 2  # the first connection was not pooled: it had a response nobody asked for


@pytest.mark.process
@pytest.mark.parametrize(
    ("reply", "match"),
    [
        (b"HTTP/2 200 OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "chunk size"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n", "after chunk data"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n", "Content-Encoding"),
        (b"HTTP/1.1 200 OK\r\nBad Header: 1\r\nContent-Length: 0\r\n\r\n", "header token"),
        (b"HTTP/1.1 101 Switching Protocols\r\n\r\n", "switched"),
    ],
    ids=["http2", "status", "two-lengths", "negative", "chunk-size", "chunk-crlf", "gzip", "header", "101"],
)
def test_malformed_responses_raise_protocol_error(reply: bytes, match: str) -> None:
    async def flow() -> None:
        async with Script([say(reply)]) as srv:
            transport = HttpTransport(srv.url)
            try:
                await post(transport)
            finally:
                await transport.close()

    with pytest.raises(ProtocolError, match=match):
        run(flow())


@pytest.mark.process
def test_large_body_with_backpressure() -> None:
    payload = b"x" * (3 * 1024 * 1024)
    chunks = b"".join(
        b"%x\r\n%s\r\n" % (len(part), part) for part in (payload[i : i + 65536] for i in range(0, len(payload), 65536))
    )
    reply = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + chunks + b"0\r\n\r\n"

    async def flow() -> tuple[int, bool]:
        async with Script([say(reply)]) as srv:
            pool = Pool()
            resp = await pool.send(Url.parse(srv.url), "POST", b"", b"{}")
            total, paused = 0, False
            while chunk := await resp.next_chunk():
                total += len(chunk)
                await asyncio.sleep(0.02)  # a slow reader: the socket is paused meanwhile
                paused = paused or resp._conn._paused
            await pool.close()
            return total, paused

    total, paused = run(flow())
    assert total == len(payload)
    assert paused


# -- JSON-RPC over HTTP: errors ------------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize(
    ("reply", "status", "match"),
    [
        (raw(502, b"<html>Bad gateway</html>", b"text/html"), 502, "HTTP 502: the body is not JSON"),
        (raw(500, b""), 500, "HTTP 500 with an empty body"),
        (raw(404, b'{"detail": "Not Found"}'), 404, "HTTP 404: the body is not a JSON-RPC error"),
        (raw(503, b"[1, 2]"), 503, "HTTP 503"),
        (raw(200, b"not json", b"text/plain"), 200, "HTTP 200: the body is not JSON"),
        (b"HTTP/1.1 204 No Content\r\n\r\n", 204, "HTTP 204 with an empty body"),
    ],
    ids=["502-html", "500-empty", "404-json", "503-list", "200-text", "204"],
)
def test_unusable_bodies_raise_http_error(reply: bytes, status: int, match: str) -> None:
    async def flow() -> None:
        async with Script([say(reply)]) as srv:
            transport = HttpTransport(srv.url)
            try:
                await post(transport)
            finally:
                await transport.close()

    with pytest.raises(HttpError, match=match) as info:
        run(flow())
    assert info.value.status == status
    assert isinstance(info.value, ConnectionError)


@pytest.mark.process
def test_json_rpc_error_body_is_returned() -> None:
    error = {"jsonrpc": "2.0", "id": 1, "error": {"code": -32602, "message": "bad params"}}

    async def flow() -> dict[str, Any]:
        async with Script([say(raw(400, orjson.dumps(error)))]) as srv:
            transport = HttpTransport(srv.url)
            try:
                return await post(transport)
            finally:
                await transport.close()

    assert run(flow()) == error


# -- SSE -----------------------------------------------------------------------------------------------


def sse_head(chunked: bool = True) -> bytes:
    framing = b"Transfer-Encoding: chunked\r\n" if chunked else b""
    return b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream; charset=utf-8\r\n" + framing + b"\r\n"


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


@pytest.mark.process
def test_sse_notifications_arrive_before_the_response() -> None:
    notified = asyncio.Event()
    note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "p7", "progress": 1}}
    final = orjson.dumps({"jsonrpc": "2.0", "id": 7, "result": {"text": "line1\nline2"}}, option=orjson.OPT_INDENT_2)
    in_time: list[bool] = []

    async def stream(writer: asyncio.StreamWriter, seen: Seen) -> bool:
        writer.write(sse_head())
        writer.write(chunk(b": keep-alive comment\r\n\r\n"))
        writer.write(chunk(b"event: message\r\ndata: " + orjson.dumps(note) + b"\r\n\r\n"))
        await writer.drain()
        try:  # the final answer waits until the client has seen the notification
            await asyncio.wait_for(notified.wait(), 5)
            in_time.append(True)
        except TimeoutError:
            in_time.append(False)
        other = orjson.dumps({"jsonrpc": "2.0", "id": 99, "result": {"text": "wrong id"}})
        writer.write(chunk(b"data: " + other + b"\n\n"))
        writer.write(chunk(b'event: other\ndata: {"jsonrpc":"2.0","id":7,"result":{}}\n\n'))
        lines = b"".join(b"data: " + line + b"\n" for line in final.split(b"\n"))
        writer.write(chunk(lines + b"\n") + b"0\r\n\r\n")
        await writer.drain()
        return True

    got: list[dict[str, Any]] = []

    async def notify(msg: dict[str, Any]) -> None:
        got.append(msg)
        notified.set()

    async def flow() -> tuple[Script, dict[str, Any], dict[str, Any]]:
        async with Script([stream, say(answer({"n": 2}, 8))]) as srv:
            transport = HttpTransport(srv.url)
            reply = await post(transport, 7, notify=notify)
            again = await post(transport, 8)
            await transport.close()
            return srv, reply, again

    srv, reply, again = run(flow())
    assert in_time == [True]
    assert reply["result"] == {"text": "line1\nline2"}
    assert [m["params"]["progress"] for m in got] == [1]
    assert orjson.loads(srv.seen[0].body)["params"]["_meta"]["progressToken"] == "p7"
    assert again["result"]["n"] == 2 and srv.connections == 1  # the stream's end was drained, then reused


@pytest.mark.process
def test_sse_without_a_response_raises() -> None:
    note = b'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}\n\n'

    async def flow() -> None:
        async with Script([say(sse_head(chunked=False), note, close=True)]) as srv:
            transport = HttpTransport(srv.url)
            try:
                await post(transport, notify=lambda m: asyncio.sleep(0))
            finally:
                await transport.close()

    with pytest.raises(ConnectionError, match="SSE stream ended"):
        run(flow())


@pytest.mark.process
def test_sse_event_that_is_not_json_raises() -> None:
    async def flow() -> None:
        async with Script([say(sse_head(chunked=False), b"data: {oops\n\n", close=True)]) as srv:
            transport = HttpTransport(srv.url)
            try:
                await post(transport)
            finally:
                await transport.close()

    with pytest.raises(ProtocolError, match="not JSON"):
        run(flow())


@pytest.mark.parametrize("split", [1, 2, 3, 7, 1000])
def test_sse_decoder(split: int) -> None:
    stream = (
        b"\xef\xbb\xbf: comment\r\n"
        b"data: a\r\ndata:b\r\n\r\n"  # CRLF; a data field without its space
        b"data:  two spaces\rdata\r\r"  # CR only; a field with no colon is an empty value
        b"event: ping\ndata: skipped\n\n"  # not a message event
        b"id: 5\nretry: 10\nevent: message\ndata: {}\n\n"
        b"data: cut off"
    )
    decoder = SseDecoder()
    events: list[bytes] = []
    for i in range(0, len(stream), split):
        events += decoder.feed(stream[i : i + split])
    assert events == [b"a\nb", b" two spaces\n", b"{}"]


# -- keep-alive connections the server closes -----------------------------------------------------------


@pytest.mark.process
def test_idle_connection_closed_by_the_server() -> None:
    async def flow() -> tuple[Script, dict[str, Any]]:
        async with Script([say(answer({}, 1), 0.01, close=True), say(answer({"n": 2}, 2))]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport, 1)
            await asyncio.sleep(0.2)  # the close reaches the client while the connection is idle
            second = await post(transport, 2)
            await transport.close()
            return srv, second

    srv, second = run(flow())
    assert second["result"]["n"] == 2
    assert srv.connections == 2 and len(srv.seen) == 2


@pytest.mark.process
def test_reused_connection_closed_before_answering_is_retried_once() -> None:
    async def flow() -> tuple[Script, dict[str, Any]]:
        async with Script([say(answer({}, 1)), say(close=True), say(answer({"n": 2}, 2))]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport, 1)
            second = await post(transport, 2)
            await transport.close()
            return srv, second

    srv, second = run(flow())
    assert second["result"]["n"] == 2
    assert [s.conn for s in srv.seen] == [1, 1, 2]  # the same request again, on a new connection


@pytest.mark.process
def test_retry_happens_only_once() -> None:
    async def flow() -> None:
        async with Script([say(answer({}, 1)), say(close=True)]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport, 1)
            try:
                with pytest.raises(Disconnected, match="without answering"):
                    await post(transport, 2)
            finally:
                await transport.close()
            assert [s.conn for s in srv.seen] == [1, 1, 2]

    run(flow())


@pytest.mark.process
def test_new_connection_closed_before_answering_is_not_retried() -> None:
    async def flow() -> None:
        async with Script([say(close=True)]) as srv:
            transport = HttpTransport(srv.url)
            try:
                with pytest.raises(ConnectionError, match="without answering"):
                    await post(transport)
            finally:
                await transport.close()
            assert len(srv.seen) == 1 and srv.connections == 1

    run(flow())


@pytest.mark.process
def test_connection_closed_in_the_middle_of_a_response_is_not_retried() -> None:
    async def flow() -> None:
        async with Script([say(answer({}, 1)), say(b"HTTP/1.1 200 OK\r\nContent-Le", close=True)]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport, 1)
            try:
                with pytest.raises(Disconnected, match="middle of a response"):
                    await post(transport, 2)
            finally:
                await transport.close()
            assert [s.conn for s in srv.seen] == [1, 1]

    run(flow())


@pytest.mark.process
def test_idle_connections_are_bounded() -> None:
    async def flow() -> tuple[Script, int]:
        async with Script([say(0.1, answer({}))]) as srv:
            pool = Pool(max_idle=2)
            url = Url.parse(srv.url)

            async def one() -> None:
                resp = await pool.send(url, "POST", b"", b"{}")
                await resp.read()

            await asyncio.gather(*(one() for _ in range(5)))
            idle = len(pool._idle[("http", "127.0.0.1", url.port)])
            for _ in range(100):
                if srv.eofs >= 3:
                    break
                await asyncio.sleep(0.01)
            await pool.close()
            return srv, idle

    srv, idle = run(flow())
    assert srv.connections == 5 and idle == 2
    assert srv.eofs >= 3


@pytest.mark.process
def test_close_closes_connections_and_refuses_more() -> None:
    async def flow() -> Script:
        async with Script([say(answer({}))]) as srv:
            transport = HttpTransport(srv.url)
            await post(transport)
            await transport.close()
            for _ in range(100):
                if srv.eofs:
                    break
                await asyncio.sleep(0.01)
            with pytest.raises(RuntimeError, match="closed"):
                await post(transport)
            return srv

    assert run(flow()).eofs == 1


# -- time and failures to connect -----------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize(
    "reply",
    [say(5.0, answer({})), say(b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{", 5.0)],
    ids=["no-answer", "stalled-body"],
)
def test_slow_response_times_out(reply: Respond) -> None:
    async def flow() -> tuple[Script, float, dict[str, Any]]:
        async with Script([reply, say(answer({"n": 2}, 2))]) as srv:
            transport = HttpTransport(srv.url, timeout=0.3)
            start = time.monotonic()
            with pytest.raises(TimeoutError):
                await post(transport, 1)
            elapsed = time.monotonic() - start
            second = await post(transport, 2)  # on a new connection: the timed-out one was dropped
            await transport.close()
            return srv, elapsed, second

    srv, elapsed, second = run(flow())
    assert 0.25 < elapsed < 3
    assert second["result"]["n"] == 2 and [s.conn for s in srv.seen] == [1, 2]


@pytest.mark.process
def test_connection_refused_is_a_clear_connection_error() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]

    async def flow() -> None:
        transport = HttpTransport(f"http://127.0.0.1:{port}/mcp")
        try:
            await post(transport)
        finally:
            await transport.close()

    with pytest.raises(ConnectError, match=f"cannot connect to http://127.0.0.1:{port}") as info:
        run(flow())
    assert isinstance(info.value, ConnectionError)


# -- TLS -------------------------------------------------------------------------------------------------


def self_signed(tmp: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = dt.datetime.now(dt.UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_path, key_path


@pytest.mark.process
def test_tls_with_sni_and_verification(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cert, key = self_signed(tmp_path)
    server_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    server_tls.load_cert_chain(cert, key)
    names: list[str | None] = []
    server_tls.sni_callback = lambda sock, name, ctx: names.append(name)  # type: ignore[assignment,func-returns-value]

    async def flow() -> tuple[str, dict[str, Any]]:
        async with Script([say(answer({"tls": True}))], tls=server_tls) as srv:
            url = srv.url.replace("127.0.0.1", "localhost")
            untrusting = HttpTransport(url)
            try:
                with pytest.raises(ConnectError, match="certificate not trusted") as info:
                    await post(untrusting)
            finally:
                await untrusting.close()
            default = ssl.create_default_context

            def trusting() -> ssl.SSLContext:
                context = default()
                context.load_verify_locations(cert)
                return context

            monkeypatch.setattr(http11.ssl, "create_default_context", trusting)
            transport = HttpTransport(url)
            try:
                return str(info.value), await post(transport)
            finally:
                await transport.close()

    message_, reply = run(flow())
    assert "localhost" in message_
    assert reply["result"] == {"tls": True}
    assert names and all(name == "localhost" for name in names)


# -- the whole client against `baton serve` ---------------------------------------------------------------


def test_perform_flow_through_client(serve: Callable[..., RunningServer]) -> None:
    server = serve("examples/everything.py")
    asked: list[str] = []

    async def on_form(question: Question) -> Answer:
        asked.append(question.message)
        return Accepted({"confirm": True})

    async def flow() -> tuple[list[str], int]:
        async with Client(server.url, on_form=on_form) as client:
            texts = []
            for i in range(3):
                result = await client.call_tool("perform", {"action": f"deploy-{i}"})
                texts.append(result.text)
            assert isinstance(client.transport, HttpTransport)
            return texts, len(client.transport.pool._all)

    texts, connections = run(flow())
    assert texts == ["done: deploy-0", "done: deploy-1", "done: deploy-2"]
    assert len(asked) == 3
    assert connections == 1  # six requests, one keep-alive connection


def test_sse_progress_reaches_the_callback(serve: Callable[..., RunningServer]) -> None:
    server = serve("examples/everything.py")
    seen: list[tuple[float, Any]] = []

    async def progress(note: dict[str, Any]) -> None:
        seen.append((time.monotonic(), note["params"]["progress"]))

    async def flow() -> tuple[CallToolResult, float]:
        async with Client(server.url) as client:
            result = await client.call_tool("test_tool_with_progress", progress=progress)
            return result, time.monotonic()

    result, done_at = run(flow())
    assert result.text == "Progress test completed"
    assert [p for _, p in seen] == [0, 50, 100]
    assert seen[1][0] - seen[0][0] > 0.02  # delivered as they came (the tool sleeps 50 ms between steps)
    assert done_at >= seen[-1][0]
