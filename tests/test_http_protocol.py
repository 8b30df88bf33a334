"""`baton.http_protocol`: a response's head leaves with its body, a connection keeps one keep-alive timer while idle,
and otherwise the protocol and its cycles are uvicorn's.

The cycle's `send` is compared with uvicorn's own over generated ASGI message sequences (the same bytes, errors and
state; only when the head leaves may differ). The keep-alive timer is tried on a loopback server of the protocol
with short timeouts: one timer for many requests, the connection closed after its idle time and never while a
request runs (pipelined ones included), no timer left once it is closed. Then the protocol is served for real by
`baton.web.started` and `baton.web.run`: a client receives a held head only with its body, and a head that no body
follows at once (HEAD, a stream) at once.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
import textwrap
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from hypothesis import given, settings
from hypothesis import strategies as st
from support.processes import PortOpen, free_port, start
from uvicorn.protocols.http.flow_control import FlowControl
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle
from uvicorn.server import ServerState

from baton import http_protocol, web
from baton.http_protocol import HTTP_PROTOCOL, HttpCycle, HttpProtocol

DATE = (b"date", b"Sun, 06 Dec 2026 23:59:59 GMT")
HEAD_5 = b"HTTP/1.1 200 OK\r\ncontent-length: 5\r\n\r\n"
COMPARE_AGAIN = (
    f"uvicorn {uvicorn.__version__} is installed, and baton.http_protocol serves only on uvicorn "
    f"{http_protocol.COMPARED_UVICORN}: compare HttpCycle.send and HttpProtocol's keep-alive with this uvicorn's "
    "(this module's tests do), then set COMPARED_UVICORN"
)


class Wire:
    """A transport that records what is written, and whether it was closed."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    @property
    def sent(self) -> bytes:
        return b"".join(self.writes)


def _cycle(kind: type[RequestResponseCycle], method: str, keep_alive: bool, defaults: list[Any]) -> Any:
    wire = Wire()
    cycle = kind(
        scope={  # type: ignore[typeddict-item]
            "type": "http",
            "method": method,
            "http_version": "1.1",
            "raw_path": b"/",
            "query_string": b"",
            "client": ("127.0.0.1", 5000),
            "headers": [],
        },
        transport=wire,  # type: ignore[arg-type]
        flow=FlowControl(wire),  # type: ignore[arg-type]
        logger=logging.getLogger("test.http_protocol"),
        access_logger=logging.getLogger("test.http_protocol.access"),
        access_log=False,
        default_headers=defaults,
        message_event=asyncio.Event(),
        expect_100_continue=False,
        keep_alive=keep_alive,
        on_response=lambda: wire.writes.append(b"<complete>"),
    )
    return cycle, wire


def _state(cycle: Any, wire: Wire) -> tuple[Any, ...]:
    return (
        cycle.response_started,
        cycle.response_complete,
        cycle.keep_alive,
        cycle.chunked_encoding,
        cycle.expected_content_length,
        cycle.waiting_for_100_continue,
        wire.closed,
    )


async def _sent(cycle: Any, message: dict[str, Any]) -> str | None:
    """Send one message; the error it raised, if any."""
    try:
        await cycle.send(message)
    except Exception as exc:  # the error is what is compared
        return f"{type(exc).__name__}: {exc}"
    return None


HEADERS = st.sampled_from(
    [
        (b"content-type", b"application/json"),
        (b"Content-Type", b"text/plain"),
        (b"transfer-encoding", b"chunked"),
        (b"Transfer-Encoding", b"gzip"),
        (b"connection", b"close"),
        (b"Connection", b"keep-alive, Close"),
        (b"connection", b"keep-alive"),
        (b"x-trace", b"a b"),
        (b"x bad", b"name"),
        (b"x-bad-value", b"line\nbreak"),
    ]
)


@st.composite
def exchanges(draw: st.DrawFn) -> tuple[str, bool, list[Any], list[dict[str, Any]]]:
    method = draw(st.sampled_from(["POST", "GET", "HEAD", "DELETE"]))
    bodies = draw(st.lists(st.tuples(st.binary(max_size=12), st.booleans()), max_size=4))
    headers = draw(st.lists(HEADERS, max_size=4))
    length = draw(st.one_of(st.none(), st.just(sum(len(b) for b, _ in bodies)), st.integers(0, 30)))
    if length is not None:
        headers.insert(draw(st.integers(0, len(headers))), (b"content-length", b"%d" % length))
    start = {
        "type": "http.response.start",
        "status": draw(st.sampled_from([200, 202, 204, 304, 404, 500])),
        "headers": headers,
    }
    messages: list[dict[str, Any]] = [start]
    messages += [{"type": "http.response.body", "body": b, "more_body": more} for b, more in bodies]
    if bodies and not draw(st.booleans()):  # the last body ends the response, as an app's does
        messages[-1]["more_body"] = False
    stray = draw(st.sampled_from([None, "http.response.start", "http.response.trailers", "http.response.body"]))
    if stray is not None:
        messages.insert(draw(st.integers(0, len(messages))), {"type": stray, "status": 200, "headers": []})
    defaults = draw(st.sampled_from([[], [DATE]]))
    return method, draw(st.booleans()), defaults, messages


@settings(max_examples=400, deadline=None)
@given(exchanges())
def test_the_cycle_sends_what_uvicorns_sends(exchange: tuple[str, bool, list[Any], list[dict[str, Any]]]) -> None:
    """The same bytes in the same order, the same error, the same state after each message; only a held head's
    write waits, and only until the next write of its response."""
    method, keep_alive, defaults, messages = exchange

    async def compare() -> None:
        theirs, their_wire = _cycle(RequestResponseCycle, method, keep_alive, defaults)
        ours, our_wire = _cycle(HttpCycle, method, keep_alive, defaults)
        for message in messages:
            error = await _sent(ours, message)
            assert error == await _sent(theirs, message)
            assert _state(ours, our_wire) == _state(theirs, their_wire)
            assert our_wire.sent + (ours.held or b"") == their_wire.sent  # the held head is all that waits
            if ours.response_complete:
                assert ours.held is None  # nothing held past its response
            if error is not None:
                break
        assert len(our_wire.writes) <= len(their_wire.writes)

    asyncio.run(compare())


@pytest.mark.parametrize(
    ("method", "headers", "bodies", "writes"),
    [
        # The reply of every MCP request: one write, the head with the body.
        ("POST", [(b"content-length", b"5")], [b"hello"], [HEAD_5 + b"hello"]),
        # A body in two messages: the head goes with the first.
        ("POST", [(b"content-length", b"5")], [b"he", b"llo"], [HEAD_5 + b"he", b"llo"]),
        # Nothing to wait for: the head at once (an empty body writes nothing).
        ("POST", [(b"content-length", b"0")], [b""], [b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n"]),
        ("HEAD", [(b"content-length", b"5")], [b""], [HEAD_5]),
        # A stream (chunked): the head at once, then each chunk.
        ("POST", [], [b"ab"], [b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n", b"2\r\nab\r\n0\r\n\r\n"]),
    ],
)
def test_what_each_write_carries(method: str, headers: list[Any], bodies: list[bytes], writes: list[bytes]) -> None:
    async def play() -> list[bytes]:
        cycle, wire = _cycle(HttpCycle, method, True, [])
        await cycle.send({"type": "http.response.start", "status": 200, "headers": headers})
        for i, body in enumerate(bodies):
            await cycle.send({"type": "http.response.body", "body": body, "more_body": i < len(bodies) - 1})
        return [w for w in wire.writes if w and w != b"<complete>"]

    assert asyncio.run(play()) == writes


def test_the_protocol_is_used_only_on_the_uvicorn_its_send_was_compared_with(monkeypatch: pytest.MonkeyPatch) -> None:
    assert uvicorn.__version__.startswith(http_protocol.COMPARED_UVICORN + "."), COMPARE_AGAIN
    assert HTTP_PROTOCOL is HttpProtocol
    assert http_protocol._protocol() is HttpProtocol
    monkeypatch.setattr(uvicorn, "__version__", "0.99.0")
    assert http_protocol._protocol() == "auto"


def test_the_protocol_makes_its_cycles_with_uvicorns_own_code() -> None:
    made = HttpProtocol.on_headers_complete
    assert made.__code__ is uvicorn.protocols.http.httptools_impl.HttpToolsProtocol.on_headers_complete.__code__
    assert made.__globals__["RequestResponseCycle"] is HttpCycle
    assert uvicorn.protocols.http.httptools_impl.RequestResponseCycle is RequestResponseCycle  # uvicorn's untouched


async def _quick(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """An app that answers at once, or after `?seconds`."""
    await receive()
    await asyncio.sleep(float(scope["query_string"] or 0))
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"2")]})
    await send({"type": "http.response.body", "body": b"ok"})


class KeepAlive:
    """A loopback server of `kind` (the protocol, or uvicorn's for comparison) with a short keep-alive and one client
    connection to it; it counts the timers its connections arm and fails on an error in any callback of the loop."""

    def __init__(self, kind: type[HttpToolsProtocol], timeout_s: float) -> None:
        self.kind = kind
        self.config = uvicorn.Config(_quick, timeout_keep_alive=timeout_s, lifespan="off", log_level="warning")
        self.config.load()
        self.state = ServerState()
        self.made: list[HttpToolsProtocol] = []
        self.timers: list[asyncio.TimerHandle] = []
        self.errors: list[dict[str, Any]] = []

    async def __aenter__(self) -> KeepAlive:
        loop = asyncio.get_running_loop()
        arm = loop.call_later

        def counted(delay: float, callback: Any, *args: Any, **kwargs: Any) -> asyncio.TimerHandle:
            timer = arm(delay, callback, *args, **kwargs)
            if getattr(callback, "__self__", None) in self.made:
                self.timers.append(timer)
            return timer

        loop.call_later = counted  # type: ignore[method-assign]
        loop.set_exception_handler(lambda _, context: self.errors.append(context))  # a timer's callback failing

        def protocol() -> HttpToolsProtocol:
            self.made.append(self.kind(config=self.config, server_state=self.state, app_state={}, _loop=loop))
            return self.made[-1]

        self.server = await loop.create_server(protocol, "127.0.0.1", 0)
        self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *_: object) -> None:
        self.writer.close()
        self.server.close()
        await self.server.wait_closed()
        assert self.errors == []

    async def get(self, target: bytes = b"/") -> None:
        self.writer.write(_request(target))
        await self.answered()

    async def answered(self) -> None:
        answer = await asyncio.wait_for(self.reader.readuntil(b"\r\n\r\nok"), 10)
        assert answer.startswith(b"HTTP/1.1 200 OK\r\n")

    async def closed_after(self) -> float:
        """Seconds until the server closes the connection."""
        began = time.monotonic()
        assert await asyncio.wait_for(self.reader.read(1), 10) == b""
        return time.monotonic() - began


def _request(target: bytes) -> bytes:
    return b"GET " + target + b" HTTP/1.1\r\nhost: x\r\n\r\n"


@pytest.mark.process
@pytest.mark.parametrize(("kind", "timers"), [(HttpProtocol, 1), (HttpToolsProtocol, 40)])
def test_one_timer_serves_a_busy_connection(kind: type[HttpToolsProtocol], timers: int) -> None:
    """40 requests in a row: uvicorn arms (and drops) a timer for each, the protocol one for them all."""

    async def check() -> None:
        async with KeepAlive(kind, 5) as served:
            for _ in range(40):
                await served.get()
            assert len(served.timers) == timers

    asyncio.run(check())


@pytest.mark.process
def test_an_idle_connection_closes_after_the_keep_alive_time() -> None:
    async def check() -> None:
        async with KeepAlive(HttpProtocol, 0.3) as served:
            await served.get()
            assert 0.25 <= await served.closed_after() < 3

    asyncio.run(check())


@pytest.mark.process
def test_requests_closer_than_the_keep_alive_time_keep_the_connection() -> None:
    """Eight requests 0.2 s apart span three keep-alive times of 0.5 s: the timer, due while the connection was idle
    for less than that, waits out the rest each time; 0.5 s after the last response it closes."""

    async def check() -> None:
        async with KeepAlive(HttpProtocol, 0.5) as served:
            for _ in range(8):
                await served.get()
                await asyncio.sleep(0.2)
            assert 0.2 <= await served.closed_after() < 3  # 0.5 s after the last response, 0.2 s before this read
            assert 2 <= len(served.timers) < 8

    asyncio.run(check())


@pytest.mark.process
def test_a_request_longer_than_the_keep_alive_time_is_not_cut() -> None:
    """The timer armed by the first response fires while the second request runs: nothing closes until the
    second response has been idle for the keep-alive time."""

    async def check() -> None:
        async with KeepAlive(HttpProtocol, 0.2) as served:
            await served.get()
            await served.get(b"/?0.6")
            assert 0.15 <= await served.closed_after() < 3

    asyncio.run(check())


@pytest.mark.process
def test_pipelined_requests_are_answered_in_order_then_the_connection_idles_out() -> None:
    """Three requests in one write: each response starts the next (the connection stays busy: no timer is armed in
    between, so the second, longer than the keep-alive time, is not cut), and the keep-alive time counts from the
    last."""

    async def check() -> None:
        async with KeepAlive(HttpProtocol, 0.3) as served:
            served.writer.write(b"".join(_request(b"/?" + wait) for wait in (b"0.1", b"0.5", b"0")))
            for _ in range(3):
                await served.answered()
            assert len(served.timers) == 1  # armed once, after the third
            assert 0.25 <= await served.closed_after() < 3

    asyncio.run(check())


@pytest.mark.process
def test_a_closed_connection_leaves_no_timer() -> None:
    async def check() -> None:
        async with KeepAlive(HttpProtocol, 30) as served:
            await served.get()
            served.writer.close()
            await served.writer.wait_closed()
            for _ in range(200):  # until the server's side has seen the close
                if served.made[0].transport.is_closing():
                    break
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.01)
            assert served.made[0].timeout_keep_alive_task is None
            assert [timer.cancelled() for timer in served.timers] == [True]

    asyncio.run(check())


async def _late(scope: dict[str, Any], receive: Any, send: Any, release: asyncio.Event) -> None:
    """/late: a head with a content-length, its body once `release` is set; /stream: a chunked head, likewise."""
    if scope["type"] == "lifespan":
        await web.lifespan(receive, send)
        return
    if scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", b"text/plain")]})
    else:
        await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
    await release.wait()
    await send({"type": "http.response.body", "body": b"hello"})


async def _served(check: Callable[[int, asyncio.Event], Awaitable[None]]) -> None:
    assert HTTP_PROTOCOL is HttpProtocol, COMPARE_AGAIN
    release = asyncio.Event()
    sock = web.listen("127.0.0.1", 0)

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        await _late(scope, receive, send, release)

    running = await web.started(app, sock)
    try:
        await check(sock.getsockname()[1], release)
    finally:
        release.set()
        running.stop()
        await running.stopped()
        sock.close()


async def _ask(port: int, request: bytes) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(request)
    await writer.drain()
    return reader, writer


@pytest.mark.process
def test_a_client_gets_the_head_only_with_its_body() -> None:
    async def check(port: int, release: asyncio.Event) -> None:
        reader, writer = await _ask(port, b"GET /late HTTP/1.1\r\nhost: x\r\n\r\n")
        try:
            with pytest.raises(TimeoutError):  # uvicorn alone sends the head at once
                await asyncio.wait_for(reader.read(1), 0.5)
            release.set()
            response = await asyncio.wait_for(reader.readuntil(b"hello"), 10)
            assert response.startswith(b"HTTP/1.1 200 OK\r\n") and b"content-length: 5\r\n\r\nhello" in response
        finally:
            writer.close()

    asyncio.run(_served(check))


@pytest.mark.process
@pytest.mark.parametrize(
    ("request_line", "end"),
    [(b"HEAD /late", b"content-length: 5\r\n\r\n"), (b"GET /stream", b"transfer-encoding: chunked\r\n\r\n")],
)
def test_a_head_no_body_follows_at_once_leaves_at_once(request_line: bytes, end: bytes) -> None:
    """A HEAD response's head (no body write comes) and a stream's (its events may be far apart)."""

    async def check(port: int, release: asyncio.Event) -> None:
        reader, writer = await _ask(port, request_line + b" HTTP/1.1\r\nhost: x\r\n\r\n")
        try:
            head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)  # while the app holds its body
            assert head.startswith(b"HTTP/1.1 200 OK\r\n") and head.endswith(end)
            release.set()
        finally:
            writer.close()

    asyncio.run(_served(check))


RUN_LATE = """
import asyncio, sys
from baton import web

async def app(scope, receive, send):
    if scope["type"] == "lifespan":
        await web.lifespan(receive, send)
        return
    await send({"type": "http.response.start", "status": 200, "headers": [(b"content-length", b"5")]})
    await asyncio.sleep(float(scope["query_string"] or 0))
    await send({"type": "http.response.body", "body": b"hello"})

sys.exit(web.run(app, "127.0.0.1", int(sys.argv[1]), graceful_s=1))
"""


@pytest.mark.process
def test_baton_web_run_serves_with_the_protocol(tmp_path: Path) -> None:
    """What `baton serve` runs: the head of a body that comes 0.8 s later arrives with it."""
    assert HTTP_PROTOCOL is HttpProtocol, COMPARE_AGAIN
    script = tmp_path / "late.py"
    script.write_text(textwrap.dedent(RUN_LATE))
    port = free_port()
    with start([sys.executable, str(script), str(port)], ready=PortOpen(port), log=tmp_path / "late.log") as server:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as client:
            client.sendall(b"GET /?0.8 HTTP/1.1\r\nhost: x\r\n\r\n")
            first = client.recv(4096)
            while b"hello" not in first and b"\r\n\r\n" not in first:
                first += client.recv(4096)
            assert first.endswith(b"content-length: 5\r\n\r\nhello")  # the first bytes end with the body
        assert server.stop() == 0
