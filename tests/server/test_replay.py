"""The replay engine, driven in-process through `server.runtime.handle` with a real key ring (no transport)."""

from __future__ import annotations

import asyncio
import warnings
from dataclasses import dataclass
from typing import Any

import pytest
from wire import accept, meta

from baton import (
    Accepted,
    BatonDeprecationWarning,
    Cancelled,
    CapabilityMissing,
    Context,
    Declined,
    KeyRing,
    Server,
)
from baton.protocol.messages import Message
from baton.server import Exchange, Reply, RequestInfo

FORM = {"elicitation": {"form": {}}}


def make_server() -> Server:
    return Server("replay-tests", state_keys=KeyRing.ephemeral_key())


def run(server: Server, method: str, params: dict[str, Any], caps: dict[str, Any] | None = None) -> dict[str, Any]:
    body = {**params, "_meta": meta(FORM if caps is None else caps)}
    reply = asyncio.run(server.runtime.handle(Message(method, body, 1, True), Exchange(RequestInfo("stdio"))))
    assert isinstance(reply, Reply)
    return reply.body


def call(server: Server, tool: str, caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return run(server, "tools/call", {"name": tool, "arguments": extra.pop("arguments", {}), **extra}, caps)


def finish(server: Server, tool: str, first: dict[str, Any], answers: dict[str, Any], **kw: Any) -> dict[str, Any]:
    return call(server, tool, inputResponses=answers, requestState=first["result"]["requestState"], **kw)


@dataclass
class Name:
    name: str


def test_gather_asks_everything_in_one_round() -> None:
    server = make_server()

    @server.tool()
    async def both(ctx: Context) -> str:
        a, b = await ctx.gather(ctx.confirm("A?", key="a"), ctx.elicit(Name, "Name?", key="b"))
        return f"{a}/{b.data.name}"

    r1 = call(server, "both")
    assert set(r1["result"]["inputRequests"]) == {"a", "b"}
    r2 = finish(server, "both", r1, {"a": accept(confirm=True), "b": accept(name="Ann")})
    assert r2["result"]["content"][0]["text"] == "True/Ann"


def test_once_runs_a_step_once_per_flow() -> None:
    server = make_server()
    calls: list[int] = []

    @server.tool()
    async def quoted(ctx: Context) -> str:
        quote = await ctx.once("quote", lambda: calls.append(1) or {"price": 10})
        ok = await ctx.confirm(f"Pay {quote['price']}?")
        return f"paid={ok}"

    r1 = call(server, "quoted")
    r2 = finish(server, "quoted", r1, {"q1": accept(confirm=True)})
    assert r2["result"]["content"][0]["text"] == "paid=True"
    assert calls == [1]


def test_changed_question_is_not_answered_by_an_old_answer() -> None:
    server = make_server()
    question = {"text": "Delete A?"}

    @server.tool()
    async def moving(ctx: Context) -> str:
        return str(await ctx.confirm(question["text"]))

    r1 = call(server, "moving")
    question["text"] = "Delete B?"  # the replay asks something else at the same key
    r2 = finish(server, "moving", r1, {"q1": accept(confirm=True)})
    assert r2["result"]["resultType"] == "input_required"
    assert r2["result"]["inputRequests"]["q1"]["params"]["message"] == "Delete B?"


def test_decline_and_cancel_come_back_typed() -> None:
    server = make_server()
    seen: list[Any] = []

    @server.tool()
    async def ask(ctx: Context) -> str:
        answer = await ctx.elicit(Name, "Name?")
        seen.append(answer)
        return type(answer).__name__

    for action, kind in (("decline", Declined), ("cancel", Cancelled)):
        r1 = call(server, "ask")
        r2 = finish(server, "ask", r1, {"q1": {"action": action}})
        assert r2["result"]["content"][0]["text"] == kind.__name__
    assert isinstance(seen[-1], Cancelled)


def test_structurally_invalid_responses_are_errors_not_results() -> None:
    server = make_server()

    @server.tool()
    async def ask(ctx: Context) -> str:
        return str(await ctx.confirm("Sure?", key="sure"))

    r1 = call(server, "ask")
    assert finish(server, "ask", r1, None)["error"]["code"] == -32602  # type: ignore[arg-type]
    assert finish(server, "ask", r1, {"sure": 12345})["error"]["code"] == -32602
    # An unknown extra key is ignored; a missing answer is asked again.
    again = finish(server, "ask", r1, {"other": accept(confirm=True)})
    assert again["result"]["resultType"] == "input_required"


def test_first_round_answer_without_state_is_validated() -> None:
    server = make_server()

    @server.tool()
    async def greet(ctx: Context) -> str:
        answer = await ctx.elicit(Name, "Name?", key="user_name")
        return f"hi {answer.data.name}" if isinstance(answer, Accepted) else "no"

    ok = call(server, "greet", inputResponses={"user_name": accept(name="Bo"), "extra": {"x": 1}})
    assert ok["result"]["content"][0]["text"] == "hi Bo"
    bad = call(server, "greet", inputResponses={"user_name": accept(name=5)})
    assert bad["result"]["resultType"] == "input_required"


def test_missing_capability_can_be_caught_or_becomes_32021_that_says_why() -> None:
    server = make_server()

    @server.tool()
    async def careful(ctx: Context) -> str:
        try:
            return str(await ctx.confirm("Sure?"))
        except CapabilityMissing:
            return "fallback"

    @server.tool()
    async def careless(ctx: Context) -> str:
        return str(await ctx.confirm("Sure?"))

    assert call(server, "careful", caps={})["result"]["content"][0]["text"] == "fallback"
    error = call(server, "careless", caps={})["error"]  # 2026-07-28 requires -32021 (protocol.md P96)
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert error["message"].startswith(
        "Tool careless needs the user to fill in a form, and this client cannot show one. This request needs"
    )

    # A resource or prompt says it too.
    @server.prompt()
    async def asks(ctx: Context) -> str:
        return str(await ctx.confirm("Sure?"))

    error = run(server, "prompts/get", {"name": "asks"}, caps={})["error"]
    assert error["code"] == -32021 and error["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}


def test_deprecated_asks_warn_once_at_the_call_site_and_are_gated() -> None:
    server = make_server()

    @server.tool()
    async def roots_of(ctx: Context) -> str:
        roots = await ctx.list_roots()
        return ",".join(r["uri"] for r in roots)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("default")
        r1 = call(server, "roots_of", caps={"roots": {}})
        r2 = finish(server, "roots_of", r1, {"q1": {"roots": [{"uri": "file:///a"}]}}, caps={"roots": {}})
        assert call(server, "roots_of", caps=FORM)["error"]["code"] == -32021
    assert r2["result"]["content"][0]["text"] == "file:///a"
    deprecations = [w for w in caught if issubclass(w.category, BatonDeprecationWarning)]
    assert len(deprecations) == 1 and deprecations[0].filename == __file__


def test_url_mode_needs_https_and_the_url_capability() -> None:
    server = make_server()

    @server.tool()
    async def connect(ctx: Context, url: str) -> str:
        answer = await ctx.elicit_url("Connect your account", url)
        return type(answer).__name__

    caps = {"elicitation": {"url": {}}}
    r1 = call(server, "connect", caps=caps, arguments={"url": "https://example.com/connect"})
    assert r1["result"]["inputRequests"]["q1"]["params"]["mode"] == "url"
    insecure = call(server, "connect", caps=caps, arguments={"url": "http://example.com/connect"})
    assert insecure["result"]["isError"] is True
    refused = call(server, "connect", caps=FORM, arguments={"url": "https://example.com/"})["error"]
    assert refused["code"] == -32021 and "open a link" in refused["message"]


def test_resources_and_prompts_can_ask_but_lists_cannot() -> None:
    server = make_server()

    @server.resource("memo://{topic}")
    async def memo(ctx: Context, topic: str) -> str:
        return f"{topic}: {await ctx.confirm('Show?')}"

    r1 = run(server, "resources/read", {"uri": "memo://x"})
    assert r1["result"]["resultType"] == "input_required"
    r2 = run(
        server,
        "resources/read",
        {
            "uri": "memo://x",
            "inputResponses": {"q1": accept(confirm=True)},
            "requestState": r1["result"]["requestState"],
        },
    )
    assert r2["result"]["contents"][0]["text"] == "x: True"
    other = run(
        server,
        "resources/read",
        {
            "uri": "memo://y",
            "inputResponses": {"q1": accept(confirm=True)},
            "requestState": r1["result"]["requestState"],
        },
    )
    assert other["error"]["message"] == "Invalid or expired requestState"


def test_pagination_and_bad_cursor() -> None:
    server = Server("pages", state_keys=KeyRing.ephemeral_key(), page_size=2)
    for i in range(5):
        server.add_tool(lambda: "x", name=f"t{i}")
    names, cursor = [], None
    while True:
        result = run(server, "tools/list", {"cursor": cursor} if cursor else {})["result"]
        names += [t["name"] for t in result["tools"]]
        cursor = result.get("nextCursor")
        if not cursor:
            break
    assert names == [f"t{i}" for i in range(5)]
    assert run(server, "tools/list", {"cursor": "!!"})["error"]["code"] == -32602


def test_tool_errors_and_internal_failures() -> None:
    server = make_server()

    @server.tool()
    def boom() -> str:
        raise RuntimeError("secret detail")

    result = call(server, "boom")["result"]
    assert result["isError"] is True and "secret detail" not in result["content"][0]["text"]


def test_registration_errors_are_clear() -> None:
    server = make_server()
    with pytest.raises(ValueError, match="tool name"):
        server.add_tool(lambda: "x", name="bad name!")
    with pytest.raises(TypeError, match="cannot be described"):

        @server.tool()
        def weird(x: complex) -> str:
            return ""

    with pytest.raises(ValueError, match="x-mcp-header"):
        server.add_tool(
            lambda **kw: "x",
            name="hdr",
            input_schema={"type": "object", "properties": {"n": {"type": "number", "x-mcp-header": "N"}}},
        )


ADDRESS_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "address": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        "kind": {"enum": ["home", "work"]},
    },
    "required": ["name"],
    "additionalProperties": False,
}


def test_arguments_are_checked_against_an_explicit_input_schema() -> None:
    """mcp-fuzzer called a tool given `input_schema=` with a string where its schema asks for an object, and
    the handler ran: the arguments are now checked against the schema first, and a mismatch is a tool error
    naming where and what, which the model can fix (protocol.md P17, P106)."""
    server = make_server()
    ran: list[dict[str, Any]] = []

    def record(**arguments: Any) -> str:
        ran.append(arguments)
        return "ok"

    server.add_tool(record, name="address", input_schema=ADDRESS_SCHEMA)
    refused = call(server, "address", arguments={"name": "x", "address": "<svg/onload=alert(1)>"})["result"]
    assert refused["isError"] is True
    text = refused["content"][0]["text"]
    assert "address" in text and "not of type 'object'" in text, text
    assert call(server, "address", arguments={"name": "x", "extra": 1})["result"]["isError"] is True
    assert call(server, "address", arguments={"kind": "home"})["result"]["isError"] is True  # name is required
    long = call(server, "address", arguments={"name": "x", "kind": "w" * 5000})["result"]
    assert long["isError"] is True and len(long["content"][0]["text"]) < 400  # the quoted value is cut short
    assert ran == []
    good = call(server, "address", arguments={"name": "x", "address": {"city": "Oslo"}, "kind": "home"})["result"]
    assert good.get("isError") is not True, good
    assert ran == [{"name": "x", "address": {"city": "Oslo"}, "kind": "home"}]


def test_an_input_schema_that_is_not_json_schema_is_refused_at_registration() -> None:
    server = make_server()
    with pytest.raises(ValueError, match="tool 'bad': input_schema is not a valid JSON Schema"):
        server.add_tool(lambda **kw: "x", name="bad", input_schema={"type": "object", "properties": {"n": {"type": 5}}})
