"""MRTR load driver: repeats one MCP 2026-07-28 multi round-trip tool call against a loopback server.

Each flow sends ``tools/call`` (tool ``perform``, arguments ``{"action": "deploy-<i>"}`` by default).
While the server answers ``resultType: "input_required"``, the driver answers every input request
(form elicitations are accepted with every field filled from ``requestedSchema``) and retries with a
new JSON-RPC id, the same params, ``inputResponses`` and the ``requestState`` echoed unchanged. The
flow succeeds on a ``complete`` result that is not ``isError``, within ``--max-rounds`` requests.

The HTTP/1.1 client is a small asyncio Protocol: one keep-alive connection per lane (``--concurrency``
lanes), and the next request is written straight from the I/O callback, so the driver's own CPU stays
small next to the server's (an HTTP client library would add a task or future per request). Responses
are parsed by httptools (uvicorn's parser, in Baton's venv; imported only when a connection is made,
since ``client_load.py`` imports this module in venvs without it) and may be JSON or ``text/event-stream``.
The driver does not import Baton, so that it drives every server alike. uvloop is used when it is
installed. With ``--server-pid`` the server's CPU time and memory are read from ``/proc`` (Linux).
The report also gives the size in bytes (UTF-8, before JSON escaping) of the ``requestState`` strings
the server returned in the measured phase: the median (lower middle), the smallest and the largest.

Only loopback targets are accepted. Exit status: 0 all flows succeeded, 1 some failed, 2 usage or
fatal error (e.g. the server refused the connection, or every warmup flow failed).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import ipaddress
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any, Protocol, cast
from urllib.parse import SplitResult, urlsplit

PROTOCOL_VERSION = "2026-07-28"
CLIENT_INFO = {"name": "baton-bench-load", "version": "1.0"}
SAMPLE_BY_FORMAT = {
    "email": "bench@example.com",
    "uri": "https://example.com/bench",
    "date": "2026-07-28",
    "date-time": "2026-07-28T12:00:00Z",
}
ERROR_SAMPLES = 5

_encode = json.JSONEncoder(separators=(",", ":")).encode
_decode = json.loads
_clock = time.perf_counter


class FatalError(Exception):
    """Stops the whole run."""


class FlowError(Exception):
    """Fails one flow; ``kind`` is the key under which the report counts it."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}" if detail else kind)
        self.kind = kind


# ---------------------------------------------------------------------------------------------------
# Answering input requests
# ---------------------------------------------------------------------------------------------------


def fill_field(prop: dict[str, Any]) -> Any:
    """A value that satisfies one primitive form field of an elicitation schema."""
    kind = prop.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        value = prop.get("minimum", 1)
        maximum = prop.get("maximum")
        if maximum is not None and value > maximum:
            value = maximum
        return int(value) if kind == "integer" else value
    if kind == "array":
        items = prop.get("items") or {}
        options = list(items.get("enum") or [])
        if not options:
            options = [opt.get("const") for opt in items.get("anyOf") or items.get("oneOf") or []]
        count = max(1, int(prop.get("minItems") or 1))
        if prop.get("maxItems") is not None:
            count = min(count, int(prop["maxItems"]))
        return options[:count]
    if prop.get("enum"):
        return prop["enum"][0]
    for key in ("oneOf", "anyOf"):
        if prop.get(key):
            return prop[key][0].get("const")
    text = SAMPLE_BY_FORMAT.get(str(prop.get("format")), "x")
    min_length = int(prop.get("minLength") or 0)
    text = text.ljust(min_length, "x")
    if prop.get("maxLength") is not None:
        text = text[: int(prop["maxLength"])]
    return text


def answer_one(request: Any, counts: dict[str, int]) -> dict[str, Any]:
    """The InputResponse for one InputRequest."""
    method = request.get("method") if isinstance(request, dict) else None
    if method != "elicitation/create":
        raise FlowError("unsupported-input-request", f"method {method!r} (only form elicitation declared)")
    params = request.get("params")
    if not isinstance(params, dict):
        raise FlowError("bad-input-request", "elicitation without params")
    mode = params.get("mode", "form")
    if mode == "url":
        counts["url-declined"] = counts.get("url-declined", 0) + 1
        return {"action": "decline"}
    schema = params.get("requestedSchema")
    props = schema.get("properties") if isinstance(schema, dict) else None
    if mode != "form" or not isinstance(props, dict):
        raise FlowError("bad-input-request", f"form elicitation without properties (mode {mode!r})")
    counts["form-accepted"] = counts.get("form-accepted", 0) + 1
    return {"action": "accept", "content": {name: fill_field(prop) for name, prop in props.items()}}


# ---------------------------------------------------------------------------------------------------
# Decoding responses
# ---------------------------------------------------------------------------------------------------


def sse_response(body: bytes, rid: int) -> Any:
    """The JSON-RPC response with id ``rid`` in an SSE body (comments and other messages skipped)."""
    text = body.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    found: Any = None
    for event in text.split("\n\n"):
        lines = [line[5:].removeprefix(" ") for line in event.split("\n") if line.startswith("data:")]
        if not lines:
            continue
        message = _decode("\n".join(lines))
        if isinstance(message, dict) and message.get("id") == rid and message.keys() & {"result", "error"}:
            found = message
    if found is None:
        raise FlowError("no-response", "the event stream ended without the response")
    return found


def decode_response(status: int, ctype: str, body: bytes, rid: int) -> dict[str, Any]:
    """The JSON-RPC ``result`` for request ``rid``; raises FlowError for anything else."""
    media = ctype.split(";", 1)[0].strip().lower()
    try:
        if media == "application/json":
            message = _decode(body)
        elif media == "text/event-stream":
            message = sse_response(body, rid)
        else:
            raise FlowError(f"http-{status}", f"content-type {ctype!r}, body {body[:160]!r}")
    except (ValueError, UnicodeDecodeError) as exc:
        raise FlowError("bad-json" if status == 200 else f"http-{status}", f"{exc}; {body[:160]!r}") from None
    if not isinstance(message, dict):
        raise FlowError("bad-json", "the response is not a JSON object")
    error = message.get("error")
    if error is not None:
        code = error.get("code") if isinstance(error, dict) else None
        text = error.get("message") if isinstance(error, dict) else error
        raise FlowError(f"jsonrpc{code}", f"HTTP {status}: {str(text)[:160]}")
    if status != 200:
        raise FlowError(f"http-{status}", repr(body[:160]))
    if message.get("id") != rid:
        raise FlowError("bad-id", f"sent id {rid}, got {message.get('id')!r}")
    result = message.get("result")
    if not isinstance(result, dict):
        raise FlowError("bad-result", "result is not an object")
    return result


# ---------------------------------------------------------------------------------------------------
# The workload: building requests and judging results
# ---------------------------------------------------------------------------------------------------


def header_value(text: str) -> str:
    """Mcp-Name value encoding: visible ASCII as is, anything else as =?base64?...?=."""
    if text.isascii() and text.isprintable() and text == text.strip():
        return text
    return "=?base64?" + base64.b64encode(text.encode()).decode("ascii") + "?="


class Flow:
    """One MRTR flow: the fixed part of its params and the answers for the next round."""

    __slots__ = ("extra", "params", "rid", "rounds", "started")

    def __init__(self, params: bytes) -> None:
        self.params = params  # b'"name":...,"arguments":...,"_meta":...'
        self.extra = b""  # b',"inputResponses":...,"requestState":...'
        self.rid = 0
        self.rounds = 0
        self.started = _clock()


class Workload:
    """Builds the requests of each flow and decides, from each result, whether the flow goes on."""

    def __init__(self, host_header: str, path: str, tool: str, args_template: str, max_rounds: int) -> None:
        meta = {
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}},
            "io.modelcontextprotocol/clientInfo": CLIENT_INFO,
        }
        lines = [
            f"POST {path} HTTP/1.1",
            f"Host: {host_header}",
            "Content-Type: application/json",
            "Accept: application/json, text/event-stream",
            f"MCP-Protocol-Version: {PROTOCOL_VERSION}",
            "Mcp-Method: tools/call",
            f"Mcp-Name: {header_value(tool)}",
            "Content-Length: ",
        ]
        self.head = "\r\n".join(lines).encode("latin-1")
        self.tool_json = _encode(tool)
        self.meta_json = _encode(meta)
        self.template = args_template
        self.per_flow_args = "{i}" in args_template
        self.fixed_params = self._params(0)
        self.max_rounds = max_rounds
        self.last_id = 0
        self.requests = 0
        self.answered: dict[str, int] = {}
        self.state_sizes: list[int] = []  # bytes (UTF-8) of each requestState the server returned

    def _params(self, i: int) -> bytes:
        args = self.template.replace("{i}", str(i))
        return f'"name":{self.tool_json},"arguments":{args},"_meta":{self.meta_json}'.encode()

    def new_flow(self, i: int) -> Flow:
        return Flow(self._params(i) if self.per_flow_args else self.fixed_params)

    def next_request(self, flow: Flow) -> bytes:
        """The whole HTTP request for the flow's next round (a fresh JSON-RPC id every time)."""
        self.last_id += 1
        self.requests += 1
        flow.rid = self.last_id
        flow.rounds += 1
        body = b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{%b%b}}' % (
            flow.rid,
            flow.params,
            flow.extra,
        )
        return b"%b%d\r\n\r\n%b" % (self.head, len(body), body)

    def finished(self, flow: Flow, status: int, ctype: str, body: bytes) -> bool:
        """True when the flow completed; False once the retry is prepared. Raises FlowError."""
        result = decode_response(status, ctype, body, flow.rid)
        kind = result.get("resultType", "complete")  # absent: a pre-2026 server's final result
        if kind == "complete":
            if result.get("isError"):
                raise FlowError("isError", _encode(result.get("content"))[:160])
            if not isinstance(result.get("content"), list):
                raise FlowError("bad-result", "CallToolResult without a content list")
            return True
        if kind != "input_required":
            raise FlowError("bad-resultType", repr(kind))
        if flow.rounds >= self.max_rounds:
            raise FlowError("too-many-rounds", f"still input_required after {flow.rounds} requests")
        requests = result.get("inputRequests")
        state = result.get("requestState")
        if requests is None and state is None:
            raise FlowError("bad-input-required", "neither inputRequests nor requestState")
        extra = b""
        if requests is not None:
            if not isinstance(requests, dict):
                raise FlowError("bad-input-required", "inputRequests is not an object")
            answers = {key: answer_one(req, self.answered) for key, req in requests.items()}
            extra = b',"inputResponses":' + _encode(answers).encode()
        if state is not None:
            if not isinstance(state, str):
                raise FlowError("bad-input-required", "requestState is not a string")
            self.state_sizes.append(len(state) if state.isascii() else len(state.encode()))
            extra += b',"requestState":' + _encode(state).encode()  # the same string, JSON-escaped
        flow.extra = extra
        return False


# ---------------------------------------------------------------------------------------------------
# Phases and lanes
# ---------------------------------------------------------------------------------------------------


@dataclass
class Tally:
    """Outcome of one phase (warmup or measured)."""

    total: int
    deadline: float | None
    next_index: int = 0
    skipped: int = 0
    ok: int = 0
    rounds: int = 0
    latencies: list[float] = field(default_factory=list)
    errors: dict[str, int] = field(default_factory=dict)
    samples: list[str] = field(default_factory=list)

    def take(self) -> int | None:
        """The number of the next flow to start, or None when the phase has no more to start."""
        if self.next_index >= self.total:
            return None
        if self.deadline is not None and time.monotonic() > self.deadline:
            self.skipped = self.total - self.next_index
            self.next_index = self.total
            return None
        self.next_index += 1
        return self.next_index - 1

    def success(self, flow: Flow) -> None:
        self.ok += 1
        self.rounds += flow.rounds
        self.latencies.append(_clock() - flow.started)

    def failure(self, kind: str, exc: BaseException, sample: str | None = None) -> None:
        self.errors[kind] = self.errors.get(kind, 0) + 1
        if len(self.samples) < ERROR_SAMPLES:
            if sample is None:
                sample = str(exc) if isinstance(exc, FlowError) else f"{kind}: {exc!r}"
            self.samples.append(sample)

    @property
    def failed(self) -> int:
        return sum(self.errors.values())


class Connection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection: httptools parses each response, which goes whole to its lane."""

    def __init__(self, lane: Lane) -> None:
        from httptools import HttpResponseParser  # not at the top: client_load.py imports this module in the mcp venv

        self.lane = lane
        self.transport: asyncio.Transport | None = None
        self.parser = HttpResponseParser(self)
        self.closed = False
        self.received = False  # a byte of the current response arrived
        self.done: list[tuple[int, str, bytes, bool]] = []  # responses completed by the bytes being parsed
        self._clear()

    def _clear(self) -> None:
        self.in_body = False
        self.status = 0
        self.ctype = ""
        self.framed = False  # a Content-Length or chunked body, which does not end at the close
        self.chunks: list[bytes] = []

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not an asyncio.Transport subclass

    def data_received(self, data: bytes) -> None:
        self.received = True
        error: Exception | None = None
        try:
            self.parser.feed_data(data)
        except Exception as exc:  # malformed HTTP (httptools' errors): fail the request, drop the connection
            error = exc
        done, self.done = self.done, []
        for response in done:
            self.lane.on_response(self, *response)
            if self.closed:
                return
        if error is not None:
            self.lane.on_broken(self, FlowError("bad-http", repr(error)))

    def eof_received(self) -> bool | None:
        return None  # let the transport close; connection_lost does the rest

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        if self.in_body and not self.framed:  # a body delimited by the close
            response = (self.status, self.ctype, b"".join(self.chunks), False)
            self._clear()
            self.lane.on_response(self, *response)
        self.lane.on_lost(self)

    # -- httptools callbacks ---------------------------------------------------------------------------
    def on_header(self, name: bytes, value: bytes) -> None:
        name = name.lower()
        if name == b"content-type":
            self.ctype = value.decode("latin-1").strip()
        elif name == b"content-length" or (
            name == b"transfer-encoding" and value.rstrip().lower().endswith(b"chunked")
        ):
            self.framed = True

    def on_headers_complete(self) -> None:
        self.status = self.parser.get_status_code()
        self.in_body = self.status >= 200  # 1xx: interim, skipped

    def on_body(self, body: bytes) -> None:
        self.chunks.append(body)

    def on_message_complete(self) -> None:
        if self.in_body:
            self.done.append((self.status, self.ctype, b"".join(self.chunks), self.parser.should_keep_alive()))
        self._clear()


class Lane:
    """A chain of flows on one keep-alive connection; each step runs inside an I/O callback."""

    def __init__(self, driver: Driver) -> None:
        self.driver = driver
        self.conn: Connection | None = None
        self.connects = 0
        self.tally: Tally | None = None
        self.idle: asyncio.Future[None] | None = None
        self.flow: Flow | None = None
        self.request: bytes | None = None  # the request in flight
        self.sent_at = 0.0
        self.resent = False
        self.timed_out = False
        self._task: asyncio.Task[None] | None = None

    async def connect(self) -> None:
        loop = asyncio.get_running_loop()
        _, conn = await loop.create_connection(lambda: Connection(self), self.driver.host, self.driver.port)
        self.conn = conn
        self.connects += 1

    async def run(self, tally: Tally) -> None:
        self.tally = tally
        self.idle = asyncio.get_running_loop().create_future()
        self._start_flow()
        await self.idle

    def close(self) -> None:
        if self.conn is not None and self.conn.transport is not None:
            self.conn.transport.close()
        self.conn = None

    # -- sending -------------------------------------------------------------------------------------
    def _start_flow(self) -> None:
        assert self.tally is not None and self.idle is not None
        index = self.tally.take()
        if index is None:
            self.flow = None
            if not self.idle.done():
                self.idle.set_result(None)
            return
        self.flow = self.driver.workload.new_flow(index)
        self._send(self.driver.workload.next_request(self.flow))

    def _send(self, request: bytes) -> None:
        self.request = request
        self.sent_at = time.monotonic()
        self.resent = self.timed_out = False
        self._write()

    def _write(self) -> None:
        conn = self.conn
        if conn is None or conn.closed or conn.transport is None:
            if self._task is None or self._task.done():  # one reconnect at a time; it sends the latest
                self._task = asyncio.ensure_future(self._reconnect_and_write())
            return
        conn.received = False
        conn.transport.write(self.request or b"")

    async def _reconnect_and_write(self) -> None:
        try:
            await self.connect()
        except OSError as exc:
            self._task = None  # so that the next request tries again
            if self.request is not None:
                self._fail(FlowError("connect", str(exc)))
            return
        if self.request is not None:
            self._write()

    # -- callbacks from the connection ---------------------------------------------------------------
    def on_response(self, conn: Connection, status: int, ctype: str, body: bytes, keep_alive: bool) -> None:
        if conn is not self.conn or self.request is None or self.flow is None or self.tally is None:
            return  # late bytes from a connection this lane has given up
        self.request = None
        if not keep_alive:
            self.close()
        flow = self.flow
        try:
            if not self.driver.workload.finished(flow, status, ctype, body):
                self._send(self.driver.workload.next_request(flow))
                return
            self.tally.success(flow)
        except FlowError as exc:
            self.tally.failure(exc.kind, exc)
        except Exception as exc:  # an unexpected response shape: count it and go on
            self.tally.failure("exception", exc)
        self._start_flow()

    def on_lost(self, conn: Connection) -> None:
        if conn is not self.conn:
            return
        self.conn = None
        if self.request is None:
            return  # an idle keep-alive connection closed: reconnect on the next request
        if self.timed_out:
            self._fail(FlowError("timeout", f"no response within {self.driver.timeout:g} s"))
        elif not conn.received and not self.resent:
            self.resent = True  # the server closed an idle connection as we wrote: send once more
            self._write()
        else:
            self._fail(FlowError("transport", "connection closed before the response was complete"))

    def on_broken(self, conn: Connection, exc: FlowError) -> None:
        if conn is self.conn:
            self.close()
            self._fail(exc)

    def check_timeout(self, now: float) -> None:
        if self.request is not None and not self.timed_out and now - self.sent_at > self.driver.timeout:
            self.timed_out = True
            if self.conn is not None and self.conn.transport is not None:
                self.conn.transport.abort()  # -> on_lost -> timeout
            else:
                self._fail(FlowError("timeout", f"no connection within {self.driver.timeout:g} s"))

    def _fail(self, exc: FlowError) -> None:
        self.request = None
        if self.tally is not None:
            self.tally.failure(exc.kind, exc)
        self._start_flow()


class Driver:
    """The lanes, the workload and the watchdog of one run."""

    def __init__(self, host: str, port: int, workload: Workload, concurrency: int, timeout: float) -> None:
        self.host, self.port = host, port
        self.workload = workload
        self.timeout = timeout
        self.lanes = [Lane(self) for _ in range(concurrency)]
        self._watchdog: asyncio.TimerHandle | None = None

    async def start(self) -> None:
        try:
            await asyncio.wait_for(asyncio.gather(*(lane.connect() for lane in self.lanes)), self.timeout)
        except (TimeoutError, OSError) as exc:
            raise FatalError(f"cannot connect to {self.host}:{self.port}: {exc}") from None
        self._tick()

    def _tick(self) -> None:
        now = time.monotonic()
        for lane in self.lanes:
            lane.check_timeout(now)
        self._watchdog = asyncio.get_running_loop().call_later(0.25, self._tick)

    async def phase(self, total: int, deadline: float | None) -> Tally:
        tally = Tally(total, deadline)
        await asyncio.gather(*(lane.run(tally) for lane in self.lanes))
        return tally

    async def stop(self) -> None:
        if self._watchdog is not None:
            self._watchdog.cancel()
        for lane in self.lanes:
            lane.close()


# ---------------------------------------------------------------------------------------------------
# Server process figures (/proc, Linux)
# ---------------------------------------------------------------------------------------------------


def _stat_fields(pid: int) -> list[bytes]:
    with open(f"/proc/{pid}/stat", "rb") as fh:
        return fh.read().rpartition(b")")[2].split()  # the fields after "(comm)"


def process_tree(roots: list[int]) -> list[int]:
    """The given PIDs and all their descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                parent = int(_stat_fields(int(entry))[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(parent, []).append(int(entry))
    seen: list[int] = []
    todo = list(roots)
    while todo:
        pid = todo.pop()
        if pid not in seen:
            seen.append(pid)
            todo.extend(children.get(pid, ()))
    return sorted(seen)


def cpu_seconds(pids: list[int]) -> float:
    """CPU time (user and system), summed over the processes (all their threads, exited ones included).

    Read from each process's CPU-time clock, in nanoseconds: `/proc/PID/stat`'s utime + stime count 10 ms ticks,
    and a run of 800 flows at c=16 uses about 165 ms, so each run read 160 or 170 and short pairs could not see a
    2 % change. The clock of another process is the one glibc's `clock_getcpuclockid(pid)` returns (Python has
    no binding for it): `(~pid << 3) | 2`, the kernel's process-wide scheduler clock. Where it cannot be read, the
    ticks."""
    seconds = 0.0
    for pid in pids:
        try:
            seconds += time.clock_gettime(_process_cpu_clock(pid))
        except OSError:
            with contextlib.suppress(OSError, IndexError, ValueError):
                fields = _stat_fields(pid)
                seconds += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return seconds


def _process_cpu_clock(pid: int) -> int:
    """The clock id of `pid`'s CPU time, all its threads (Linux's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED))."""
    return (~pid << 3) | 2


def exited(pids: list[int]) -> list[int]:
    """The processes that no longer exist."""
    return [pid for pid in pids if not os.path.exists(f"/proc/{pid}")]


def memory_mib(pids: list[int]) -> tuple[float, float]:
    """(VmRSS, VmHWM) summed over the processes, in MiB."""
    rss = hwm = 0
    for pid in pids:
        path = f"/proc/{pid}/status"
        with contextlib.suppress(OSError), open(path, encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    rss += int(line.split()[1])
                elif line.startswith("VmHWM:"):
                    hwm += int(line.split()[1])
    return rss / 1024, hwm / 1024


# ---------------------------------------------------------------------------------------------------
# Running and reporting
# ---------------------------------------------------------------------------------------------------


def require_loopback(text: str) -> SplitResult:
    """The parts of URL ``text``; raise FatalError unless it is http:// to a host whose every address is loopback."""
    url = urlsplit(text)
    if url.scheme != "http" or not url.hostname:
        raise FatalError("--url must look like http://127.0.0.1:PORT/mcp")
    try:
        infos = socket.getaddrinfo(url.hostname, url.port or 80, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise FatalError(f"cannot resolve {url.hostname!r}: {exc}") from None
    for info in infos:
        address = str(info[4][0]).split("%", 1)[0]
        if not ipaddress.ip_address(address).is_loopback:
            raise FatalError(f"refusing {url.hostname} ({address}): only loopback targets are allowed")
    return url


def nearest_rank(ordered: list[float], pct: float) -> float:
    if not ordered:
        return 0.0
    rank = max(1, -(-int(len(ordered) * pct) // 100))
    return ordered[min(rank, len(ordered)) - 1]


def latency_ms(ordered: list[float]) -> dict[str, float]:
    """p50, p90, p99 and max of the sorted latencies (seconds), in milliseconds."""
    ms = 1000.0
    last = ordered[-1] * ms if ordered else 0.0
    return {**{f"p{pct}": round(nearest_rank(ordered, pct) * ms, 3) for pct in (50, 90, 99)}, "max": round(last, 3)}


class Phases(Protocol):
    """What ``measured`` drives: this module's Driver, or legacy_load.py's."""

    async def start(self) -> None: ...

    async def phase(self, total: int, deadline: float | None) -> Tally: ...

    async def stop(self) -> None: ...


async def measured(
    opts: argparse.Namespace, driver: Phases, requests: Callable[[], int], reset: Callable[[], object], prog: str
) -> dict[str, Any]:
    """Start ``driver``, run the warmup, ``reset()`` the driver's counts, then time the measured phase: the report's
    keys that load.py and legacy_load.py share (``requests()`` counts the HTTP requests sent so far)."""
    pids = process_tree(opts.server_pid) if opts.server_pid else []
    rss_before, _ = memory_mib(pids)
    try:
        await driver.start()
        if opts.warmup:
            warm = await driver.phase(opts.warmup, None)
            if not warm.ok:
                sample = warm.samples[0] if warm.samples else ""
                raise FatalError(f"all {opts.warmup} warmup flows failed: {warm.errors}; {sample}")
            if warm.failed:
                print(
                    f"{prog}: warning: {warm.failed}/{opts.warmup} warmup flows failed {warm.errors}",
                    file=sys.stderr,
                )
        reset()
        requests0 = requests()
        cpu0 = cpu_seconds(pids)
        driver0 = time.process_time()
        t0 = _clock()
        tally = await driver.phase(opts.n, time.monotonic() + opts.time_limit)
        wall = _clock() - t0
        driver_cpu = time.process_time() - driver0
        server_cpu = cpu_seconds(pids) - cpu0
        sent = requests() - requests0
    finally:
        await driver.stop()
    rss_after, hwm = memory_mib(pids)
    gone = exited(pids)
    measured = bool(pids) and not gone  # a process that exited took its CPU time with it
    if gone:
        print(
            f"{prog}: warning: server process(es) {gone} exited during the run; no server figures",
            file=sys.stderr,
        )
    if tally.skipped:
        tally.errors["time-limit"] = tally.skipped
    attempted = max(1, opts.n - tally.skipped)
    ordered = sorted(tally.latencies)
    ms = 1000.0
    return {
        "url": opts.url,
        "tool": opts.tool,
        "n": opts.n,
        "concurrency": opts.concurrency,
        "warmup": opts.warmup,
        "loop": opts.loop_name,
        "flows_ok": tally.ok,
        "flows_failed": tally.failed,
        "errors": dict(sorted(tally.errors.items())),
        "error_samples": tally.samples,
        "rounds_per_flow": round(tally.rounds / tally.ok, 3) if tally.ok else 0.0,
        "requests": sent,
        "wall_s": round(wall, 4),
        "flows_per_s": round(tally.ok / wall, 1) if wall > 0 else 0.0,
        "requests_per_s": round(sent / wall, 1) if wall > 0 else 0.0,
        "latency_ms": {**latency_ms(ordered), "mean": round(sum(ordered) / len(ordered) * ms if ordered else 0.0, 3)},
        "server_pids": pids,
        "server_cpu_ms_per_flow": round(server_cpu / attempted * ms, 4) if measured else None,
        "server_cpu_cores": round(server_cpu / wall, 3) if measured and wall > 0 else None,
        "server_rss_mib_before": round(rss_before, 1) if measured else None,
        "server_rss_mib_after": round(rss_after, 1) if measured else None,
        "server_hwm_mib": round(hwm, 1) if measured else None,
        "driver_cpu_ms_per_flow": round(driver_cpu / attempted * ms, 4),
        "driver_cpu_cores": round(driver_cpu / wall, 3) if wall > 0 else None,
    }


async def measure(opts: argparse.Namespace) -> dict[str, Any]:
    url = require_loopback(opts.url)
    host, port = str(url.hostname), url.port or 80
    workload = Workload(url.netloc, url.path or "/", opts.tool, opts.args, opts.max_rounds)
    driver = Driver(host, port, workload, opts.concurrency, opts.timeout)

    def reset() -> None:
        workload.answered = {}
        workload.state_sizes = []

    report = await measured(opts, driver, lambda: workload.requests, reset, "load")
    sizes = sorted(workload.state_sizes)
    return {
        **report,
        "input_requests_answered": workload.answered,
        "request_state_bytes": (
            {"median": sizes[(len(sizes) - 1) // 2], "min": sizes[0], "max": sizes[-1], "count": len(sizes)}
            if sizes
            else None
        ),
        "connections": sum(lane.connects for lane in driver.lanes),
    }


def render(report: dict[str, Any]) -> str:
    state = report["request_state_bytes"]
    return table(
        report,
        f"{report['url']}  tool {report['tool']}",
        f"concurrency {report['concurrency']}",
        f"{report['rounds_per_flow']:.2f}",
        [
            (
                "requestState bytes",
                f"median {state['median']}, min {state['min']}, max {state['max']} ({state['count']} seen)"
                if state
                else "none seen",
            )
        ],
    )


def table(report: dict[str, Any], target: str, lanes: str, per_flow: str, more: list[tuple[str, str]]) -> str:
    """The report of load.py or legacy_load.py as aligned rows: ``target``, ``lanes`` (the run's lanes, after its
    n) and ``per_flow`` (the requests per flow) as given, ``more`` rows before the connections opened."""
    lat = report["latency_ms"]
    rows: list[tuple[str, str]] = [
        ("target", target),
        ("run", f"n {report['n']}, {lanes}, warmup {report['warmup']}, loop {report['loop']}"),
        ("flows ok / failed", f"{report['flows_ok']} / {report['flows_failed']}"),
        ("requests per flow", per_flow),
        ("wall time", f"{report['wall_s']:.2f} s"),
        ("flows/s", f"{report['flows_per_s']:.1f}  ({report['requests_per_s']:.1f} requests/s)"),
        (
            "latency per flow",
            f"p50 {lat['p50']:.2f}  p90 {lat['p90']:.2f}  p99 {lat['p99']:.2f}  "
            f"max {lat['max']:.2f}  mean {lat['mean']:.2f} ms",
        ),
    ]
    if report["server_cpu_ms_per_flow"] is not None:
        rows.append(
            (
                "server CPU per flow",
                f"{report['server_cpu_ms_per_flow']:.3f} ms  "
                f"({report['server_cpu_cores']:.2f} cores busy, "
                f"pids {report['server_pids']})",
            )
        )
        rows.append(
            (
                "server RSS",
                f"{report['server_rss_mib_before']:.1f} -> "
                f"{report['server_rss_mib_after']:.1f} MiB  "
                f"(peak {report['server_hwm_mib']:.1f} MiB)",
            )
        )
    rows.append(
        (
            "driver CPU per flow",
            f"{report['driver_cpu_ms_per_flow']:.3f} ms  ({report['driver_cpu_cores']:.2f} cores busy)",
        )
    )
    rows.append(("input requests answered", str(report["input_requests_answered"] or "none")))
    rows.extend(more)
    rows.append(("connections opened", str(report["connections"])))
    return aligned(rows, report)


def aligned(rows: list[tuple[str, str]], report: dict[str, Any]) -> str:
    """The rows, then the report's error counts and samples, as two aligned columns."""
    rows = [
        *rows,
        *((f"error {kind}", str(count)) for kind, count in report["errors"].items()),
        *(("  sample", text) for text in report["error_samples"]),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name:<{width}}  {value}" for name, value in rows)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = driver_options(
        "load.py",
        "MRTR load driver for MCP 2026-07-28 servers on loopback.",
        2000,
        200,
        "lanes, each a keep-alive connection running flows back to back (default 1)",
        "seconds per request (default 30)",
    )
    parser.add_argument("--max-rounds", type=int, default=10, help="requests allowed per flow (default 10)")
    opts = checked(parser, argv)
    if opts.max_rounds < 1:
        parser.error("--max-rounds must be >= 1")
    return opts


def driver_options(
    prog: str, description: str, n: int, warmup: int, lanes: str, timeout: str
) -> argparse.ArgumentParser:
    """The options of load.py and legacy_load.py: ``n`` and ``warmup`` the defaults of ``-n`` and ``--warmup``,
    ``lanes`` the help of ``--concurrency``, ``timeout`` that of ``--timeout``."""
    parser = argparse.ArgumentParser(prog=prog, description=description)
    parser.add_argument("--url", required=True, help="the MCP endpoint, e.g. http://127.0.0.1:8800/mcp")
    parser.add_argument("--tool", default="perform", help="tool to call (default perform)")
    parser.add_argument(
        "--args",
        default='{"action":"deploy-{i}"}',
        help="tool arguments as a JSON object; {i} becomes the flow number",
    )
    parser.add_argument("-n", "--n", type=int, default=n, help=f"measured flows (default {n})")
    parser.add_argument("-c", "--concurrency", type=int, default=1, help=lanes)
    parser.add_argument("--warmup", type=int, default=warmup, help=f"unmeasured flows first (default {warmup})")
    parser.add_argument(
        "--server-pid",
        type=lambda text: [int(p) for p in text.split(",") if p.strip()],
        default=[],
        help="server PIDs, comma-separated; their descendants are included",
    )
    add_limits(
        parser,
        timeout,
        ("auto", "asyncio", "uvloop"),
        "event loop: uvloop when installed (auto), or the stdlib one",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object instead of a table")
    return parser


def checked(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """The options of ``driver_options``' parser, ``--args`` a JSON object, ``--n`` and ``--concurrency`` >= 1."""
    opts = parser.parse_args(argv)
    try:
        arguments = json.loads(opts.args.replace("{i}", "0"))
    except ValueError as exc:
        parser.error(f"--args is not JSON: {exc}")
    if not isinstance(arguments, dict):
        parser.error("--args must be a JSON object")
    if opts.n < 1 or opts.concurrency < 1 or opts.warmup < 0:
        parser.error("--n and --concurrency must be >= 1 and --warmup >= 0")
    return opts


def add_limits(parser: argparse.ArgumentParser, timeout: str, loops: tuple[str, ...], loop: str) -> None:
    """Add ``--timeout``, ``--time-limit`` and ``--loop`` (``loops``, the first the default)."""
    parser.add_argument("--timeout", type=float, default=30.0, help=timeout)
    parser.add_argument(
        "--time-limit",
        type=float,
        default=300.0,
        help="seconds after which the measured phase starts no new flow (default 300)",
    )
    parser.add_argument("--loop", choices=loops, default=loops[0], help=loop)


def event_loop_runner(choice: str, where: str = "") -> tuple[Callable[..., Any], str]:
    """``asyncio.run`` or ``uvloop.run`` for ``--loop`` (auto: uvloop when installed), and its name."""
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError:
            if choice == "uvloop":
                raise FatalError(f"--loop uvloop: uvloop is not installed{where}") from None
        else:
            return uvloop.run, "uvloop"
    return asyncio.run, "asyncio"


def main(argv: list[str] | None = None) -> int:
    return run_driver(parse_args(argv), measure, render, "load")


def run_driver(
    opts: argparse.Namespace,
    measure: Callable[[argparse.Namespace], Coroutine[Any, Any, dict[str, Any]]],
    render: Callable[[dict[str, Any]], str],
    prog: str,
) -> int:
    """Run ``measure`` on the chosen event loop and print its report: the exit status of load.py and legacy_load.py."""
    try:
        runner, opts.loop_name = event_loop_runner(opts.loop)
        report: dict[str, Any] = runner(measure(opts))
    except FatalError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(report) if opts.json else render(report))
    return 1 if report["flows_failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
