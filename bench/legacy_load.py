"""Load driver for the handshake era: one MCP 2025-11-25 session per lane, and eliciting tool calls in it.

Each lane opens one session (``initialize``, then ``notifications/initialized``; not measured) and then runs
flows back to back in it. A flow is one ``tools/call`` (tool ``perform``, ``{"action": "deploy-<i>"}`` by
default) with ``Accept: application/json, text/event-stream``, answered with SSE: the server sends its
``elicitation/create`` request on that stream, the driver POSTs the JSON-RPC response (the form accepted,
every field filled as bench/load.py fills it) with the session id, the server answers it 202 and then
sends the call's result on the stream. The flow succeeds on a result with a ``content`` list and no
``isError``. So one flow is one elicitation round trip and two HTTP requests (the call, the answer).

A lane keeps two keep-alive HTTP/1.1 connections, one for the call's stream and one for the answers, in a
pool of Baton's own HTTP/1.1 client (``baton.client.http11``, as bench/abandoned_asks.py uses; uvloop when
installed): plain HTTP/1.1, so it drives Baton and the peers alike. The options, the timed phases, server
CPU time, RSS, the report's keys and its table are bench/load.py's (its functions, not a copy), so
bench/runs.py can run this driver as it runs that one. Only loopback targets are accepted. Exit status: 0
all flows succeeded, 1 some failed, 2 usage or fatal error (the server refused the connection, the session
could not be opened, or every warmup flow failed).
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

from baton.client.http11 import ConnectError, Pool, ProtocolError, Response, Url, encode_headers

PROTOCOL_VERSION = "2025-11-25"
CLIENT_INFO = {"name": "baton-bench-legacy-load", "version": "1.0"}
CAPABILITIES = {"elicitation": {"form": {}}}
BASE = [("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream")]

_encode = json.JSONEncoder(separators=(",", ":")).encode
_decode = json.loads
_clock = time.perf_counter


# ---------------------------------------------------------------------------------------------------
# HTTP/1.1: Baton's client pool
# ---------------------------------------------------------------------------------------------------


async def post(pool: Pool, url: Url, head: bytes, body: bytes) -> Response:
    """Send a POST (``head`` from ``encode_headers``); the response once its status and headers are in."""
    try:
        return await pool.send(url, "POST", head, body)
    except ConnectError as exc:
        raise FlowError("connect", str(exc)) from None
    except ProtocolError as exc:
        raise FlowError("bad-http", str(exc)) from None
    except ConnectionError as exc:
        raise FlowError("transport", f"connection closed before a response: {exc}") from None


async def body(resp: Response) -> AsyncIterator[bytes]:
    """The response body in the pieces it arrives in; read to its end, the connection goes back to the pool."""
    try:
        while piece := await resp.next_chunk():
            yield piece
    except ProtocolError as exc:
        raise FlowError("bad-http", str(exc)) from None
    except ConnectionError as exc:
        raise FlowError("transport", f"response body cut short: {exc}") from None
    resp.release()


async def read_all(resp: Response) -> bytes:
    return b"".join([piece async for piece in body(resp)])


async def sse_messages(resp: Response) -> AsyncIterator[Any]:
    """The JSON-RPC messages of an SSE body as its events complete; events without data (priming) are skipped.
    The body is always read to its end, so the connection can carry the next request."""
    buffer = b""
    async for piece in body(resp):
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


async def messages(resp: Response) -> AsyncIterator[Any]:
    """The JSON-RPC messages of a response: its SSE events, or its one JSON body."""
    ctype = resp.headers.get("content-type", "")
    if ctype.startswith("text/event-stream"):
        async for message in sse_messages(resp):
            yield message
        return
    data = await read_all(resp)
    if resp.status != 200 or not ctype.startswith("application/json"):
        raise FlowError(f"http-{resp.status}", f"{ctype}: {data[:120]!r}")
    try:
        yield _decode(data)
    except ValueError:
        raise FlowError("bad-json", repr(data[:120])) from None


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

    def __init__(self, url: Url, tool: str, args: str) -> None:
        self.url, self.tool, self.args = url, tool, args
        self.pool = Pool()  # two keep-alive connections: the call's stream, and the answers posted meanwhile
        self.head = encode_headers(BASE)
        self.opened = 0  # connections of the pools this lane has given up (after a failed flow)
        self.requests = 0
        self.answered: dict[str, int] = {}

    async def open_session(self) -> None:
        """``initialize`` and ``notifications/initialized``: the session the lane's flows run in."""
        params = {"protocolVersion": PROTOCOL_VERSION, "capabilities": CAPABILITIES, "clientInfo": CLIENT_INFO}
        rid = next(self._ids)
        init = _encode({"jsonrpc": "2.0", "id": rid, "method": "initialize", "params": params}).encode()
        resp = await post(self.pool, self.url, self.head, init)
        result = None
        async for message in messages(resp):
            if isinstance(message, dict) and message.get("id") == rid:
                result = message.get("result")
        if not isinstance(result, dict) or result.get("protocolVersion") != PROTOCOL_VERSION:
            raise FatalError(f"initialize was not answered with {PROTOCOL_VERSION}: status {resp.status}, {result!r}")
        session_id = resp.headers.get("mcp-session-id")
        if not session_id:
            raise FatalError("initialize was answered without an Mcp-Session-Id")
        self.head = encode_headers([*BASE, ("Mcp-Session-Id", session_id), ("MCP-Protocol-Version", PROTOCOL_VERSION)])
        note = _encode({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        done = await post(self.pool, self.url, self.head, note)
        await read_all(done)
        if done.status not in (200, 202):
            raise FatalError(f"notifications/initialized was answered with HTTP {done.status}")

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
        resp = await post(self.pool, self.url, self.head, _encode(call).encode())
        result: Any = None
        async for message in messages(resp):
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
        resp = await post(self.pool, self.url, self.head, _encode(reply).encode())
        data = await read_all(resp)
        if resp.status not in (200, 202):
            raise FlowError(f"answer-http-{resp.status}", repr(data[:120]))

    @property
    def connections(self) -> int:
        return self.opened + self.pool.opened

    async def close(self, *, reopen: bool = True) -> None:
        """Drop the lane's connections (a stream left half read cannot carry the next request)."""
        await self.pool.close()
        if reopen:
            self.opened += self.pool.opened
            self.pool = Pool()


class Driver:
    """``concurrency`` lanes (sessions) taking flows from a shared tally."""

    def __init__(self, url: Url, tool: str, args: str, concurrency: int, timeout: float) -> None:
        self.lanes = [Lane(url, tool, args) for _ in range(concurrency)]
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
                    await lane.close()
                    tally.failure(exc.kind, exc)
                    continue
                except TimeoutError as exc:
                    await lane.close()
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

    async def stop(self) -> None:
        for lane in self.lanes:
            await lane.close(reopen=False)


# ---------------------------------------------------------------------------------------------------
# Running and reporting
# ---------------------------------------------------------------------------------------------------


async def measure(opts: argparse.Namespace) -> dict[str, Any]:
    require_loopback(opts.url)
    driver = Driver(Url.parse(opts.url), opts.tool, opts.args, opts.concurrency, opts.timeout)
    report = await measured(opts, driver, lambda: driver.requests, driver.answered, "legacy_load")
    return {
        **report,
        "protocol_version": PROTOCOL_VERSION,
        "sessions": len(driver.lanes),
        "input_requests_answered": driver.answered(),
        "connections": sum(lane.connections for lane in driver.lanes),
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
