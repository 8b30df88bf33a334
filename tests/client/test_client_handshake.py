"""`baton.client.Client` speaking 2025-11-25: the era probe, the session, and the server's own requests.

Three kinds of server, all real processes or real loopback sockets:
- a FastMCP server of `mcp==1.30.0` (the last 1.x SDK, a genuine 2025-11-25 server) in its own venv,
  over Streamable HTTP and over stdio: forms accepted and declined, defaults filled in, progress,
  sampling on the request's stream and on the standalone GET stream, roots;
- a scripted HTTP stub (below) that records every request with its HTTP method, for the wire rules
  the peer cannot show: the probe's verdicts, headers and `_meta`, SSE resumption after `retry`,
  404 and re-initialize, -32042, server `ping` and unknown methods, cancellation, DELETE;
- Baton's own server (`baton serve examples/everything.py`) with the client pinned to 2025-11-25,
  over HTTP and stdio.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import threading
import time
import warnings
from collections.abc import Awaitable, Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest
import uvicorn
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv, peer_env
from support.processes import PortOpen, free_port, start
from support.serve import RunningServer

from baton import McpError
from baton.client import Accepted, Answer, Client, ClientError, Declined, Question

pytestmark = [pytest.mark.timeout(2 * INSTALL_TIMEOUT_S), pytest.mark.process]

T = TypeVar("T")
HANDSHAKE = "2025-11-25"
MODERN = "2026-07-28"
EVERYTHING = str(ROOT / "examples" / "everything.py")
FLOW_TIMEOUT_S = 30.0


def run(coro: Coroutine[Any, Any, T], timeout: float = FLOW_TIMEOUT_S) -> T:
    """Run one coroutine in a fresh event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def text_of(result: dict[str, Any]) -> str:
    return str(result["content"][0]["text"])


@dataclass
class Host:
    """Handlers for a Client that record what they were asked and answer as told."""

    form: dict[str, Any] | None = field(default_factory=lambda: {"nights": 2, "confirm": True})
    questions: list[Question] = field(default_factory=list)
    sampled: list[dict[str, Any]] = field(default_factory=list)

    async def on_form(self, question: Question) -> Answer:
        self.questions.append(question)
        return Declined() if self.form is None else Accepted(self.form)

    async def on_sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        self.sampled.append(params)
        return {"role": "assistant", "content": {"type": "text", "text": "short"}, "model": "test-model"}

    async def on_roots(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"roots": [{"uri": "file:///srv/project", "name": "project"}]}

    def client(self, target: str | list[str], **options: Any) -> Client:
        options.setdefault("protocol", "auto")
        options.setdefault("deadline_s", FLOW_TIMEOUT_S)
        with warnings.catch_warnings():  # sampling and roots are deprecated in 2026-07-28 (once per process)
            warnings.simplefilter("ignore", DeprecationWarning)
            return Client(target, on_form=self.on_form, on_sampling=self.on_sampling, on_roots=self.on_roots, **options)


# -- the mcp 1.30.0 FastMCP peer --------------------------------------------------------------------------

PEER = """
import argparse, json
from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent
from pydantic import BaseModel, Field


class Booking(BaseModel):
    nights: int = Field(description="How many nights?")
    confirm: bool = Field(description="Book it?")


SURVEY = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "default": "John Doe"},
        "age": {"type": "integer", "default": 30},
        "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
        "verified": {"type": "boolean", "default": True},
    },
    "required": [],
}
mcp = FastMCP("legacy-peer", log_level="WARNING")


@mcp.tool()
async def book(city: str, ctx: Context) -> str:
    answer = await ctx.elicit(f"Book a stay in {city}?", Booking)
    if answer.action == "accept":
        return f"booked: {city} for {answer.data.nights} nights" if answer.data.confirm else f"no: {city}"
    return f"{answer.action}: {city}"


@mcp.tool()
async def survey(ctx: Context) -> str:
    result = await ctx.session.elicit_form("Check these values", SURVEY, related_request_id=ctx.request_id)
    return json.dumps({"action": result.action, "content": result.content}, sort_keys=True)


@mcp.tool()
async def slow(steps: int, ctx: Context) -> str:
    for i in range(1, steps + 1):
        await ctx.report_progress(i, steps, f"step {i}")
    return f"slow: {steps}"


@mcp.tool()
async def summarize(text: str, ctx: Context) -> str:
    # No related_request_id, as the SDK's docs write it: over HTTP it travels on the standalone GET stream.
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    result = await ctx.session.create_message(messages=[message], max_tokens=50)
    return f"summary: {result.content.text}"


@mcp.tool()
async def summarize_here(text: str, ctx: Context) -> str:
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    result = await ctx.session.create_message(messages=[message], max_tokens=50, related_request_id=ctx.request_id)
    return f"summary: {result.content.text}"


@mcp.tool()
async def where(ctx: Context) -> str:
    roots = await ctx.session.list_roots()
    return "roots: " + ", ".join(str(r.uri) for r in roots.roots)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int)
    parser.add_argument("--stdio", action="store_true")
    opts = parser.parse_args()
    if opts.stdio:
        mcp.run("stdio")
    else:
        mcp.settings.host, mcp.settings.port = "127.0.0.1", opts.port
        mcp.run("streamable-http")
"""


@pytest.fixture(scope="module")
def peer_command(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    """The command that starts the FastMCP peer (add `--stdio` or `--port N`)."""
    script = tmp_path_factory.mktemp("legacy-peer") / "legacy_peer.py"
    script.write_text(PEER)
    return [str(ensure_venv("mcp1")), str(script)]


@pytest.fixture(scope="module")
def peer_url(peer_command: list[str], tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    log = tmp_path_factory.mktemp("legacy-peer-log") / "peer.log"
    with start([*peer_command, "--port", str(port)], env=peer_env(), log=log, ready=PortOpen(port), timeout=60.0):
        yield f"http://127.0.0.1:{port}/mcp"


def peer_flows(target: str | list[str], env: dict[str, str] | None = None) -> None:
    """Every flow against the peer with one client: the probe settles on 2025-11-25 and each ask is answered."""
    host = Host()
    declining = Host(form=None)
    progress: list[dict[str, Any]] = []

    async def on_progress(note: dict[str, Any]) -> None:
        progress.append(note)

    async def flow() -> None:
        options = {} if env is None else {"env": env}
        async with host.client(target, name="legacy-test", version="9.9.9", **options) as client:
            assert [t["name"] for t in await client.list_tools()][:2] == ["book", "survey"]
            assert client.era == HANDSHAKE
            assert client.initialize_result is not None
            assert client.initialize_result["serverInfo"]["name"] == "legacy-peer"
            assert client.server_name == "legacy-peer"
            assert text_of(await client.call_tool("book", {"city": "Oslo"})) == "booked: Oslo for 2 nights"
            # Accepted with nothing: every field goes back with the default the server offered (SEP-1034).
            host.form = {}
            survey = json.loads(text_of(await client.call_tool("survey")))
            assert survey == {
                "action": "accept",
                "content": {"age": 30, "name": "John Doe", "status": "active", "verified": True},
            }
            slow = await client.call_tool("slow", {"steps": 3}, progress=on_progress)
            assert text_of(slow) == "slow: 3"
            assert text_of(await client.call_tool("summarize", {"text": "a long text"})) == "summary: short"
            assert text_of(await client.call_tool("summarize_here", {"text": "again"})) == "summary: short"
            assert text_of(await client.call_tool("where")) == "roots: file:///srv/project"
            with pytest.raises(ClientError, match="step mode is 2026-07-28 only"):
                await client.start("tools/call", {"name": "book", "arguments": {"city": "x"}})
        async with declining.client(target, **options) as client:
            assert text_of(await client.call_tool("book", {"city": "Rome"})) == "decline: Rome"

    run(flow())
    (first, _) = host.questions
    assert first.mode == "form" and first.message == "Book a stay in Oslo?"
    assert first.server == "legacy-peer"
    assert first.form is not None and [f.name for f in first.form.fields] == ["nights", "confirm"]
    assert [q.message for q in declining.questions] == ["Book a stay in Rome?"]
    values = [n["params"]["progress"] for n in progress if n.get("method") == "notifications/progress"]
    assert values == [1, 2, 3]
    assert [p["messages"][0]["content"]["text"] for p in host.sampled] == ["a long text", "again"]


def test_fastmcp1_peer_over_http(peer_url: str) -> None:
    peer_flows(peer_url)


def test_fastmcp1_peer_over_stdio(peer_command: list[str]) -> None:
    peer_flows([*peer_command, "--stdio"], env=peer_env())


# -- a scripted HTTP stub ---------------------------------------------------------------------------------


@dataclass
class Hit:
    """One HTTP request the stub received."""

    verb: str
    headers: dict[str, str]  # lowercase names
    body: dict[str, Any]
    at: float

    @property
    def method(self) -> str | None:
        method = self.body.get("method")
        return method if isinstance(method, str) else None

    @property
    def params(self) -> dict[str, Any]:
        params = self.body.get("params")
        return params if isinstance(params, dict) else {}


Piece = bytes | float | threading.Event
"""A piece of a body: bytes sent at once, a pause in seconds, or an event the stream waits for (up to 10 s)."""


@dataclass
class Reply:
    """What the stub sends: a status, headers, and body pieces."""

    status: int
    headers: dict[str, str] = field(default_factory=dict)
    pieces: list[Piece] = field(default_factory=list)


Route = Callable[[Hit], Reply | Awaitable[Reply]]
SESSION = "sess-1"


def json_reply(body: dict[str, Any], status: int = 200, session: str | None = None) -> Reply:
    headers = {"content-type": "application/json"}
    if session is not None:
        headers["mcp-session-id"] = session
    return Reply(status, headers, [json.dumps(body).encode()])


def result(hit: Hit, value: dict[str, Any]) -> Reply:
    return json_reply({"jsonrpc": "2.0", "id": hit.body.get("id"), "result": value})


def error(hit: Hit, code: int, message: str = "error", status: int = 200, data: Any = None) -> Reply:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return json_reply({"jsonrpc": "2.0", "id": hit.body.get("id"), "error": err}, status)


def event(message: dict[str, Any] | None = None, *, eid: str | None = None, retry: int | None = None) -> bytes:
    lines = [f"id: {eid}"] if eid is not None else []
    if retry is not None:
        lines.append(f"retry: {retry}")
    lines.append("data: " + (json.dumps(message) if message is not None else ""))
    return ("\n".join(lines) + "\n\n").encode()


def sse(*pieces: Piece) -> Reply:
    return Reply(200, {"content-type": "text/event-stream"}, list(pieces))


def tools_result(hit: Hit) -> Reply:
    return result(hit, {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]})


def done(hit: Hit, text: str = "ok") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": hit.body.get("id"), "result": {"content": [{"type": "text", "text": text}]}}


class Stub:
    """A 2025-11-25 HTTP server scripted per test: `routes` maps a JSON-RPC method (or `GET`, `DELETE`,
    `answer` for a POSTed response, `note` for a notification) to a function of the `Hit`."""

    def __init__(self) -> None:
        self.hits: list[Hit] = []
        self.sessions = 0
        self.routes: dict[str, Route] = {
            "server/discover": lambda hit: error(hit, -32000, "Bad Request: Missing session ID", 400),
            "initialize": self.initialize,
            "note": lambda hit: Reply(202),
            "answer": lambda hit: Reply(202),
            "GET": lambda hit: Reply(405),
            "DELETE": lambda hit: Reply(200),
            "tools/list": tools_result,
        }
        self.url = ""
        self.closing = threading.Event()  # a piece that holds a stream open until the stub stops
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    def initialize(self, hit: Hit) -> Reply:
        self.sessions += 1
        body = {
            "jsonrpc": "2.0",
            "id": hit.body.get("id"),
            "result": {
                "protocolVersion": HANDSHAKE,
                "capabilities": {},
                "serverInfo": {"name": "stub", "version": "1"},
            },
        }
        return json_reply(body, session=f"sess-{self.sessions}")

    def seen(self, key: str) -> list[Hit]:
        return [h for h in self.hits if self._key(h) == key]

    @staticmethod
    def _key(hit: Hit) -> str:
        if hit.verb != "POST":
            return hit.verb
        if hit.method is None:
            return "answer"
        return hit.method if "id" in hit.body else "note"

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        body = json.loads(raw) if raw else {}
        hit = Hit(scope["method"], headers, body if isinstance(body, dict) else {}, time.monotonic())
        self.hits.append(hit)
        route = self.routes.get(self._key(hit))
        reply = route(hit) if route is not None else error(hit, -32601, "Method not found")
        if inspect.isawaitable(reply):
            reply = await reply
        assert isinstance(reply, Reply)
        head = [(k.encode(), v.encode()) for k, v in reply.headers.items()]
        await send({"type": "http.response.start", "status": reply.status, "headers": head})
        for piece in reply.pieces:
            if isinstance(piece, float):
                await asyncio.sleep(piece)
            elif isinstance(piece, threading.Event):
                await asyncio.to_thread(piece.wait, 10)
            else:
                await send({"type": "http.response.body", "body": piece, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    def start(self) -> Stub:
        port = free_port()
        config = uvicorn.Config(self, host="127.0.0.1", port=port, lifespan="off", log_level="warning")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=f"legacy-stub-{port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            assert time.monotonic() < deadline and self._thread.is_alive(), "the stub did not start"
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}/mcp"
        return self

    def stop(self) -> None:
        self.closing.set()
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)


@pytest.fixture
def stub() -> Iterator[Stub]:
    server = Stub().start()
    yield server
    server.stop()


async def listed(client: Client) -> list[str]:
    return [t["name"] for t in await client.list_tools()]


# -- the probe --------------------------------------------------------------------------------------------

DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": [MODERN, HANDSHAKE],
    "capabilities": {"tools": {}},
    "ttlMs": 0,
    "cacheScope": "public",
}


@pytest.mark.parametrize(
    ("answer", "era"),
    [
        (lambda hit: error(hit, -32000, "Bad Request: Missing session ID", 400), HANDSHAKE),
        (lambda hit: result(hit, {}), HANDSHAKE),  # 200 with a result that is no DiscoverResult
        (lambda hit: error(hit, -32601, "Method not found"), HANDSHAKE),
        (lambda hit: error(hit, -32602, "Invalid request parameters"), HANDSHAKE),
        (lambda hit: Reply(400, {"content-type": "text/plain"}, [b"Bad Request"]), HANDSHAKE),
        (lambda hit: error(hit, -32022, "Unsupported", 400, {"supported": [HANDSHAKE]}), HANDSHAKE),
        (lambda hit: result(hit, {**DISCOVERED, "supportedVersions": ["2027-01-01"]}), HANDSHAKE),
        (lambda hit: result(hit, DISCOVERED), MODERN),
        (lambda hit: error(hit, -32020, "Header mismatch", 400), MODERN),
        (lambda hit: error(hit, -32022, "Unsupported", 400, {"supported": [MODERN]}), MODERN),
    ],
)
def test_probe_verdict(stub: Stub, answer: Route, era: str) -> None:
    stub.routes["server/discover"] = answer
    stub.routes["tools/list"] = lambda hit: result(hit, {"resultType": "complete", "tools": [], "ttlMs": 0})

    async def flow() -> str | None:
        async with Client(stub.url, protocol="auto") as client:
            assert client.era is None
            await client.list_tools()
            await client.list_tools()
            return client.era

    assert run(flow()) == era
    assert len(stub.seen("server/discover")) == 1  # the verdict is kept for the client's life
    assert len(stub.seen("initialize")) == (1 if era == HANDSHAKE else 0)
    assert len(stub.seen("tools/list")) == 2


def test_session_wire(stub: Stub) -> None:
    """After a 400 -32000 probe: initialize without session or version header, then both on everything else;
    no 2026 envelope key in `_meta`, no 2026 header, and the session deleted on close."""
    stub.routes["tools/call"] = lambda hit: json_reply(done(hit))

    async def flow() -> None:
        async with Client(stub.url, protocol="auto", name="wire-test", version="1.2.3") as client:
            await client.list_tools()
            meta = {"io.modelcontextprotocol/protocolVersion": MODERN, "trace": "x"}
            await client.request("tools/call", {"name": "t", "arguments": {}, "_meta": meta})

    run(flow())
    probe, init, initialized, get, listing, call, delete = stub.hits
    assert probe.method == "server/discover" and probe.headers["mcp-protocol-version"] == MODERN
    assert init.method == "initialize"
    assert init.params == {
        "protocolVersion": HANDSHAKE,
        "capabilities": {},
        "clientInfo": {"name": "wire-test", "version": "1.2.3"},
    }
    assert "mcp-protocol-version" not in init.headers and "mcp-session-id" not in init.headers
    assert initialized.body == {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {}}
    assert (get.verb, get.headers["accept"], get.headers.get("last-event-id")) == ("GET", "text/event-stream", None)
    for hit in (initialized, get, listing, call, delete):
        assert hit.headers["mcp-session-id"] == "sess-1"
        assert hit.headers["mcp-protocol-version"] == HANDSHAKE
    for hit in (init, initialized, listing, call):
        assert hit.headers["accept"] == "application/json, text/event-stream"
        assert hit.headers["content-type"] == "application/json"
        assert not any(name.startswith(("mcp-method", "mcp-name", "mcp-param-")) for name in hit.headers)
        assert not any(k.startswith("io.modelcontextprotocol/") for k in hit.params.get("_meta", {}))
    assert call.params == {"name": "t", "arguments": {}, "_meta": {"trace": "x"}}
    assert delete.verb == "DELETE"


@pytest.mark.parametrize(
    ("handlers", "declared"),
    [
        ({}, {}),
        ({"on_form": True}, {"elicitation": {"form": {}}}),
        ({"on_url": True}, {"elicitation": {"url": {}}}),
        (
            {"on_form": True, "on_url": True, "on_sampling": True, "on_roots": True},
            {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
        ),
    ],
)
def test_initialize_declares_the_handlers(stub: Stub, handlers: dict[str, bool], declared: dict[str, Any]) -> None:
    async def anything(_: Any) -> Any:
        raise AssertionError("not asked")

    async def flow() -> None:
        options = dict.fromkeys(handlers, anything)
        async with Client(stub.url, protocol=HANDSHAKE, **options) as client:
            await client.list_tools()

    run(flow())
    assert not stub.seen("server/discover")  # pinned: no probe
    (init,) = stub.seen("initialize")
    assert init.params["capabilities"] == declared


def test_neither_era_is_a_clear_error(stub: Stub) -> None:
    stub.routes["initialize"] = lambda hit: error(hit, -32601, "Method not found")

    async def flow() -> None:
        async with Client(stub.url, protocol="auto") as client:
            await client.list_tools()

    with pytest.raises(ClientError, match=r"neither 2026-07-28 nor 2025-11-25.*-32000.*-32601"):
        run(flow())


def test_other_initialize_version_is_refused_and_the_session_deleted(stub: Stub) -> None:
    def older(hit: Hit) -> Reply:
        body = {
            "jsonrpc": "2.0",
            "id": hit.body["id"],
            "result": {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "serverInfo": {"name": "old", "version": "1"},
            },
        }
        return json_reply(body, session="old-1")

    stub.routes["initialize"] = older

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.list_tools()

    with pytest.raises(ClientError, match=r"'2025-06-18'.*only 2025-11-25"):
        run(flow())
    assert [h.headers.get("mcp-session-id") for h in stub.seen("DELETE")] == ["old-1"]
    assert not stub.seen("note") and not stub.seen("tools/list")


# -- SSE: resumption, server requests on the stream -------------------------------------------------------


def test_stream_resumed_after_retry_with_last_event_id(stub: Stub) -> None:
    """The stream closes after a priming event and a progress note; the client waits `retry`, then GETs
    with `Last-Event-ID`, and reads on there; it never GETs earlier."""
    closed: list[float] = []
    pending: list[Hit] = []

    async def call(hit: Hit) -> Reply:
        pending.append(hit)
        token = hit.params["_meta"]["progressToken"]
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": 1}}
        reply = sse(event(eid="s1:0", retry=300), event(note, eid="s1:1"))
        closed.append(time.monotonic())  # the stub sends it at once; the close follows within milliseconds
        return reply

    def resume(hit: Hit) -> Reply:
        if "last-event-id" not in hit.headers:
            return Reply(405)  # no standalone stream here
        note = {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": "x", "progress": 2}}
        return sse(event(eid="s1:2"), event(note, eid="s1:3"), event(done(pending[0], "resumed"), eid="s1:4"))

    stub.routes["tools/call"] = call
    stub.routes["GET"] = resume
    notes: list[dict[str, Any]] = []

    async def on_progress(note: dict[str, Any]) -> None:
        notes.append(note)

    async def flow() -> dict[str, Any]:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            return await client.call_tool("t", progress=on_progress)

    assert text_of(run(flow())) == "resumed"
    standalone, resumed = stub.seen("GET")
    assert "last-event-id" not in standalone.headers
    assert resumed.headers["last-event-id"] == "s1:1"
    assert resumed.headers["mcp-session-id"] == "sess-1"
    assert resumed.at - closed[0] >= 0.29
    assert [n["params"]["progress"] for n in notes] == [1, 2]


def test_stream_that_cannot_be_resumed_fails(stub: Stub) -> None:
    stub.routes["tools/call"] = lambda hit: sse(event(eid="e1", retry=10))  # GET stays 405

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.call_tool("t")

    with pytest.raises(ConnectionError, match="did not resume"):
        run(flow())
    assert stub.seen("GET")[-1].headers["last-event-id"] == "e1"


def test_server_requests_on_the_stream_are_answered_by_post(stub: Stub) -> None:
    """An elicitation (its defaults filled in), a ping and an unknown method arrive on the call's stream; each
    is answered by a POST in the session; an elicitation/complete for an unknown id is ignored."""
    answers: dict[Any, dict[str, Any]] = {}
    all_answered = threading.Event()

    def answer(hit: Hit) -> Reply:
        answers[hit.body["id"]] = hit.body
        if len(answers) == 3:
            all_answered.set()
        return Reply(202)

    schema = {
        "type": "object",
        "properties": {"confirm": {"type": "boolean"}, "room": {"type": "string", "default": "double"}},
        "required": ["confirm"],
    }
    asks = [
        {
            "jsonrpc": "2.0",
            "id": "e1",
            "method": "elicitation/create",
            "params": {"message": "Sure?", "requestedSchema": schema},
        },
        {"jsonrpc": "2.0", "id": "p1", "method": "ping"},
        {"jsonrpc": "2.0", "id": "x1", "method": "tasks/list", "params": {}},
        {"jsonrpc": "2.0", "method": "notifications/elicitation/complete", "params": {"elicitationId": "nobody"}},
    ]
    stub.routes["tools/call"] = lambda hit: sse(*[event(a) for a in asks], all_answered, event(done(hit, "answered")))
    stub.routes["answer"] = answer
    host = Host(form={"confirm": True})

    async def flow() -> dict[str, Any]:
        async with host.client(stub.url, protocol=HANDSHAKE) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "answered"
    accepted = {"action": "accept", "content": {"confirm": True, "room": "double"}}
    assert answers["e1"] == {"jsonrpc": "2.0", "id": "e1", "result": accepted}
    assert answers["p1"] == {"jsonrpc": "2.0", "id": "p1", "result": {}}
    assert answers["x1"]["error"]["code"] == -32601
    for hit in stub.seen("answer"):
        assert hit.headers["mcp-session-id"] == "sess-1" and hit.headers["mcp-protocol-version"] == HANDSHAKE
    assert [q.message for q in host.questions] == ["Sure?"]


def test_undeclared_asks_get_errors_not_answers(stub: Stub) -> None:
    """A client without handlers refuses what it never declared: -32602 for a form, -32601 for sampling and roots."""
    answers: dict[Any, dict[str, Any]] = {}
    all_answered = threading.Event()

    def answer(hit: Hit) -> Reply:
        answers[hit.body["id"]] = hit.body
        if len(answers) == 3:
            all_answered.set()
        return Reply(202)

    asks = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "elicitation/create",
            "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
        },
        {"jsonrpc": "2.0", "id": 2, "method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}},
        {"jsonrpc": "2.0", "id": 3, "method": "roots/list"},
    ]
    stub.routes["tools/call"] = lambda hit: sse(*[event(a) for a in asks], all_answered, event(done(hit)))
    stub.routes["answer"] = answer

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.call_tool("t")

    run(flow())
    assert {rid: body["error"]["code"] for rid, body in answers.items()} == {1: -32602, 2: -32601, 3: -32601}


def test_cancelled_ask_stops_the_handler_and_sends_nothing(stub: Stub) -> None:
    started = threading.Event()
    host_cancelled: list[bool] = []

    async def never(question: Question) -> Answer:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            host_cancelled.append(True)
            raise
        return Declined()

    ask = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "elicitation/create",
        "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}},
    }
    cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7, "reason": "timeout"}}
    stub.routes["tools/call"] = lambda hit: sse(event(ask), started, event(cancel), 0.2, event(done(hit, "gave up")))

    async def flow() -> dict[str, Any]:
        async with Client(stub.url, on_form=never, protocol=HANDSHAKE) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "gave up"
    assert host_cancelled == [True]
    assert not stub.seen("answer")


def test_session_gone_reinitializes_once_and_retries(stub: Stub) -> None:
    calls: list[Hit] = []

    def call(hit: Hit) -> Reply:
        calls.append(hit)
        if hit.headers.get("mcp-session-id") == "sess-1":
            return Reply(
                404,
                {"content-type": "application/json"},
                [b'{"jsonrpc":"2.0","id":"server-error","error":{"code":-32600,"message":"Not Found"}}'],
            )
        return json_reply(done(hit, "second session"))

    stub.routes["tools/call"] = call

    async def flow() -> dict[str, Any]:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "second session"
    _, second = stub.seen("initialize")
    assert "mcp-session-id" not in second.headers and "mcp-protocol-version" not in second.headers
    assert [c.headers["mcp-session-id"] for c in calls] == ["sess-1", "sess-2"]
    assert calls[0].body["id"] != calls[1].body["id"]
    assert [h.headers["mcp-session-id"] for h in stub.seen("DELETE")] == ["sess-2"]


def test_session_gone_twice_is_an_error(stub: Stub) -> None:
    stub.routes["tools/call"] = lambda hit: Reply(404)

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.call_tool("t")

    with pytest.raises(ClientError, match="ended the session again"):
        run(flow())
    assert len(stub.seen("initialize")) == 2 and len(stub.seen("tools/call")) == 2


URL_ASK = {"mode": "url", "elicitationId": "el-1", "url": "https://example.com/connect", "message": "Connect"}


@pytest.mark.parametrize("accept", [True, False])
def test_url_elicitation_required_error(stub: Stub, accept: bool) -> None:
    """-32042 hands its URLs to on_url; once every one is accepted the request goes again, else the error stands."""
    shown: list[Question] = []

    def call(hit: Hit) -> Reply:
        if len(stub.seen("tools/call")) == 1:
            return error(hit, -32042, "Authorization required", data={"elicitations": [URL_ASK]})
        return json_reply(done(hit, "connected"))

    async def on_url(question: Question) -> Answer:
        shown.append(question)
        return Accepted(None) if accept else Declined()

    stub.routes["tools/call"] = call

    async def flow() -> dict[str, Any]:
        async with Client(stub.url, on_url=on_url, protocol=HANDSHAKE) as client:
            return await client.call_tool("t")

    if accept:
        assert text_of(run(flow())) == "connected"
    else:
        with pytest.raises(McpError) as caught:
            run(flow())
        assert caught.value.code == -32042
    (question,) = shown
    assert (question.mode, question.url, question.key) == ("url", "https://example.com/connect", "el-1")
    assert len(stub.seen("tools/call")) == (2 if accept else 1)


def test_close_tolerates_a_refused_delete(stub: Stub) -> None:
    stub.routes["DELETE"] = lambda hit: Reply(405)

    async def flow() -> list[str]:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            return await listed(client)

    assert run(flow()) == ["t"]
    assert len(stub.seen("DELETE")) == 1


def test_standalone_stream_carries_server_requests(stub: Stub) -> None:
    """A request that belongs to no call (as mcp 1.x sends roots/list) comes on the GET stream and is answered."""
    answered = threading.Event()
    answers: list[dict[str, Any]] = []

    def answer(hit: Hit) -> Reply:
        answers.append(hit.body)
        answered.set()
        return Reply(202)

    ask = {"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}
    stub.routes["GET"] = lambda hit: sse(event(ask, eid="g1"), stub.closing)
    stub.routes["tools/call"] = lambda hit: sse(answered, event(done(hit, "rooted")))
    stub.routes["answer"] = answer
    host = Host()

    async def flow() -> dict[str, Any]:
        async with host.client(stub.url, protocol=HANDSHAKE) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "rooted"
    assert answers == [
        {"jsonrpc": "2.0", "id": "r1", "result": {"roots": [{"uri": "file:///srv/project", "name": "project"}]}}
    ]


# -- stdio: a server that never answers the probe ---------------------------------------------------------

SILENT_PROBE = """
import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg or msg.get("method") == "server/discover":
        continue  # a 2025-11-25 server may say nothing to a method it does not know before initialize
    if msg["method"] == "initialize":
        result = {"protocolVersion": "2025-11-25", "capabilities": {}, "serverInfo": {"name": "quiet", "version": "1"}}
    else:
        result = {"tools": [{"name": "quiet_tool", "inputSchema": {"type": "object"}}]}
    print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
"""


def test_stdio_probe_timeout_falls_back(tmp_path: Path) -> None:
    script = tmp_path / "quiet.py"
    script.write_text(SILENT_PROBE)

    async def flow() -> tuple[list[str], str | None, float]:
        began = time.monotonic()
        async with Client([sys.executable, str(script)], protocol="auto") as client:
            names = await listed(client)
            return names, client.era, time.monotonic() - began

    names, era, took = run(flow())
    assert (names, era) == (["quiet_tool"], HANDSHAKE)
    assert 2.9 <= took < 10


# -- Baton's own server, the client pinned to 2025-11-25 --------------------------------------------------


def baton_flows(target: str | list[str]) -> None:
    host = Host(form={"confirm": True})
    notes: list[dict[str, Any]] = []

    async def on_progress(note: dict[str, Any]) -> None:
        notes.append(note)

    async def flow() -> None:
        async with host.client(target, protocol=HANDSHAKE) as client:
            assert text_of(await client.call_tool("perform", {"action": "ship"})) == "done: ship"
            assert client.era == HANDSHAKE and client.server_name == "baton-everything"
            host.form = {}
            defaults = text_of(await client.call_tool("test_elicitation_sep1034_defaults"))
            assert "'name': 'John Doe'" in defaults and "'verified': True" in defaults
            sampled = await client.call_tool("test_sampling", {"prompt": "hello"})
            assert text_of(sampled) == "LLM response: short"
            progress = await client.call_tool("test_tool_with_progress", progress=on_progress)
            assert text_of(progress) == "Progress test completed"
            host.form = None
            assert text_of(await client.call_tool("perform", {"action": "stop"})) == "not confirmed: stop"
            with pytest.raises(ClientError, match="step mode"):
                await client.start("tools/call", {"name": "perform", "arguments": {"action": "x"}})

    run(flow())
    assert [n["params"]["progress"] for n in notes if n.get("method") == "notifications/progress"] == [0, 50, 100]
    assert [p["messages"][0]["content"]["text"] for p in host.sampled] == ["hello"]


def test_baton_server_over_http(serve: Callable[..., RunningServer]) -> None:
    server = serve("examples/everything.py")
    baton_flows(server.url)

    async def auto() -> str | None:
        async with Client(server.url, protocol="auto") as client:
            await client.list_tools()
            return client.era

    assert run(auto()) == MODERN  # the same server, probed: it speaks 2026-07-28 as well


def test_baton_server_over_stdio() -> None:
    baton_flows([BATON, "serve", EVERYTHING, "--stdio"])


def test_a_call_given_up_is_cancelled_by_notification(stub: Stub) -> None:
    """2025-11-25: dropping the stream cancels nothing, so a call the client stops waiting for is cancelled
    with notifications/cancelled naming it."""
    stub.routes["tools/call"] = lambda hit: sse(event(eid="c1", retry=10), stub.closing)

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE, deadline_s=0.5) as client:
            await client.call_tool("t")

    with pytest.raises(TimeoutError):
        run(flow())
    (call,) = stub.seen("tools/call")
    (note,) = [h for h in stub.seen("note") if h.method == "notifications/cancelled"]
    assert note.body == {
        "jsonrpc": "2.0",
        "method": "notifications/cancelled",
        "params": {"requestId": call.body["id"]},
    }
    assert note.headers["mcp-session-id"] == "sess-1"


# -- review fixes: orphaned asks, resumption 404, a failed handshake, the standalone stream --------------


def orphan_flows(target: str | list[str]) -> None:
    """A call given up (here by `wait_for`) stops the question its stream carried, so the next call's
    question reaches the host instead of waiting behind it."""
    shown: list[str] = []
    stopped: list[str] = []

    async def on_form(question: Question) -> Answer:
        shown.append(question.message)
        if question.message == "first?":
            try:
                await asyncio.sleep(60)  # a host that never answers
            except asyncio.CancelledError:
                stopped.append(question.message)
                raise
        return Accepted({"username": "ann", "email": "ann@example.com"})

    async def flow() -> str:
        async with Client(target, on_form=on_form, protocol=HANDSHAKE, deadline_s=FLOW_TIMEOUT_S) as client:
            # The session first: on a loaded machine (the suite on several workers) the server's start could take
            # the 2 s given to the call below, which would then be given up in the handshake, not in its question.
            await client.list_tools()
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("test_elicitation", {"message": "first?"}), 2)
            second = client.call_tool("test_elicitation", {"message": "second?"})
            return text_of(await asyncio.wait_for(second, 10))

    assert "ann" in run(flow())
    assert shown == ["first?", "second?"]
    assert stopped == ["first?"]


def test_a_call_given_up_stops_its_question_over_http(serve: Callable[..., RunningServer]) -> None:
    orphan_flows(serve("examples/everything.py").url)


def test_a_call_given_up_stops_its_question_over_stdio() -> None:
    orphan_flows([BATON, "serve", EVERYTHING, "--stdio"])


def test_session_gone_while_resuming_is_not_resent(stub: Stub) -> None:
    """The POST reached the server; a 404 to its resumption leaves the outcome unknown, so nothing is resent."""
    stub.routes["tools/call"] = lambda hit: sse(event(eid="r1", retry=10))

    def get(hit: Hit) -> Reply:
        return Reply(404) if "last-event-id" in hit.headers else Reply(405)

    stub.routes["GET"] = get

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.call_tool("t")

    with pytest.raises(ClientError, match="unknown"):
        run(flow())
    assert len(stub.seen("tools/call")) == 1 and len(stub.seen("initialize")) == 1


def test_failed_initialized_notification_deletes_the_session(stub: Stub) -> None:
    stub.routes["note"] = lambda hit: Reply(500, {"content-type": "text/plain"}, [b"broken"])

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.list_tools()

    with pytest.raises(ConnectionError):
        run(flow())
    assert [h.headers["mcp-session-id"] for h in stub.seen("DELETE")] == ["sess-1"]


async def until(check: Callable[[], bool], within: float) -> None:
    for _ in range(int(within / 0.05)):
        if check():
            return
        await asyncio.sleep(0.05)


def test_idle_standalone_streams_closed_by_a_proxy_are_reopened(stub: Stub) -> None:
    """A standalone stream that brings only a keepalive and is closed (no event id) is no failure."""
    stub.routes["GET"] = lambda hit: sse(b": keepalive\n\n", event(retry=20))

    async def flow() -> None:
        async with Client(stub.url, protocol=HANDSHAKE) as client:
            await client.list_tools()
            await until(lambda: len(stub.seen("GET")) >= 6, 5)

    run(flow())
    assert len(stub.seen("GET")) >= 6


def test_standalone_get_refused_with_409_is_tried_again(stub: Stub) -> None:
    """409: an older GET of the session still holds the stream; the client tries again and listens."""
    answers: list[dict[str, Any]] = []

    def get(hit: Hit) -> Reply:
        if len(stub.seen("GET")) <= 2:
            return Reply(409)
        return sse(event({"jsonrpc": "2.0", "id": "r1", "method": "roots/list"}, eid="g1"), stub.closing)

    def answer(hit: Hit) -> Reply:
        answers.append(hit.body)
        return Reply(202)

    stub.routes["GET"] = get
    stub.routes["answer"] = answer
    host = Host()

    async def flow() -> None:
        async with host.client(stub.url, protocol=HANDSHAKE) as client:
            await client.list_tools()
            await until(lambda: bool(answers), 8)

    run(flow())
    assert [a["id"] for a in answers] == ["r1"]
