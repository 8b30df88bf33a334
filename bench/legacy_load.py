"""Load driver for the handshake era: one MCP 2025-11-25 session per lane, and eliciting tool calls in it.

Each lane opens one session (``initialize``, then ``notifications/initialized``; not measured) and then runs
flows back to back in it. A flow is one ``tools/call`` (tool ``perform``, ``{"action": "deploy-<i>"}`` by
default) with ``Accept: application/json, text/event-stream``, answered with SSE: the server sends its
``elicitation/create`` request on that stream, the driver POSTs the JSON-RPC response (the form accepted,
every field filled as bench/load.py fills it) with the session id, the server answers it 202 and then
sends the call's result on the stream. The flow succeeds on a result with a ``content`` list and no
``isError``. So one flow is one elicitation round trip and two HTTP requests (the call, the answer).

A lane keeps two keep-alive HTTP/1.1 connections, one for the call's stream and one for the answers, on
asyncio streams (uvloop when installed), and parses with the standard library only: it drives Baton and the
peers alike. The options, the timed phases, server CPU time, RSS, the report's keys and its table are
bench/load.py's (its functions, not a copy), so bench/runs.py can run this driver as it runs that one. Only
loopback targets are accepted. Exit status: 0 all flows succeeded, 1 some failed, 2 usage or fatal error (the
server refused the connection, the session could not be opened, or every warmup flow failed).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from load import (
    FatalError,
    FlowError,
    Tally,
    answer_one,
    checked,
    driver_options,
    measured,
    require_loopback,
    run_driver,
    table,
)

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "baton-bench-legacy-load", "version": "1.0"}
CAPABILITIES = {"elicitation": {"form": {}}}
ACCEPT_BOTH = b"application/json, text/event-stream"

_encode = json.JSONEncoder(separators=(",", ":")).encode
_decode = json.loads
_clock = time.perf_counter


# ---------------------------------------------------------------------------------------------------
# HTTP/1.1 on asyncio streams
# ---------------------------------------------------------------------------------------------------


class Connection:
    """One keep-alive HTTP/1.1 connection: write a POST, read its head, then its body as it arrives."""

    def __init__(self, host: str, port: int, prefix: bytes) -> None:
        self.host = host
        self.port = port
        self.prefix = prefix  # the request line and the headers every POST of the lane carries
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.reusable = False
        self.connects = 0

    async def post(self, body: bytes, extra: bytes = b"") -> tuple[int, dict[bytes, bytes]]:
        """Send a POST (``extra`` header lines, each ending in CRLF) and read the response's status and headers."""
        if self.writer is None or not self.reusable:
            await self.open()
        assert self.reader is not None and self.writer is not None
        self.reusable = False  # until the body is read to its end
        self.writer.write(b"%s%sContent-Length: %d\r\n\r\n%s" % (self.prefix, extra, len(body), body))
        try:
            head = await self.reader.readuntil(b"\r\n\r\n")
        except (asyncio.IncompleteReadError, ConnectionError) as exc:
            raise FlowError("transport", f"connection closed before a response: {exc!r}") from None
        lines = head.split(b"\r\n")
        try:
            status = int(lines[0].split(b" ", 2)[1])
        except (IndexError, ValueError):
            raise FlowError("bad-http", f"status line {lines[0][:80]!r}") from None
        headers: dict[bytes, bytes] = {}
        for line in lines[1:]:
            if line:
                name, _, value = line.partition(b":")
                headers[name.strip().lower()] = value.strip()
        return status, headers

    async def body(self, headers: dict[bytes, bytes]) -> AsyncIterator[bytes]:
        """The response body in the pieces it arrives in (Content-Length, chunked, or until the connection closes)."""
        reader = self.reader
        assert reader is not None
        try:
            if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
                while True:
                    size = int((await reader.readuntil(b"\r\n")).split(b";", 1)[0], 16)
                    if size == 0:
                        while await reader.readuntil(b"\r\n") != b"\r\n":  # trailers
                            pass
                        break
                    yield (await reader.readexactly(size + 2))[:-2]
            elif b"content-length" in headers:
                size = int(headers[b"content-length"])
                if size:
                    yield await reader.readexactly(size)
            else:
                while chunk := await reader.read(65536):
                    yield chunk
                return
        except (asyncio.IncompleteReadError, ConnectionError, ValueError) as exc:
            raise FlowError("transport", f"response body cut short: {exc!r}") from None
        self.reusable = headers.get(b"connection", b"").lower() != b"close"

    async def read_all(self, headers: dict[bytes, bytes]) -> bytes:
        return b"".join([piece async for piece in self.body(headers)])

    async def open(self) -> None:
        self.close()
        try:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        except OSError as exc:
            raise FlowError("connect", repr(exc)) from None
        self.connects += 1
        self.reusable = True

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None
        self.reusable = False


async def sse_messages(conn: Connection, headers: dict[bytes, bytes]) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE body as its events complete; events without data (priming) are skipped.
    The body is always read to its end, so the connection can carry the next request."""
    buffer = b""
    async for piece in conn.body(headers):
        buffer += piece
        if b"\r" in buffer:
            buffer = buffer.replace(b"\r\n", b"\n")
        while (end := buffer.find(b"\n\n")) >= 0:
            event, buffer = buffer[:end], buffer[end + 2 :]
            data = [line[5:].removeprefix(b" ") for line in event.split(b"\n") if line.startswith(b"data:")]
            if data and any(data):
                try:
                    yield _decode(b"\n".join(data))
                except ValueError:
                    raise FlowError("bad-json", f"SSE data {data[0][:80]!r}") from None


async def messages(conn: Connection, status: int, headers: dict[bytes, bytes]) -> AsyncIterator[Any]:
    """The JSON-RPC messages of a response: its SSE events, or its one JSON body."""
    ctype = headers.get(b"content-type", b"")
    if ctype.startswith(b"text/event-stream"):
        async for message in sse_messages(conn, headers):
            yield message
        return
    body = await conn.read_all(headers)
    if status != 200 or not ctype.startswith(b"application/json"):
        raise FlowError(f"http-{status}", f"{ctype.decode(errors='replace')}: {body[:120]!r}")
    try:
        yield _decode(body)
    except ValueError:
        raise FlowError("bad-json", repr(body[:120])) from None


# ---------------------------------------------------------------------------------------------------
# A session and its flows
# ---------------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Flow:
    index: int
    started: float
    rounds: int = 1  # HTTP requests of the flow: the call, then one per answer


class Lane:
    """One session: its id, the connection of the calls' streams and the connection of the answers."""

    _ids = itertools.count(1)

    def __init__(self, host: str, port: int, netloc: str, path: str, tool: str, args: str) -> None:
        self.host, self.port, self.tool, self.args = host, port, tool, args
        self.base = (
            f"POST {path} HTTP/1.1\r\nHost: {netloc}\r\nContent-Type: application/json\r\n".encode()
            + b"Accept: "
            + ACCEPT_BOTH
            + b"\r\n"
        )
        self.calls = Connection(host, port, self.base)
        self.answers = Connection(host, port, self.base)
        self.session_id = b""
        self.requests = 0
        self.answered: dict[str, int] = {}

    async def open_session(self) -> None:
        """``initialize`` and ``notifications/initialized``: the session the lane's flows run in."""
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": CAPABILITIES, "clientInfo": CLIENT_INFO}
        rid = next(self._ids)
        body = _encode({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}).encode()
        status, headers = await self.calls.post(body)
        result = None
        async for message in messages(self.calls, status, headers):
            if isinstance(message, dict) and message.get("id") == rid:
                result = message.get("result")
        if not isinstance(result, dict) or result.get("protocolVersion") != PROTOCOL_VERSION:
            raise FatalError(f"initialize was not answered with {PROTOCOL_VERSION}: status {status}, {result!r}")
        session_id = headers.get(b"mcp-session-id")
        if not session_id:
            raise FatalError("initialize was answered without an Mcp-Session-Id")
        self.session_id = session_id
        session = b"Mcp-Session-Id: %s\r\nMCP-Protocol-Version: %s\r\n" % (session_id, PROTOCOL_VERSION.encode())
        self.calls.prefix = self.answers.prefix = self.base + session
        note = _encode({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, headers = await self.answers.post(note)
        await self.answers.read_all(headers)
        if status not in (200, 202):
            raise FatalError(f"notifications/initialized was answered with HTTP {status}")

    async def flow(self, index: int) -> Flow:
        """One ``tools/call``, its elicitations answered by POST, to its result."""
        flow = Flow(index, _clock())
        rid = next(self._ids)
        arguments = _decode(self.args.replace("{i}", str(index)))
        call = {
            "jsonrpc": "2.0",
            "id": rid,
            "method": "tools/call",
            "params": {"name": self.tool, "arguments": arguments},
        }
        self.requests += 1
        status, headers = await self.calls.post(_encode(call).encode())
        result: Any = None
        async for message in messages(self.calls, status, headers):
            if not isinstance(message, dict):
                raise FlowError("bad-message", repr(message)[:120])
            if "method" in message:
                if "id" in message:
                    await self.answer(message)
                    flow.rounds += 1
                continue  # a notification
            if message.get("id") == rid:
                if "error" in message:
                    error = message["error"] if isinstance(message["error"], dict) else {}
                    raise FlowError(f"jsonrpc{error.get('code')}", str(error.get("message"))[:200])
                result = message.get("result")
        if result is None:
            raise FlowError("no-result", "the call's stream ended without its result")
        if not isinstance(result, dict) or not isinstance(result.get("content"), list):
            raise FlowError("bad-result", repr(result)[:200])
        if result.get("isError"):
            raise FlowError("isError", repr(result["content"])[:200])
        return flow

    async def answer(self, request: dict[str, Any]) -> None:
        """POST the response to one server request (on the answers' connection); the server takes it with 202."""
        reply = {"jsonrpc": "2.0", "id": request["id"], "result": answer_one(request, self.answered)}
        self.requests += 1
        status, headers = await self.answers.post(_encode(reply).encode())
        body = await self.answers.read_all(headers)
        if status not in (200, 202):
            raise FlowError(f"answer-http-{status}", repr(body[:120]))

    def close(self) -> None:
        self.calls.close()
        self.answers.close()


class Driver:
    """``concurrency`` lanes (sessions) taking flows from a shared tally."""

    def __init__(self, url: Any, tool: str, args: str, concurrency: int, timeout: float) -> None:
        host, port = str(url.hostname), url.port or 80
        self.lanes = [Lane(host, port, url.netloc, url.path or "/", tool, args) for _ in range(concurrency)]
        self.timeout = timeout

    async def start(self) -> None:
        try:
            await asyncio.gather(*(asyncio.wait_for(lane.open_session(), self.timeout) for lane in self.lanes))
        except FlowError as exc:
            raise FatalError(f"could not open the session: {exc}") from None
        except TimeoutError:
            raise FatalError(f"initialize took over {self.timeout:g} s") from None

    async def phase(self, total: int, deadline: float | None) -> Tally:
        tally = Tally(total, deadline)

        async def run_lane(lane: Lane) -> None:
            while (index := tally.take()) is not None:
                try:
                    flow = await asyncio.wait_for(lane.flow(index), self.timeout)
                except FlowError as exc:
                    lane.close()  # a stream left half read cannot carry the next request
                    tally.failure(exc.kind, exc)
                    continue
                except TimeoutError as exc:
                    lane.close()
                    tally.failure("timeout", exc, f"timeout: no result within {self.timeout:g} s")
                    continue
                tally.success(flow)  # type: ignore[arg-type] # Tally reads .started and .rounds only

        await asyncio.gather(*(run_lane(lane) for lane in self.lanes))
        return tally

    @property
    def requests(self) -> int:
        return sum(lane.requests for lane in self.lanes)

    def answered(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for lane in self.lanes:
            for kind, count in lane.answered.items():
                out[kind] = out.get(kind, 0) + count
            lane.answered = {}
        return out

    def stop(self) -> None:
        for lane in self.lanes:
            lane.close()


# ---------------------------------------------------------------------------------------------------
# Running and reporting
# ---------------------------------------------------------------------------------------------------


async def measure(opts: argparse.Namespace) -> dict[str, Any]:
    url = require_loopback(opts.url)
    driver = Driver(url, opts.tool, opts.args, opts.concurrency, opts.timeout)
    report = await measured(opts, driver, lambda: driver.requests, driver.answered, "legacy_load")
    return {
        **report,
        "protocol_version": PROTOCOL_VERSION,
        "sessions": len(driver.lanes),
        "input_requests_answered": driver.answered(),
        "connections": sum(lane.calls.connects + lane.answers.connects for lane in driver.lanes),
    }


def render(report: dict[str, Any]) -> str:
    return table(
        report,
        f"{report['url']}  tool {report['tool']}, MCP {report['protocol_version']}",
        f"{report['sessions']} session(s)",
        f"{report['rounds_per_flow']:.2f}  (the call, then one POST per answer)",
        [],
    )


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = driver_options(
        "legacy_load.py",
        "Load driver for MCP 2025-11-25 servers on loopback: eliciting tool calls in a session.",
        1000,
        100,
        "lanes, each one session running flows back to back (default 1: one session)",
        "seconds per flow (default 30)",
    )
    return checked(parser, argv)


def main(argv: list[str] | None = None) -> int:
    return run_driver(parse_args(argv), measure, render, "legacy_load")


if __name__ == "__main__":
    sys.exit(main())
