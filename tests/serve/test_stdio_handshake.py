"""The stdio transport serving both eras in one real subprocess (protocol.md P28, P29, P31, P33): the
handshake and its refusals, server requests answered on stdin, cancellation, list changes and resource
updates for the session, and 2026-07-28 requests interleaved with the session."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from support.paths import SERVERS
from support.stdio import StdioPeer
from wire import meta

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

HANDSHAKE = "2025-11-25"
CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}


class Peer(StdioPeer):
    """A 2025-11-25 client (and a 2026-07-28 one) writing raw lines to `baton serve --stdio`."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        super().__init__(f"{SERVERS / 'handshake.py'}:stdio", env)

    def handshake(self, rid: Any, method: str, params: dict[str, Any] | None = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    modern = StdioPeer.request

    def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        self.send({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def answer(self, rid: Any, result: dict[str, Any]) -> None:
        self.send({"jsonrpc": "2.0", "id": rid, "result": result})

    def call(self, rid: Any, tool: str, **arguments: Any) -> None:
        self.handshake(rid, "tools/call", {"name": tool, "arguments": arguments})

    def until(self, rid: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        """The messages before the response to `rid`, and that response."""
        before: list[dict[str, Any]] = []
        while True:
            message = self.read()
            if message.get("id") == rid and "method" not in message:
                return before, message
            before.append(message)

    def quiet(self, seconds: float = 0.5) -> None:
        with pytest.raises(TimeoutError):
            self.read(timeout=seconds)

    def initialize(self, version: str = HANDSHAKE, caps: dict[str, Any] | None = None) -> dict[str, Any]:
        self.handshake(
            "init",
            "initialize",
            {
                "protocolVersion": version,
                "capabilities": CAPS if caps is None else caps,
                "clientInfo": {"name": "t", "version": "0"},
            },
        )
        return self.read()


@pytest.fixture
def peer() -> Iterator[Peer]:
    p = Peer()
    with p.process:
        yield p


@pytest.fixture
def session(peer: Peer) -> Peer:
    assert peer.initialize()["result"]["protocolVersion"] == HANDSHAKE
    peer.notify("notifications/initialized")
    return peer


def text_of(response: dict[str, Any]) -> str:
    return str(response["result"]["content"][0]["text"])


def test_before_and_at_the_handshake(peer: Peer) -> None:
    peer.handshake(1, "ping")
    assert peer.read() == {"jsonrpc": "2.0", "id": 1, "result": {}}  # S8: a result with no members at all
    peer.handshake(2, "tools/list")
    error = peer.read()["error"]  # S6
    assert error["code"] == -32600 and "initialize first" in error["message"] and "_meta" in error["message"]
    peer.handshake(3, "server/discover", {})
    assert peer.read()["error"]["code"] == -32602  # S7: a 2026-only method goes the 2026 way
    peer.send({"jsonrpc": "2.0", "id": 4, "method": "initialize", "params": {"_meta": meta()}})  # S2: only the envelope
    error = peer.read()["error"]
    assert error["code"] == -32601 and "2026-07-28" in error["message"] and HANDSHAKE in error["message"]
    result = peer.initialize(version="2099-01-01")["result"]  # S1, S10: any version gets ours back
    assert result["protocolVersion"] == HANDSHAKE and result["serverInfo"]["name"] == "legacy-stdio"
    assert result["capabilities"]["logging"] == {} and result["capabilities"]["resources"]["subscribe"] is True
    assert "resultType" not in result
    again = peer.initialize()  # S3
    assert (
        again["id"] == "init"
        and again["error"]["code"] == -32600
        and "already initialized" in again["error"]["message"]
    )
    peer.handshake(5, "tools/list")
    tools = peer.read()["result"]
    assert "book" in {t["name"] for t in tools["tools"]} and "resultType" not in tools
    peer.handshake(6, "ping", {})
    assert peer.read() == {"jsonrpc": "2.0", "id": 6, "result": {}}
    assert peer.close() == 0


def test_modern_requests_before_and_after_the_handshake(peer: Peer) -> None:
    peer.modern(1, "tools/list")  # S4 before
    assert peer.read()["result"]["resultType"] == "complete"
    peer.send(
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/list",
            "params": {"_meta": meta() | {"io.modelcontextprotocol/protocolVersion": HANDSHAKE}},
        }
    )  # S9: a handshake version in the envelope
    error = peer.read()["error"]
    assert error["code"] == -32022 and error["data"]["supported"] == ["2026-07-28", HANDSHAKE]
    assert peer.initialize()["result"]["protocolVersion"] == HANDSHAKE  # S5: a handshake after 2026 traffic
    peer.notify("notifications/initialized")
    peer.modern(3, "tools/call", {"name": "book", "arguments": {"city": "Oslo"}})  # S4 after: still stateless
    result = peer.read()["result"]
    assert result["resultType"] == "input_required" and "booking" in result["inputRequests"]
    peer.modern(4, "ping")
    assert peer.read()["error"]["code"] == -32601  # removed in 2026-07-28, whatever the session
    assert peer.close() == 0


def test_elicitation_answered_on_stdin_accept_and_decline(session: Peer) -> None:
    session.call(1, "book", city="Oslo")
    ask = session.read()
    assert ask["method"] == "elicitation/create" and ask["params"]["message"] == "Book a stay in Oslo?"
    assert str(ask["id"]).startswith("baton-")
    session.answer(ask["id"], {"action": "accept", "content": {"nights": 3, "confirm": True}})
    assert text_of(session.read()) == "booked: Oslo for 3 nights"
    session.call(2, "book", city="Rome")
    ask = session.read()
    session.answer(ask["id"], {"action": "decline"})
    response = session.read()
    assert response["id"] == 2 and text_of(response) == "declined: Rome"
    assert session.close() == 0


def test_sampling_and_roots_through_the_bridge(session: Peer) -> None:
    session.call(1, "ask_model", question="Capital of France?")
    ask = session.read()
    assert ask["method"] == "sampling/createMessage" and ask["params"]["maxTokens"] == 20
    session.answer(ask["id"], {"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"})
    assert text_of(session.read()) == "model said: Paris"
    session.call(2, "show_roots")
    ask = session.read()
    assert ask["method"] == "roots/list"
    session.answer(ask["id"], {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]})
    assert text_of(session.read()) == "roots: file:///a, file:///b"
    assert session.close() == 0


def test_a_client_error_ends_the_request_as_a_tool_error(session: Peer) -> None:
    session.call(1, "ask_model", question="?")
    ask = session.read()
    session.send({"jsonrpc": "2.0", "id": ask["id"], "error": {"code": -1, "message": "User rejected"}})
    response = session.read()
    assert response["result"]["isError"] is True and "User rejected" in text_of(response)
    assert session.close() == 0


def test_responses_naming_no_open_request_are_dropped(peer: Peer) -> None:
    peer.answer("baton-1", {"action": "accept"})  # before any session
    peer.quiet()
    assert peer.initialize()["result"]["protocolVersion"] == HANDSHAKE
    peer.notify("notifications/initialized")
    peer.call(1, "book", city="Oslo")
    ask = peer.read()
    peer.answer("baton-999", {"action": "accept", "content": {"nights": 9, "confirm": True}})
    peer.answer(1, {"action": "accept", "content": {"nights": 9, "confirm": True}})  # the client's own id
    peer.send({"jsonrpc": "2.0", "id": None, "error": {"code": -32600, "message": "?"}})
    peer.quiet()  # none of these answers anything, and none gets an error back
    peer.answer(ask["id"], {"action": "accept", "content": {"nights": 1, "confirm": False}})
    assert text_of(peer.read()) == "not confirmed: Oslo"
    peer.answer(ask["id"], {"action": "accept", "content": {"nights": 1, "confirm": True}})  # answered already
    peer.quiet()
    assert peer.close() == 0


def test_cancelling_a_request_that_waits_on_an_ask(session: Peer) -> None:
    session.call("slow", "book", city="Oslo")
    ask = session.read()
    session.notify("notifications/cancelled", {"requestId": "slow", "reason": "user gave up"})
    cancelled = session.read()
    assert cancelled["method"] == "notifications/cancelled" and cancelled["params"]["requestId"] == ask["id"]
    session.quiet()  # no response for the cancelled request
    session.answer(ask["id"], {"action": "accept", "content": {"nights": 2, "confirm": True}})
    session.quiet()  # a late answer is dropped
    session.call("slow", "book", city="Rome")  # the id is free again
    ask = session.read()
    session.answer(ask["id"], {"action": "cancel"})
    assert text_of(session.read()) == "cancelled: Rome"
    assert session.close() == 0


def test_list_changed_only_once_initialized(peer: Peer) -> None:
    assert peer.initialize()["result"]["capabilities"]["tools"]["listChanged"] is True
    peer.call(1, "add_greeter", name="greet_a")
    before, response = peer.until(1)
    assert before == [] and text_of(response) == "added greet_a"  # not initialized yet: nothing sent
    peer.notify("notifications/initialized")
    peer.call(2, "add_greeter", name="greet_b")
    before, response = peer.until(2)
    assert before == [{"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {}}]
    peer.modern(3, "tools/call", {"name": "add_greeter", "arguments": {"name": "greet_c"}})  # a 2026 change too
    before, _ = peer.until(3)
    assert [m["method"] for m in before] == ["notifications/tools/list_changed"]
    peer.call(4, "greet_b", who="Ada")
    assert text_of(peer.read()) == "hello Ada"
    assert peer.close() == 0


def test_subscribe_and_resource_updated(session: Peer) -> None:
    session.handshake(1, "resources/subscribe", {"uri": "test://watched"})
    assert session.read() == {"jsonrpc": "2.0", "id": 1, "result": {}}
    session.handshake(2, "resources/subscribe", {"uri": "test://missing"})
    error = session.read()["error"]
    assert error["code"] == -32002 and error["data"]["uri"] == "test://missing"
    session.call(3, "touch", uri="test://other")
    before, _ = session.until(3)
    assert before == []  # not subscribed to it
    session.call(4, "touch", uri="test://watched")
    before, _ = session.until(4)
    assert before == [
        {"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": "test://watched"}}
    ]
    session.handshake(5, "resources/unsubscribe", {"uri": "test://watched"})
    assert session.read()["result"] == {}
    session.call(6, "touch", uri="test://watched")
    before, _ = session.until(6)
    assert before == []
    session.quiet()
    assert session.close() == 0


def test_set_level_filters_the_session_logs(session: Peer) -> None:
    session.call(1, "chatty")
    before, _ = session.until(1)
    assert [m["params"]["level"] for m in before] == ["debug", "info", "error"]  # every level until set
    session.handshake(2, "logging/setLevel", {"level": "warning"})
    assert session.read()["result"] == {}
    session.call(3, "chatty")
    before, _ = session.until(3)
    assert [m["params"]["level"] for m in before] == ["error"]
    session.handshake(4, "logging/setLevel", {"level": "loud"})
    assert session.read()["error"]["code"] == -32602


def test_modern_requests_interleave_with_a_waiting_session_request(session: Peer) -> None:
    session.call(1, "book", city="Oslo")
    ask = session.read()
    session.modern(2, "tools/call", {"name": "echo_free", "arguments": {}})
    assert session.read()["error"]["code"] == -32602  # unknown tool, the 2026 way, while the session waits
    session.modern(3, "tools/list")
    assert session.read()["result"]["resultType"] == "complete"
    session.modern(4, "tools/call", {"name": "book", "arguments": {"city": "Rome"}})
    modern = session.read()
    assert modern["id"] == 4 and modern["result"]["resultType"] == "input_required"  # no server request
    session.handshake(5, "ping")
    assert session.read() == {"jsonrpc": "2.0", "id": 5, "result": {}}
    session.answer(ask["id"], {"action": "accept", "content": {"nights": 2, "confirm": True}})
    response = session.read()
    assert response["id"] == 1 and text_of(response) == "booked: Oslo for 2 nights"
    assert session.close() == 0


def test_eof_ends_the_requests_waiting_on_an_ask(session: Peer) -> None:
    session.call(1, "book", city="Oslo")
    assert session.read()["method"] == "elicitation/create"
    assert session.proc.stdin is not None
    session.proc.stdin.close()
    withdrawn = session.read()  # long before the ask would time out: nobody will answer it (P33, P95)
    assert withdrawn["method"] == "notifications/cancelled"
    response = session.read()
    assert response["id"] == 1 and response["result"]["content"][0]["text"] == "cancelled: Oslo"
    assert session.proc.wait(10) == 0


def test_eof_ends_an_ask_made_after_it(session: Peer) -> None:
    session.call(1, "late_book", city="Oslo", seconds=0.5)
    assert session.proc.stdin is not None
    session.proc.stdin.close()  # before the handler asks: nobody can answer any more
    response = session.read()
    assert response["id"] == 1 and response["result"]["content"][0]["text"] == "cancelled: Oslo"
    assert session.proc.wait(10) == 0


@pytest.mark.parametrize(
    ("mode", "code", "words"), [("refuse", -32600, "Unauthorized"), ("broken", -32603, "Internal")]
)
def test_a_refusing_or_failing_principal_hook_opens_no_session(mode: str, code: int, words: str) -> None:
    p = Peer({"BATON_TEST_PRINCIPAL": mode})
    with p.process:
        error = p.initialize()["error"]
        assert error["code"] == code and words in error["message"]
        p.handshake(1, "tools/list")
        assert "initialize first" in p.read()["error"]["message"]  # no session opened; the process serves on
        p.handshake(2, "ping")
        assert p.read()["result"] == {}
        assert p.close() == 0
