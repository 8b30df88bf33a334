"""The 2025-11-25 side of the server core, in process: `initialize`, sealed session ids, the session
methods, and the bridge that runs a handler's asks as server requests (protocol.md P28-P31).

A scripted client stands in for the transport: it sees every message the server writes on the
request's stream and answers server requests through the session's `Outbound`, as a transport would.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest

from baton import Accepted, Cancelled, Context, Declined, KeyRing, Server, ToolResult
from baton.protocol.era import is_modern
from baton.protocol.messages import Message
from baton.server import Exchange, RequestInfo
from baton.server.outbound import Outbound, PeerError, PeerGone, Stream
from baton.server.sessions import ServerSession, SessionSeal

Answer = Callable[[dict[str, Any]], dict[str, Any] | None]
"""What the scripted client answers to a server request: a response body, or None to stay silent."""


def make_server(**options: Any) -> Server:
    return Server("legacy-tests", state_keys=KeyRing.ephemeral_key(), **options)


def initialize(server: Server, caps: dict[str, Any], transport: str = "stdio") -> ServerSession:
    params = {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": {"name": "t", "version": "1"}}
    reply, session = server.runtime.initialize(Message("initialize", params, 0, True), Exchange(RequestInfo(transport)))  # type: ignore[arg-type]
    assert session is not None, reply.body
    return session


@dataclass
class Client:
    """Records what the server wrote on a request's stream and answers its requests by script."""

    answer: Answer
    written: list[dict[str, Any]]
    outbound: Outbound

    def requests(self) -> list[dict[str, Any]]:
        return [m for m in self.written if "id" in m and "method" in m]

    def notifications(self, method: str) -> list[dict[str, Any]]:
        return [m["params"] for m in self.written if m.get("method") == method and "id" not in m]


def run(
    server: Server,
    session: ServerSession,
    method: str,
    params: dict[str, Any] | None = None,
    answer: Answer = lambda req: None,
    *,
    can_request: bool = True,
) -> tuple[dict[str, Any], Client]:
    """One request of the session through `server.runtime.handle_handshake`, the scripted client answering."""

    async def go() -> tuple[dict[str, Any], Client]:
        outbound = Outbound()
        client = Client(answer, [], outbound)

        async def write(message: dict[str, Any]) -> None:
            client.written.append(message)
            if "id" in message and "method" in message:
                reply = answer(message)
                if reply is not None:
                    asyncio.get_running_loop().call_soon(
                        outbound.answer, {"jsonrpc": "2.0", "id": message["id"], **reply}
                    )

        stream = Stream(write, outbound, can_request=can_request)
        msg = Message(method, params or {}, 7, True)
        reply = await server.runtime.handle_handshake(msg, Exchange(RequestInfo("stdio")), session, stream)
        return reply.body, client

    return asyncio.run(go())


def accept(content: dict[str, Any]) -> Answer:
    return lambda req: {"result": {"action": "accept", "content": content}}


# -- which era ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "params", "header", "modern"),
    [
        ("initialize", {"protocolVersion": "2025-11-25"}, None, False),
        ("initialize", {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}, None, True),
        ("tools/list", {"_meta": {"progressToken": 1}}, None, False),  # a bare _meta is no envelope
        ("tools/list", {}, "2025-11-25", False),
        ("tools/list", {}, "2025-06-18", False),
        ("tools/list", {}, "2026-07-28", True),
        ("tools/list", {}, "1999-01-01", True),  # not a handshake version: the 2026 ladder refuses it
        ("server/discover", {}, None, True),
        ("subscriptions/listen", {}, None, True),
        ("ping", {}, None, False),
    ],
)
def test_one_rule_sorts_every_request(method: str, params: dict[str, Any], header: str | None, modern: bool) -> None:
    assert is_modern(method, params, header) is modern


# -- initialize and the session id --------------------------------------------------------------------


def test_initialize_offers_2025_11_25_whatever_was_asked() -> None:
    server = make_server(title="Legacy", instructions="Be kind")

    @server.resource("test://a")
    def a() -> str:
        return "a"

    for asked in ("2025-11-25", "2025-06-18", "1999-01-01"):
        params = {"protocolVersion": asked, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        reply, session = server.runtime.initialize(
            Message("initialize", params, 3, True), Exchange(RequestInfo("stdio"))
        )
        result = reply.body["result"]
        assert result["protocolVersion"] == "2025-11-25"
        assert result["serverInfo"] == {"name": "legacy-tests", "version": "0.1.0", "title": "Legacy"}
        assert result["instructions"] == "Be kind"
        assert result["capabilities"]["logging"] == {}
        assert result["capabilities"]["resources"] == {"listChanged": True, "subscribe": True}
        assert "resultType" not in result and "_meta" not in result
        assert session is not None and session.id is None  # stdio: the process is the session


def test_initialize_refuses_a_missing_version_and_bad_capabilities() -> None:
    server = make_server()
    for params in ({"capabilities": {}}, {"protocolVersion": "2025-11-25", "capabilities": []}):
        reply, session = server.runtime.initialize(
            Message("initialize", params, 3, True), Exchange(RequestInfo("stdio"))
        )
        assert session is None
        assert reply.body["error"]["code"] == -32602


def test_http_session_ids_are_sealed_to_their_principal() -> None:
    server = make_server()
    ex = Exchange(RequestInfo("http"), principal="alice")
    params = {
        "protocolVersion": "2025-11-25",
        "capabilities": {"elicitation": {"url": {}}},
        "clientInfo": {"name": "t", "version": "1"},
    }
    _, session = server.runtime.initialize(Message("initialize", params, 0, True), ex)
    assert session is not None and session.id is not None
    sid = session.id
    assert all(0x21 <= ord(c) <= 0x7E for c in sid)  # visible ASCII only
    opened = server.runtime.sessions.open(sid, "alice")
    assert opened is not None
    assert (opened.version, opened.capabilities.url, opened.capabilities.form) == ("2025-11-25", True, False)
    assert opened.client_info == {"name": "t", "version": "1"}
    assert server.runtime.sessions.open(sid, "mallory") is None  # another principal
    tampered = sid[:-2] + ("A" if sid[-2] != "A" else "B") + sid[-1]
    assert server.runtime.sessions.open(tampered, "alice") is None
    other = make_server()  # another key ring
    assert other.runtime.sessions.open(sid, "alice") is None


def test_session_ids_expire_and_are_no_request_state() -> None:
    ring = KeyRing.ephemeral_key()
    seal = SessionSeal(ring, "aud", ttl_s=-1)
    from baton.protocol.capabilities import ClientCapabilities

    session = ServerSession("p", "2025-11-25", ClientCapabilities.parse({}))
    assert seal.open(seal.mint(session), "p") is None  # already expired
    server = Server("aud", state_keys=ring)

    @server.tool()
    async def ask(ctx: Context) -> str:
        return str(await ctx.confirm("ok?"))

    # A requestState (bound to a request) never opens as a session id, under the same key and audience.
    from wire import meta

    first = asyncio.run(
        server.runtime.handle(
            Message("tools/call", {"name": "ask", "arguments": {}, "_meta": meta({"elicitation": {}})}, 1, True),
            Exchange(RequestInfo("stdio"), principal="p"),
        )
    )
    token = first.body["result"]["requestState"]  # type: ignore[union-attr]
    assert server.runtime.sessions.open(token, "p") is None


# -- the bridge -----------------------------------------------------------------------------------------


def confirm_server(**options: Any) -> Server:
    server = make_server(**options)

    @server.tool()
    async def greet(ctx: Context, name: str) -> str:
        """Greets after asking."""
        steps = await ctx.once("count", time.monotonic_ns)
        answer = await ctx.elicit(Person, f"Who greets {name}?")
        if isinstance(answer, Declined):
            return f"declined ({steps > 0})"
        if isinstance(answer, Cancelled):
            return "cancelled"
        assert isinstance(answer, Accepted)
        return f"{answer.data.who} greets {name}"

    return server


@dataclass
class Person:
    who: str


def test_an_ask_becomes_an_elicitation_request_on_the_stream() -> None:
    server = confirm_server()
    session = initialize(server, {"elicitation": {}})
    body, client = run(
        server, session, "tools/call", {"name": "greet", "arguments": {"name": "Ann"}}, accept({"who": "Bo"})
    )
    assert body["result"] == {"content": [{"type": "text", "text": "Bo greets Ann"}]}  # no resultType, no _meta
    (request,) = client.requests()
    assert request["method"] == "elicitation/create"
    assert request["params"]["mode"] == "form"
    assert request["params"]["requestedSchema"]["properties"]["who"]["type"] == "string"
    assert "inputResponses" not in str(body) and "requestState" not in str(body)


def test_decline_and_a_silent_client_reach_the_handler() -> None:
    server = confirm_server(ask_timeout_s=0.05)
    session = initialize(server, {"elicitation": {}})
    params = {"name": "greet", "arguments": {"name": "Ann"}}
    body, _ = run(server, session, "tools/call", params, lambda req: {"result": {"action": "decline"}})
    assert body["result"]["content"][0]["text"] == "declined (True)"
    body, client = run(server, session, "tools/call", params)  # never answers
    assert body["result"]["content"][0]["text"] == "cancelled"
    (cancel,) = client.notifications("notifications/cancelled")
    assert cancel["requestId"] == client.requests()[0]["id"]


def test_an_invalid_answer_is_asked_again_in_the_same_request() -> None:
    server = confirm_server()
    session = initialize(server, {"elicitation": {}})
    answers = iter(
        [
            {"result": {"action": "accept", "content": {"who": 3}}},
            {"result": {"action": "accept", "content": {"who": "Cy"}}},
        ]
    )
    body, client = run(
        server, session, "tools/call", {"name": "greet", "arguments": {"name": "Ann"}}, lambda req: next(answers)
    )
    assert body["result"]["content"][0]["text"] == "Cy greets Ann"
    first, second = client.requests()
    assert second["params"]["message"].endswith(first["params"]["message"])
    assert second["params"]["message"] != first["params"]["message"]  # says what was wrong
    assert first["id"] != second["id"]


def test_once_runs_once_across_the_rounds_of_a_session_request() -> None:
    server = make_server()
    runs: list[int] = []

    @server.tool()
    async def twice(ctx: Context) -> str:
        await ctx.once("side-effect", lambda: runs.append(1) or len(runs))
        a = await ctx.confirm("first?", key="a")
        b = await ctx.confirm("second?", key="b")
        return f"{a} {b}"

    session = initialize(server, {"elicitation": {}})
    body, client = run(server, session, "tools/call", {"name": "twice"}, accept({"confirm": True}))
    assert body["result"]["content"][0]["text"] == "True True"
    assert len(client.requests()) == 2
    assert runs == [1]


def test_a_client_error_ends_a_tool_with_a_tool_error_and_a_prompt_with_an_error() -> None:
    server = confirm_server()

    @server.prompt()
    async def brief(ctx: Context) -> str:
        answer = await ctx.elicit(Person, "Who?")
        return str(answer)

    session = initialize(server, {"elicitation": {}})
    refuse: Answer = lambda req: {"error": {"code": -32601, "message": "no elicitation here"}}  # noqa: E731
    body, _ = run(server, session, "tools/call", {"name": "greet", "arguments": {"name": "A"}}, refuse)
    assert body["result"]["isError"] is True
    assert "-32601" in body["result"]["content"][0]["text"]
    body, _ = run(server, session, "prompts/get", {"name": "brief"}, refuse)
    assert body["error"]["code"] == -32603
    assert body["error"]["data"]["input"] == "q1"


def test_a_missing_capability_is_a_tool_error_and_minus_32602_for_a_prompt() -> None:
    server = confirm_server()

    @server.prompt()
    async def brief(ctx: Context) -> str:
        return str(await ctx.elicit(Person, "Who?"))

    session = initialize(server, {})  # no elicitation declared
    body, client = run(server, session, "tools/call", {"name": "greet", "arguments": {"name": "A"}})
    assert body["result"]["isError"] is True  # protocol.md P96
    assert "cannot show one" in body["result"]["content"][0]["text"]
    body, client = run(server, session, "prompts/get", {"name": "brief"})
    assert body["error"]["code"] == -32602
    assert body["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert client.requests() == []


def test_url_asks_carry_one_elicitation_id_and_its_completion() -> None:
    server = make_server()

    @server.tool()
    async def link(ctx: Context) -> str:
        answer = await ctx.elicit_url("Open it", "https://example.com/flow", key="open")
        await ctx.url_completed("open")
        return type(answer).__name__

    session = initialize(server, {"elicitation": {"url": {}}})
    body, client = run(server, session, "tools/call", {"name": "link"}, lambda req: {"result": {"action": "accept"}})
    assert body["result"]["content"][0]["text"] == "Accepted"
    (request,) = client.requests()
    eid = request["params"]["elicitationId"]
    assert len(eid) == 32 and request["params"]["mode"] == "url"
    assert client.notifications("notifications/elicitation/complete") == [{"elicitationId": eid}]


def test_a_stream_that_cannot_ask_gives_minus_32042_for_urls_only() -> None:
    server = make_server()

    @server.tool()
    async def link(ctx: Context) -> str:
        await ctx.elicit_url("Open it", "https://example.com/flow")
        return "done"

    @server.tool()
    async def form(ctx: Context) -> str:
        return str(await ctx.confirm("ok?"))

    session = initialize(server, {"elicitation": {"url": {}, "form": {}}})
    body, _ = run(server, session, "tools/call", {"name": "link"}, can_request=False)
    assert body["error"]["code"] == -32042
    (elicitation,) = body["error"]["data"]["elicitations"]
    assert elicitation["mode"] == "url" and elicitation["url"] == "https://example.com/flow"
    assert elicitation["elicitationId"]
    body, _ = run(server, session, "tools/call", {"name": "form"}, can_request=False)
    assert body["error"]["code"] == -32600
    assert "text/event-stream" in body["error"]["message"]


def test_progress_replayed_by_a_later_round_is_not_sent_again() -> None:
    server = make_server()

    @server.tool()
    async def slow(ctx: Context) -> str:
        await ctx.progress(10, 100)
        await ctx.confirm("go on?")
        await ctx.progress(50, 100)
        return "done"

    session = initialize(server, {"elicitation": {}})
    params = {"name": "slow", "_meta": {"progressToken": "t"}}
    _, client = run(server, session, "tools/call", params, accept({"confirm": True}))
    progress = [(n["progressToken"], n["progress"]) for n in client.notifications("notifications/progress")]
    assert progress == [("t", 10), ("t", 50)]


def test_sampling_and_roots_go_out_as_server_requests() -> None:
    server = make_server()

    @server.tool()
    async def both(ctx: Context) -> str:
        with pytest.warns(Warning):
            sampled = await ctx.sample("hi", max_tokens=5, key="s")
            roots = await ctx.list_roots(key="r")
        return f"{sampled['content']['text']} {roots[0]['uri']}"

    def answer(req: dict[str, Any]) -> dict[str, Any]:
        if req["method"] == "sampling/createMessage":
            return {"result": {"role": "assistant", "content": {"type": "text", "text": "yo"}, "model": "m"}}
        return {"result": {"roots": [{"uri": "file:///w"}]}}

    session = initialize(server, {"sampling": {}, "roots": {"listChanged": True}})
    body, client = run(server, session, "tools/call", {"name": "both"}, answer)
    assert body["result"]["content"][0]["text"] == "yo file:///w"
    assert [r["method"] for r in client.requests()] == ["sampling/createMessage", "roots/list"]
    assert "params" not in client.requests()[1]


# -- session methods -------------------------------------------------------------------------------------


def test_ping_set_level_and_log_filtering() -> None:
    server = make_server()

    @server.tool()
    async def chatty(ctx: Context) -> str:
        for level in ("debug", "info", "error"):
            await ctx.log(level, level)
        return "ok"

    session = initialize(server, {})
    assert run(server, session, "ping")[0]["result"] == {}
    _, client = run(server, session, "tools/call", {"name": "chatty"})
    assert [n["level"] for n in client.notifications("notifications/message")] == ["debug", "info", "error"]
    assert run(server, session, "logging/setLevel", {"level": "loud"})[0]["error"]["code"] == -32602
    assert run(server, session, "logging/setLevel", {"level": "info"})[0]["result"] == {}
    _, client = run(server, session, "tools/call", {"name": "chatty"})
    assert [n["level"] for n in client.notifications("notifications/message")] == ["info", "error"]
    assert run(server, session, "initialize", {"protocolVersion": "2025-11-25"})[0]["error"]["code"] == -32600
    assert run(server, session, "server/discover")[0]["error"]["code"] == -32601


def test_subscriptions_and_resource_errors_in_a_session() -> None:
    server = make_server()
    assert run(server, initialize(server, {}), "resources/subscribe", {"uri": "x://a"})[0]["error"]["code"] == -32601

    @server.resource("x://a")
    def a() -> str:
        return "a"

    @server.resource("x://t/{id}")
    def t(id: str) -> str:
        return id

    session = initialize(server, {})
    assert run(server, session, "resources/subscribe", {"uri": "x://a"})[0]["result"] == {}
    assert run(server, session, "resources/subscribe", {"uri": "x://t/9"})[0]["result"] == {}
    missing = run(server, session, "resources/subscribe", {"uri": "x://nope"})[0]["error"]
    assert (missing["code"], missing["data"]) == (-32002, {"uri": "x://nope"})
    assert session.subscriptions == {"x://a", "x://t/9"}
    assert run(server, session, "resources/unsubscribe", {"uri": "x://a"})[0]["result"] == {}
    assert session.subscriptions == {"x://t/9"}
    read = run(server, session, "resources/read", {"uri": "x://nope"})[0]["error"]
    assert (read["code"], read["data"]) == (-32002, {"uri": "x://nope"})
    result = run(server, session, "resources/read", {"uri": "x://a"})[0]["result"]
    assert result["contents"][0]["text"] == "a" and "ttlMs" not in result and "resultType" not in result
    seen: list[tuple[str, dict[str, Any]]] = []
    unwatch = server.runtime.hub.watch(lambda method, params: seen.append((method, params)))
    server.resource_updated("x://t/9")

    @server.tool()
    def late() -> str:
        return ""

    unwatch()
    server.resource_updated("x://a")
    assert seen == [("notifications/resources/updated", {"uri": "x://t/9"}), ("notifications/tools/list_changed", {})]


def test_results_are_reshaped_for_2025_11_25() -> None:
    server = make_server()

    @server.tool()
    def numbers() -> ToolResult:
        return ToolResult([{"type": "text", "text": "1, 2"}], structured=[1, 2])

    @server.tool()
    def point() -> Point:
        return Point(1)

    session = initialize(server, {})
    tools = {t["name"]: t for t in run(server, session, "tools/list")[0]["result"]["tools"]}
    assert tools["point"]["outputSchema"]["type"] == "object"
    called = run(server, session, "tools/call", {"name": "numbers"})[0]["result"]
    assert "structuredContent" not in called and called["content"]  # not an object: 2025-11-25 cannot carry it
    assert run(server, session, "tools/call", {"name": "point"})[0]["result"]["structuredContent"] == {"x": 1}


@dataclass
class Point:
    x: int


# -- the outbound table ----------------------------------------------------------------------------------


def test_outbound_answers_only_what_it_asked() -> None:
    async def go() -> None:
        outbound = Outbound()
        rid, future = outbound.open()
        assert not outbound.answer({"jsonrpc": "2.0", "id": "baton-99", "result": {}})
        assert not outbound.answer({"jsonrpc": "2.0", "id": True, "result": {}})
        assert outbound.answer({"jsonrpc": "2.0", "id": rid, "error": {"code": -1, "message": "no"}})
        with pytest.raises(PeerError) as caught:
            await future
        assert caught.value.code == -1
        assert not outbound.answer({"jsonrpc": "2.0", "id": rid, "result": {}})  # answered once only
        _, pending = outbound.open()
        outbound.fail_all("gone")
        with pytest.raises(PeerGone):
            await pending
        assert len(outbound) == 0

    asyncio.run(go())


# -- bounds and withdrawals (from review) ------------------------------------------------------------------


def test_a_refused_ask_withdraws_the_others_before_the_answer() -> None:
    server = make_server()

    @server.tool()
    async def both(ctx: Context) -> str:
        with pytest.warns(Warning):
            await ctx.gather(ctx.sample("hi", max_tokens=5, key="s"), ctx.elicit(Person, "Who?", key="e"))
        return "unreachable"

    def answer(req: dict[str, Any]) -> dict[str, Any] | None:
        if req["method"] == "sampling/createMessage":
            return {"error": {"code": -1, "message": "user rejected"}}
        return None  # the form stays open

    session = initialize(server, {"sampling": {}, "elicitation": {}})
    body, client = run(server, session, "tools/call", {"name": "both"}, answer)
    assert body["result"]["isError"] is True
    assert "resultType" not in body["result"]  # reshaped for 2025-11-25 like any result
    form = next(r for r in client.requests() if r["method"] == "elicitation/create")
    assert client.notifications("notifications/cancelled") == [
        {"requestId": form["id"], "reason": "the request it served was cancelled"}
    ]


def test_the_last_round_asks_nothing_it_cannot_use() -> None:
    from baton.server.handshake import MAX_ROUNDS

    server = make_server()

    @server.tool()
    async def endless(ctx: Context) -> str:
        n = 0
        while True:
            n += 1
            await ctx.confirm(f"again {n}?", key=f"k{n}")

    session = initialize(server, {"elicitation": {}})
    body, client = run(server, session, "tools/call", {"name": "endless"}, accept({"confirm": True}))
    assert body["error"]["code"] == -32603
    assert len(client.requests()) == MAX_ROUNDS - 1


def test_subscriptions_are_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.server import subscriptions

    monkeypatch.setattr(subscriptions, "MAX_SUBSCRIPTIONS", 2)
    server = make_server()

    @server.resource("x://t/{id}")
    def t(id: str) -> str:
        return id

    session = initialize(server, {})
    for n in (1, 2, 2):  # subscribing again to one held is no new subscription
        assert run(server, session, "resources/subscribe", {"uri": f"x://t/{n}"})[0]["result"] == {}
    assert run(server, session, "resources/subscribe", {"uri": "x://t/3"})[0]["error"]["code"] == -32602
    long = "x://t/" + "a" * subscriptions.MAX_SUBSCRIBED_URI
    assert run(server, session, "resources/unsubscribe", {"uri": "x://t/1"})[0]["result"] == {}
    assert run(server, session, "resources/subscribe", {"uri": long})[0]["error"]["code"] == -32602
    assert session.subscriptions == {"x://t/2"}


def test_session_ids_stay_small_whatever_the_client_declares() -> None:
    server = make_server()
    caps = {"elicitation": {"form": {}}, "sampling": {"tools": {}}, "experimental": {"x": "y" * 50_000}}
    info = {"name": "n" * 10_000, "version": "1", "title": "t" * 10_000}
    params = {"protocolVersion": "2025-11-25", "capabilities": caps, "clientInfo": info}
    _, session = server.runtime.initialize(Message("initialize", params, 0, True), Exchange(RequestInfo("http")))
    assert session is not None and session.id is not None
    assert len(session.id) < 1024
    opened = server.runtime.sessions.open(session.id, "anonymous")
    assert opened is not None
    assert (opened.capabilities.form, opened.capabilities.sampling_tools, opened.capabilities.url) == (
        True,
        True,
        False,
    )


def test_rebuilt_tables_never_reuse_an_id() -> None:
    async def go() -> None:
        first, _ = Outbound().open()
        second, _ = Outbound().open()
        assert first != second and first.startswith("baton-")

    asyncio.run(go())


def test_open_questions_are_capped_per_session_with_a_clear_tool_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from baton.server import handshake

    server = make_server()

    @server.tool()
    async def three(ctx: Context) -> str:
        answers = await ctx.gather(*(ctx.confirm(f"{n}?", key=f"k{n}") for n in range(3)))
        return str(answers)

    session = initialize(server, {"elicitation": {}})
    monkeypatch.setattr(handshake, "MAX_OPEN_ASKS_PER_SESSION", 2)
    body, client = run(server, session, "tools/call", {"name": "three"}, accept({"confirm": True}))
    assert body["result"]["isError"] is True  # protocol.md P95
    assert (
        "this session already has too many questions waiting for answers (at most 2)"
        in (body["result"]["content"][0]["text"])
    )
    assert client.requests() == []  # none was sent
    monkeypatch.setattr(handshake, "MAX_OPEN_ASKS_PER_SESSION", 3)
    body, _ = run(server, session, "tools/call", {"name": "three"}, accept({"confirm": True}))
    assert body["result"]["content"][0]["text"] == "(True, True, True)"
    assert server.runtime.handshake.open_asks == 0  # every slot given back
    monkeypatch.setattr(handshake, "MAX_OPEN_ASKS", 2)  # and per instance, across sessions
    body, _ = run(server, initialize(server, {"elicitation": {}}), "tools/call", {"name": "three"})
    assert "this server already has too many questions waiting" in body["result"]["content"][0]["text"]
