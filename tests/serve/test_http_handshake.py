"""2025-11-25 sessions over real HTTP on loopback, beside 2026-07-28 on the same endpoint (protocol.md P28-P32).

Every case of the dual-era answer table for HTTP, the asks of a session answered by POSTed responses,
the isolation of sessions (tampered, foreign, deleted ids; answers on the wrong session), resumption of
a dropped stream with `Last-Event-ID`, cancellation, and the standalone GET stream.
"""

from __future__ import annotations

import base64
import itertools
import json
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.markers import needs
from support.paths import SERVERS
from support.processes import free_port
from support.serve import RunningServer, start_server
from wire import meta, post, request

HANDSHAKE = "2025-11-25"
BOTH = "application/json, text/event-stream"
_ids = itertools.count(1)


# -- a minimal 2025-11-25 client ----------------------------------------------------------------------


def sse(lines: Iterator[str]) -> Iterator[dict[str, str]]:
    """The events of an SSE body, each as {field: value} (data lines joined)."""
    event: dict[str, str] = {}
    for line in lines:
        if not line:
            if event:
                yield event
            event = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        event[name] = event["data"] + "\n" + value if name == "data" and "data" in event else value
    if event:
        yield event


def message_of(event: dict[str, str]) -> dict[str, Any] | None:
    return json.loads(event["data"]) if event.get("data") else None


def rpc(method: str, params: dict[str, Any] | None = None, rid: int | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": next(_ids) if rid is None else rid, "method": method}
    if params is not None:
        msg["params"] = params
    return msg


def init_params(version: str = HANDSHAKE, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "protocolVersion": version,
        "capabilities": {"elicitation": {}} if caps is None else caps,
        "clientInfo": {"name": "tests", "version": "0"},
    }


class Client:
    """One 2025-11-25 session (or none yet) on a server, as one principal."""

    def __init__(self, url: str, who: str | None = None) -> None:
        self.url = url
        self.who = who
        self.sid: str | None = None

    def headers(self, accept: str = BOTH, *, session: bool = True, **extra: str) -> dict[str, str]:
        h = {"Content-Type": "application/json", "Accept": accept}
        if self.who:
            h["Authorization"] = f"Bearer {self.who}"
        if session and self.sid:
            h["Mcp-Session-Id"] = self.sid
            h["MCP-Protocol-Version"] = HANDSHAKE
        h.update(extra)
        return h

    def initialize(self, **params: Any) -> dict[str, Any]:
        resp = httpx.post(self.url, json=rpc("initialize", init_params(**params)), headers=self.headers(), timeout=10)
        assert resp.status_code == 200, resp.text
        self.sid = resp.headers["mcp-session-id"]
        ok = httpx.post(
            self.url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers(), timeout=10
        )
        assert ok.status_code == 202
        result: dict[str, Any] = resp.json()["result"]
        return result

    def post(self, body: Any, accept: str = BOTH, **extra: str) -> httpx.Response:
        return httpx.post(self.url, json=body, headers=self.headers(accept, **extra), timeout=10)

    def call(self, method: str, params: dict[str, Any] | None = None, accept: str = BOTH) -> dict[str, Any]:
        """A request's response message, read from JSON or from the end of its SSE stream."""
        msg = rpc(method, params)
        resp = self.post(msg, accept)
        assert resp.status_code == 200, resp.text
        if resp.headers["content-type"].startswith("application/json"):
            body: dict[str, Any] = resp.json()
            return body
        messages = [m for m in map(message_of, sse(iter(resp.text.splitlines()))) if m]
        assert messages and messages[-1].get("id") == msg["id"], messages
        return messages[-1]

    @contextmanager
    def stream(self, msg: dict[str, Any]) -> Iterator[tuple[httpx.Response, Iterator[dict[str, str]]]]:
        """POST a request and read its SSE events as they come; leaving the block drops the connection."""
        with (
            httpx.Client(timeout=httpx.Timeout(10, read=15)) as http,
            http.stream("POST", self.url, json=msg, headers=self.headers()) as resp,
        ):
            assert resp.status_code == 200
            assert resp.headers["content-type"].startswith("text/event-stream")
            yield resp, sse(resp.iter_lines())

    @contextmanager
    def get(self, **extra: str) -> Iterator[tuple[httpx.Response, Iterator[dict[str, str]]]]:
        hdrs = self.headers("text/event-stream", **extra)
        with (
            httpx.Client(timeout=httpx.Timeout(10, read=15)) as http,
            http.stream("GET", self.url, headers=hdrs) as resp,
        ):
            yield resp, sse(resp.iter_lines())

    def answer(self, rid: Any, result: dict[str, Any]) -> httpx.Response:
        return self.post({"jsonrpc": "2.0", "id": rid, "result": result})

    def delete(self) -> httpx.Response:
        return httpx.delete(self.url, headers=self.headers(), timeout=10)


def until(events: Iterator[dict[str, str]], pred: Any) -> tuple[list[dict[str, Any]], dict[str, str]]:
    """Read events up to the first whose message satisfies `pred`; (messages before it, that event)."""
    seen: list[dict[str, Any]] = []
    for event in events:
        msg = message_of(event)
        if msg is not None and pred(msg):
            return seen, event
        if msg is not None:
            seen.append(msg)
    raise AssertionError(f"stream ended first; saw {seen}")


def rest(events: Iterator[dict[str, str]]) -> list[dict[str, Any]]:
    return [m for m in map(message_of, events) if m is not None]


# -- the server ---------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("http-legacy")


@pytest.fixture(scope="module")
@needs("process")
def server(workdir: Path) -> Iterator[RunningServer]:
    port = free_port()
    env = {"BATON_TEST_DIR": str(workdir), "BATON_DATA_DIR": str(workdir / "data")}
    running = start_server(f"{SERVERS / 'handshake.py'}:http", port=port, log=workdir / "server.log", env=env)
    with running:
        yield running


@pytest.fixture
def url(server: RunningServer) -> str:
    return server.url


@pytest.fixture
def client(url: str) -> Client:
    c = Client(url)
    c.initialize()
    return c


def release(workdir: Path, name: str) -> None:
    (workdir / name).touch()


def runs(workdir: Path) -> list[str]:
    path = workdir / "runs.log"
    return path.read_text().splitlines() if path.exists() else []


def wait_run(workdir: Path, line: str, timeout: float = 10) -> None:
    deadline = time.monotonic() + timeout
    while line not in runs(workdir):
        assert time.monotonic() < deadline, f"{line!r} never ran: {runs(workdir)}"
        time.sleep(0.02)


# -- the answer table (protocol.md P28, P32) ------------------------------------------------------------


def test_h1_initialize_opens_a_session(url: str) -> None:
    c = Client(url)
    resp = httpx.post(url, json=rpc("initialize", init_params("2025-06-18")), headers=c.headers(), timeout=10)
    assert resp.status_code == 200
    assert resp.headers["content-type"] == "application/json"
    sid = resp.headers["mcp-session-id"]
    assert sid and all(0x21 <= ord(ch) <= 0x7E for ch in sid)
    result = resp.json()["result"]
    assert result["protocolVersion"] == HANDSHAKE  # whatever was asked for (P28)
    assert result["capabilities"]["logging"] == {} and result["capabilities"]["resources"]["subscribe"] is True
    assert result["serverInfo"]["name"] == "http-legacy"
    # every initialize opens a new session
    again = httpx.post(url, json=rpc("initialize", init_params()), headers=c.headers(), timeout=10)
    assert again.headers["mcp-session-id"] != sid


def test_h2_initialize_with_only_the_2026_envelope_is_a_removed_method(url: str) -> None:
    msg = {"jsonrpc": "2.0", "id": 500, "method": "initialize", "params": {"_meta": meta({})}}
    resp = post(url, msg)
    assert resp.status_code == 404
    assert "mcp-session-id" not in resp.headers
    body = resp.json()
    assert body["id"] == 500 and body["error"]["code"] == -32601
    assert "2026-07-28" in body["error"]["message"] and HANDSHAKE in body["error"]["message"]


def test_h3_initialize_in_a_live_session(client: Client) -> None:
    resp = client.post(rpc("initialize", init_params()))
    assert resp.status_code == 400
    assert resp.json()["error"]["code"] == -32600
    assert "already initialized" in resp.json()["error"]["message"]
    assert client.call("ping")["result"] == {}
    assert client.post(rpc("tools/list")).status_code == 200  # the session lives on


def test_initialize_with_a_dead_session_id_starts_a_new_session(url: str) -> None:
    c = Client(url)
    c.initialize()
    old = c.sid
    assert c.delete().status_code == 200
    resp = c.post(rpc("initialize", init_params()))
    assert resp.status_code == 200
    assert resp.headers["mcp-session-id"] != old


def test_h4_a_request_without_a_session(url: str) -> None:
    resp = Client(url).post(rpc("tools/list"))
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["code"] == -32600
    assert "initialize first, or send the 2026-07-28 _meta" in error["message"]


def test_h5_errors_of_a_session_travel_with_200(client: Client) -> None:
    cases: list[tuple[str, dict[str, Any], int]] = [
        ("no/such/method", {}, -32601),
        ("resources/read", {"uri": "test://missing"}, -32002),
        ("logging/setLevel", {"level": "loud"}, -32602),
        ("resources/subscribe", {"uri": "test://missing"}, -32002),
    ]
    for method, params, code in cases:
        resp = client.post(rpc(method, params))
        assert resp.status_code == 200, (method, resp.text)
        messages = (
            [resp.json()]
            if resp.headers["content-type"] == "application/json"
            else [m for m in map(message_of, sse(iter(resp.text.splitlines()))) if m]
        )
        assert messages[-1]["error"]["code"] == code, (method, messages)
    unknown_tool = client.call("tools/call", {"name": "nope", "arguments": {}})
    assert "error" in unknown_tool or unknown_tool["result"].get("isError") is True
    listed = client.call("tools/list")["result"]
    assert {"book", "wait_for"} <= {t["name"] for t in listed["tools"]}
    assert "resultType" not in listed and "ttlMs" not in listed and "_meta" not in listed


def test_h5_a_handshake_header_version_is_served_with_the_session_version(client: Client) -> None:
    resp = client.post(rpc("ping"), **{"MCP-Protocol-Version": "2025-06-18"})
    assert resp.status_code == 200 and resp.json()["result"] == {}
    resp = client.post(rpc("ping"), **{"MCP-Protocol-Version": "2099-01-01"})
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32602  # modern by the header: no _meta


def test_h6_unknown_tampered_foreign_and_deleted_sessions_are_404(url: str) -> None:
    alice = Client(url, "alice")
    alice.initialize()
    assert alice.sid is not None
    prefix, body = alice.sid.rsplit(".", 1)
    raw = bytearray(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    raw[len(raw) // 2] ^= 0x01
    tampered = prefix + "." + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    for who, sid in [("alice", "not-a-session"), ("alice", tampered), ("mallory", alice.sid), (None, alice.sid)]:
        other = Client(url, who)
        other.sid = sid
        for resp in (
            other.post(rpc("tools/list")),
            other.post({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            other.answer("baton-1", {"action": "decline"}),
            httpx.get(url, headers=other.headers("text/event-stream"), timeout=10),
            other.delete(),
        ):
            assert resp.status_code == 404, (who, sid[:12], resp.request.method, resp.text)
            if resp.content:
                assert resp.json()["id"] is None and resp.json()["error"]["code"] == -32600
    assert alice.call("ping")["result"] == {}  # none of that touched alice's session


def test_h7_a_2026_request_ignores_the_session(client: Client) -> None:
    msg = request("tools/call", {"name": "book", "arguments": {"city": "Oslo"}})
    assert client.sid is not None
    resp = post(client.url, msg, **{"Mcp-Session-Id": client.sid})
    assert resp.status_code == 200
    assert "mcp-session-id" not in resp.headers
    result = resp.json()["result"]
    assert result["resultType"] == "input_required"  # the 2026 way: the ask inside the result
    resp = post(client.url, request("server/discover"), **{"Mcp-Session-Id": "garbage"})
    assert resp.status_code == 200 and HANDSHAKE in resp.json()["result"]["supportedVersions"]


def test_h8_no_envelope_with_a_2026_header_is_modern(url: str) -> None:
    resp = httpx.post(
        url,
        json=rpc("tools/list"),
        headers={"Content-Type": "application/json", "Accept": BOTH, "MCP-Protocol-Version": "2026-07-28"},
        timeout=10,
    )
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32602
    discover = Client(url).post(rpc("server/discover"))  # 2026-only method, no header: modern too
    assert discover.status_code == 400 and discover.json()["error"]["code"] == -32602


@pytest.mark.parametrize("method", ["ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"])
def test_h9_session_methods_with_the_envelope_are_removed(url: str, method: str) -> None:
    resp = post(url, request(method, {}))
    assert resp.status_code == 404 and resp.json()["error"]["code"] == -32601


def test_h10_ping_without_a_session(url: str) -> None:
    resp = Client(url).post(rpc("ping", {}))
    assert resp.status_code == 200
    assert resp.json()["result"] == {}
    assert "mcp-session-id" not in resp.headers


def test_h11_notifications(url: str, client: Client) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    assert Client(url).post(note).status_code == 202  # no session: accepted and dropped
    assert client.post(note).status_code == 202
    dead = Client(url)
    dead.sid = "b1.dead.session"
    assert dead.post(note).status_code == 404


def test_h12_a_response_naming_no_request_is_accepted_and_dropped(client: Client) -> None:
    resp = client.answer("baton-999", {"action": "accept", "content": {}})
    assert resp.status_code == 202 and resp.content == b""
    err = client.post({"jsonrpc": "2.0", "id": 7, "error": {"code": -1, "message": "no"}})
    assert err.status_code == 202
    # without a session a response answers nothing: refused as before
    assert Client(client.url).answer("baton-1", {}).status_code == 400


def test_h13_get(url: str, client: Client) -> None:
    with client.get() as (resp, first):
        assert resp.status_code == 200
        assert resp.headers["content-type"].startswith("text/event-stream")
        # protocol.md P32: a second GET replaces the first (which may be a dead connection), never 409
        with client.get() as (second, events):
            assert second.status_code == 200
            assert rest(first) == []  # the replaced stream ends
            other = Client(url)
            other.initialize()
            other.call("tools/call", {"name": "change_tools", "arguments": {}})
            assert message_of(next(events)) == {
                "jsonrpc": "2.0",
                "method": "notifications/tools/list_changed",
                "params": {},
            }
    # protocol.md P32: GET without a session is what a 2026 server always answered, 405 (POST only)
    resp = httpx.get(url, headers={"Accept": "text/event-stream"}, timeout=10)
    assert resp.status_code == 405 and resp.headers["allow"] == "POST"
    with client.get() as (again, _):  # the first one closed: a new standalone stream may open
        assert again.status_code == 200


def test_h14_delete(url: str) -> None:
    c = Client(url)
    c.initialize()
    resp = c.delete()
    assert resp.status_code == 200
    for after in (c.post(rpc("tools/list")), c.delete(), c.post({"jsonrpc": "2.0", "method": "notifications/x"})):
        assert after.status_code == 404
    assert httpx.delete(url, timeout=10).status_code == 405  # no session: nothing to delete


def test_h15_batches_are_refused(client: Client) -> None:
    resp = client.post([rpc("ping"), rpc("ping")])
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32600


def test_origin_and_host_checks_apply_to_sessions(server: RunningServer, client: Client) -> None:
    evil = client.post(rpc("initialize", init_params()), Origin="https://evil.example")
    assert evil.status_code == 403
    assert client.post(rpc("ping"), Host="evil.example").status_code == 403
    local = Client(server.url)
    resp = httpx.post(
        server.url,
        json=rpc("initialize", init_params()),
        headers={**local.headers(), "Origin": f"http://localhost:{server.port}", "Host": f"localhost:{server.port}"},
        timeout=10,
    )
    assert resp.status_code == 200


# -- asks in a session (protocol.md P29) ---------------------------------------------------------------


def elicitation_of(events: Iterator[dict[str, str]]) -> dict[str, Any]:
    _, event = until(events, lambda m: m.get("method") == "elicitation/create")
    msg = message_of(event)
    assert msg is not None and "id" in msg
    return msg


@pytest.mark.parametrize(
    ("answer", "text"),
    [
        ({"action": "accept", "content": {"nights": 3, "confirm": True}}, "booked: Oslo for 3 nights"),
        ({"action": "decline"}, "declined: Oslo"),
    ],
)
def test_an_ask_is_answered_by_a_posted_response(client: Client, answer: dict[str, Any], text: str) -> None:
    msg = rpc("tools/call", {"name": "book", "arguments": {"city": "Oslo"}})
    with client.stream(msg) as (_, events):
        priming = next(events)
        assert priming.get("id", "").endswith(":0") and priming.get("data", "") == "" and priming["retry"].isdigit()
        ask = elicitation_of(events)
        assert ask["params"]["message"] == "Book a stay in Oslo?"
        assert client.answer(ask["id"], answer).status_code == 202
        _, final = until(events, lambda m: m.get("id") == msg["id"])
        assert rest(events) == []  # the stream ends after the response
    result = message_of(final)
    assert result is not None and result["result"]["content"][0]["text"] == text
    assert "resultType" not in result["result"]


def test_an_ask_on_a_json_only_request_is_refused_clearly(client: Client) -> None:
    body = client.call("tools/call", {"name": "book", "arguments": {"city": "Oslo"}}, accept="application/json")
    assert body["error"]["code"] == -32600
    assert "text/event-stream" in body["error"]["message"]


def test_an_answer_on_another_session_answers_nothing(url: str) -> None:
    a, b = Client(url), Client(url)
    a.initialize()
    b.initialize()
    msg = rpc("tools/call", {"name": "book", "arguments": {"city": "Rome"}})
    with a.stream(msg) as (_, events):
        ask = elicitation_of(events)
        accept = {"action": "accept", "content": {"nights": 9, "confirm": True}}
        assert b.answer(ask["id"], accept).status_code == 202  # b has no such request: dropped
        assert a.answer(ask["id"], {"action": "accept", "content": {"nights": 2, "confirm": True}}).status_code == 202
        _, final = until(events, lambda m: m.get("id") == msg["id"])
    result = message_of(final)
    assert result is not None and result["result"]["content"][0]["text"] == "booked: Rome for 2 nights"


def test_two_requests_at_once_in_one_session(client: Client, workdir: Path) -> None:
    first = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "two-a"}})
    second = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "two-b"}})
    with client.stream(first) as (_, ev1), client.stream(second) as (_, ev2):
        until(ev1, lambda m: m.get("method") == "notifications/message")
        until(ev2, lambda m: m.get("method") == "notifications/message")
        release(workdir, "two-b")
        _, end2 = until(ev2, lambda m: "id" in m)
        release(workdir, "two-a")
        _, end1 = until(ev1, lambda m: "id" in m)
    for end, msg, name in ((end1, first, "two-a"), (end2, second, "two-b")):
        body = message_of(end)
        assert body is not None and body["id"] == msg["id"]
        assert body["result"]["content"][0]["text"] == f"released: {name}"
    assert end1["id"].split(":")[0] != end2["id"].split(":")[0]  # one stream each


# -- disconnects, resumption, cancellation (protocol.md P31, P32) ---------------------------------------


def test_a_dropped_stream_is_resumed_with_last_event_id(client: Client, workdir: Path) -> None:
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "resume"}})
    with client.stream(msg) as (_, events):
        priming = next(events)
        _, logged = until(events, lambda m: m.get("method") == "notifications/message")
    # the connection is gone; the request goes on (a disconnect is not a cancellation)
    release(workdir, "resume")
    wait_run(workdir, "end:resume")
    with client.get(**{"Last-Event-ID": logged["id"]}) as (resp, events):
        assert resp.status_code == 200
        after = rest(events)
    assert [m.get("id") for m in after] == [msg["id"]]
    assert after[0]["result"]["content"][0]["text"] == "released: resume"
    # from the priming event: everything the stream carried, once more, and only that stream's
    with client.get(**{"Last-Event-ID": priming["id"]}) as (_, events):
        replay = rest(events)
    assert [m.get("method") for m in replay] == ["notifications/message", None]
    assert replay[-1]["id"] == msg["id"]


def test_a_resumed_stream_continues_live(client: Client, workdir: Path) -> None:
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "live"}})
    with client.stream(msg) as (_, events):
        priming = next(events)
    wait_run(workdir, "start:live")
    time.sleep(0.1)  # the log message is stored before the GET: it is replayed, then the rest comes live
    with client.get(**{"Last-Event-ID": priming["id"]}) as (resp, events):
        assert resp.status_code == 200
        _, logged = until(events, lambda m: m.get("method") == "notifications/message")
        release(workdir, "live")
        _, final = until(events, lambda m: m.get("id") == msg["id"])
        assert rest(events) == []
    assert logged["id"] < final["id"]


def test_bad_or_foreign_last_event_ids_are_400(url: str, client: Client) -> None:
    other = Client(url)
    other.initialize()
    with other.stream(rpc("tools/call", {"name": "change_tools", "arguments": {}})) as (_, events):
        foreign = next(events)["id"]
        rest(events)
    mine = Client(url)
    mine.initialize()
    with mine.stream(rpc("tools/call", {"name": "change_tools", "arguments": {}})) as (_, events):
        own = next(events)["id"].partition(":")[0]
        rest(events)
    # the byte 0xb2 is "²" in Latin-1, which str.isdigit() takes and int() refuses: still 400, not 500
    hdrs = [(k.encode(), v.encode()) for k, v in mine.headers("text/event-stream").items()]
    resp = httpx.get(url, headers=[*hdrs, (b"Last-Event-ID", own.encode() + b":\xb2")], timeout=10)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32600
    for value in ("nonsense", "12:ab", foreign):
        with client.get(**{"Last-Event-ID": value}) as (resp, _):
            assert resp.status_code == 400, value
            resp.read()
            assert resp.json()["error"]["code"] == -32600


def test_cancelled_requests_send_no_response(client: Client, workdir: Path) -> None:
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "cancel"}})
    with client.stream(msg) as (_, events):
        until(events, lambda m: m.get("method") == "notifications/message")
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg["id"]}}
        assert client.post(note).status_code == 202
        assert rest(events) == []  # the stream ends without a response
    release(workdir, "cancel")
    time.sleep(0.3)
    assert "start:cancel" in runs(workdir) and "end:cancel" not in runs(workdir)


def test_a_cancelled_json_request_says_so(client: Client, workdir: Path) -> None:
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "cancel-json"}})
    with ThreadPoolExecutor(1) as pool:
        pending = pool.submit(client.post, msg, "application/json")
        wait_run(workdir, "start:cancel-json")
        note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": msg["id"]}}
        assert client.post(note).status_code == 202
        resp = pending.result(10)
    assert resp.status_code == 200
    assert resp.json()["id"] == msg["id"] and "cancelled" in resp.json()["error"]["message"]
    release(workdir, "cancel-json")
    time.sleep(0.3)
    assert "end:cancel-json" not in runs(workdir)


def test_delete_cancels_the_running_requests(url: str, workdir: Path) -> None:
    c = Client(url)
    c.initialize()
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "deleted"}})
    with c.get() as (_, standalone), c.stream(msg) as (_, events):
        until(events, lambda m: m.get("method") == "notifications/message")
        assert c.delete().status_code == 200
        assert rest(events) == []
        assert rest(standalone) == []  # the standalone stream ends too
    release(workdir, "deleted")
    time.sleep(0.3)
    assert "end:deleted" not in runs(workdir)


# -- the standalone stream (protocol.md P31) -------------------------------------------------------------


def test_list_changes_and_subscribed_updates_go_on_the_standalone_stream(url: str, client: Client) -> None:
    assert client.call("resources/subscribe", {"uri": "test://a"})["result"] == {}
    with client.get() as (resp, events):
        assert resp.status_code == 200
        other = Client(url)
        other.initialize()
        assert "result" in other.call("tools/call", {"name": "change_tools", "arguments": {}})
        first = message_of(next(events))
        assert first == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}
        other.call("tools/call", {"name": "touch", "arguments": {"uri": "test://b"}})  # not subscribed
        other.call("tools/call", {"name": "touch", "arguments": {"uri": "test://a"}})
        before, updated = until(events, lambda m: m["method"] == "notifications/resources/updated")
        assert {m["method"] for m in before} == {"notifications/tools/list_changed"}  # added, then removed
        assert message_of(updated) == {
            "jsonrpc": "2.0",
            "method": "notifications/resources/updated",
            "params": {"uri": "test://a"},
        }


def test_changes_without_a_standalone_stream_wait_for_the_next_one(client: Client) -> None:
    client.call("tools/call", {"name": "change_tools", "arguments": {}})
    client.call("tools/call", {"name": "change_tools", "arguments": {}})  # the same change: kept once
    client.call("tools/call", {"name": "touch", "arguments": {"uri": "test://a"}})  # not subscribed: dropped
    with client.get() as (_, events):
        first = message_of(next(events))
        assert first is not None and first["method"] == "notifications/tools/list_changed"
        client.call("tools/call", {"name": "touch", "arguments": {"uri": "test://a"}})
        client.call("resources/subscribe", {"uri": "test://a"})
        client.call("tools/call", {"name": "touch", "arguments": {"uri": "test://a"}})
        nxt = message_of(next(events))
        assert nxt is not None and nxt["method"] == "notifications/resources/updated"


def test_set_level_filters_the_session_logs(client: Client, workdir: Path) -> None:
    assert client.call("logging/setLevel", {"level": "error"})["result"] == {}
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "quiet"}})
    release(workdir, "quiet")
    with client.stream(msg) as (_, events):
        seen, _ = until(events, lambda m: m.get("id") == msg["id"])
    assert seen == []


# -- the event store's bounds (in process) ----------------------------------------------------------------


def test_the_event_store_is_bounded() -> None:
    from baton.serve import event_store as es

    async def fill() -> None:
        budget = es.Budget(max_bytes=3 * es.MAX_BYTES)
        stores = [es.EventStore(f"session-{i}", budget) for i in range(5)]
        big = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 1000}}
        finished = stores[0].open()
        finished.append(big)
        finished.finish({"jsonrpc": "2.0", "id": 1, "result": {}})
        for store in stores:
            running = store.open()
            for _ in range(es.MAX_EVENTS + 10):
                running.append(big)
            assert store._events <= es.MAX_EVENTS and store._bytes <= es.MAX_BYTES
            assert budget.used <= budget.max_bytes
            assert running.events[-1][0] == es.MAX_EVENTS + 10  # the newest events stay
        assert all(log.events for store in stores for log in store.streams.values())  # none starved
        assert finished.id not in stores[0].streams  # finished streams go first
        assert budget.used == sum(s._bytes for s in stores)
        for store in stores:
            store.close()
        assert budget.used == 0 and not budget.stores

    import asyncio

    asyncio.run(fill())


def test_event_ids() -> None:
    from baton.serve.event_store import Budget, EventStore, parse_event_id, session_tag

    store = EventStore("abc", Budget())
    log = store.open()
    assert log.id.startswith(session_tag("abc")) and store.owns(log.id)
    assert parse_event_id(f"{log.id}:7") == (log.id, 7)
    bad_ids = ("", "x:1", f"{log.id}", f"{log.id}:-1", f"{log.id}:1e3", f"{log.id.upper()}:1", "g" * 16 + ":1")
    for bad in (*bad_ids, f"{log.id}:\u00b2", f"{log.id}:\u0663", f"{log.id}:1\u00b9"):
        assert parse_event_id(bad) is None, bad
    assert not EventStore("other", Budget()).owns(log.id)


def test_the_session_table_forgets_idle_sessions_and_expires_deletions(monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from baton.protocol.capabilities import ClientCapabilities
    from baton.serve import http_sessions as hs
    from baton.server.sessions import ServerSession

    def session(n: int) -> ServerSession:
        return ServerSession("alice", HANDSHAKE, ClientCapabilities.parse({}), id=f"id-{n}")

    async def run() -> None:
        table = hs.SessionTable(ttl_s=0.2)
        busy = table.state(session(1))
        busy.running["r"] = asyncio.ensure_future(asyncio.sleep(10))
        idle = table.state(session(2))
        idle.store.open().append({"jsonrpc": "2.0", "method": "notifications/message", "params": {}})
        assert len(table) == 2
        monkeypatch.setattr(hs, "IDLE_S", 0.0)
        monkeypatch.setattr(hs, "_SWEEP_S", 0.0)
        await asyncio.sleep(0.01)
        table.state(session(3))
        assert len(table) == 2 and table.states()[0] is busy  # the idle one is gone, the busy one stays
        assert idle.store.size == 0  # its events were given back
        table.delete("id-3")
        assert table.deleted("id-3")
        await asyncio.sleep(0.25)
        assert not table.deleted("id-3")  # remembered only until the id would have expired
        table.close()
        await asyncio.sleep(0)
        assert busy.running["r"].cancelled()

    asyncio.run(run())


def test_over_the_instance_budget_the_largest_store_gives_way() -> None:
    import asyncio

    from baton.serve import event_store as es

    async def fill() -> None:
        # protocol.md P32: the session holding the most gives up its older half; another session's
        # finished stream that its client has not fetched yet stays resumable.
        budget = es.Budget(max_bytes=200_000)
        quiet, loud = es.EventStore("quiet", budget), es.EventStore("loud", budget)
        big = {"jsonrpc": "2.0", "method": "notifications/message", "params": {"data": "x" * 1000}}
        waiting = quiet.open()
        waiting.append(big)
        waiting.finish({"jsonrpc": "2.0", "id": 1, "result": {}})
        running = loud.open()
        for _ in range(400):
            running.append(big)
        assert budget.used <= budget.max_bytes
        assert quiet.find(waiting.id) is waiting and len(waiting.events) == 2
        assert running.events[-1][0] == 400 and running.events[0][0] > 1
        waiting.keep_until = 0.0  # kept long enough: now it may go for room
        for _ in range(400):
            running.append(big)
        assert quiet.find(waiting.id) is None
        for store in (quiet, loud):
            store.close()

    asyncio.run(fill())


def test_the_standalone_backlog_is_bounded() -> None:
    import asyncio

    from baton.serve import http_sessions as hs

    async def run() -> None:
        channel = hs.Channel()
        for n in range(hs.BACKLOG + 8):
            channel.put(b"%d" % n)
            if n >= hs.BACKLOG:
                channel.put(b"%d" % n)  # identical to a waiting one while full: kept once
        assert len(channel) == hs.BACKLOG
        got: list[bytes] = []
        channel.close()
        async for data in channel.drain(10):
            got.append(data)
        assert got == [b"%d" % n for n in range(8, hs.BACKLOG + 8)]  # the oldest gave way

        idle = hs.Channel()
        stream = idle.drain(0.01)
        assert await anext(stream) == hs.KEEPALIVE  # nothing to send: a comment tests the connection
        idle.put(b"x")
        assert await anext(stream) == b"x"

    asyncio.run(run())


# -- a small instance: few sessions, quick keepalives (protocol.md P30, P32) -----------------------------

SMALL = """
import importlib.util
import sys

from baton.serve import http_sessions

http_sessions.MAX_SESSIONS = 2
http_sessions.KEEPALIVE_S = 0.2

spec = importlib.util.spec_from_file_location("legacy_small", {path!r})
module = importlib.util.module_from_spec(spec)
sys.modules["legacy_small"] = module
spec.loader.exec_module(module)
http = module.http
"""


@pytest.fixture(scope="module")
@needs("process")
def small(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[RunningServer, Path]]:
    work = tmp_path_factory.mktemp("http-legacy-small")
    target = work / "small.py"
    target.write_text(SMALL.format(path=str(SERVERS / "handshake.py")))
    env = {"BATON_TEST_DIR": str(work), "BATON_DATA_DIR": str(work / "data")}
    with start_server(f"{target}:http", log=work / "server.log", env=env) as running:
        yield running, work


def test_a_full_instance_refuses_new_sessions_rather_than_cancel_work(small: tuple[RunningServer, Path]) -> None:
    server, work = small
    waiting, listening, *others = clients = [Client(server.url, who=f"p{n}") for n in range(5)]
    for c in clients:
        c.initialize()  # initialize keeps nothing on the instance: any number may
    msg = rpc("tools/call", {"name": "wait_for", "arguments": {"name": "person"}})
    with waiting.stream(msg) as (_, events), listening.get() as (resp, _):
        until(events, lambda m: m.get("method") == "notifications/message")
        assert resp.status_code == 200
        # both sessions this instance has room for are busy: the next is refused, neither is cancelled
        full = others[0].post(rpc("tools/list"), "application/json")
        assert full.status_code == 503 and full.headers["retry-after"]
        assert full.json()["id"] is None and full.json()["error"]["code"] == -32603
        release(work, "person")
        _, final = until(events, lambda m: m.get("id") == msg["id"])
        assert message_of(final)["result"]["content"][0]["text"] == "released: person"  # type: ignore[index]
    # nothing runs now: the least recently used gives way
    assert "result" in others[0].call("tools/list", accept="application/json")
    assert "result" in others[1].call("tools/list", accept="application/json")


def test_an_idle_standalone_stream_sends_keepalives(small: tuple[RunningServer, Path]) -> None:
    c = Client(small[0].url, who="keepalive")
    c.initialize()
    with c.get() as (resp, _):
        assert resp.status_code == 200
        lines = resp.iter_lines()
        assert next(line for line in lines if line) == ": keepalive"
