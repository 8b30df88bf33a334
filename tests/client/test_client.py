"""`baton.client.Client` over real loopback HTTP and a real stdio subprocess.

Most tests drive a scriptable raw mock (tests/servers/mock_mcp.py) that records every request, so the
wire is checked exactly and misbehaving servers are easy; the rest run against `baton serve
examples/everything.py` over HTTP and stdio, including a step-mode round resumed in another process.
"""

from __future__ import annotations

import asyncio
import base64
import json
import logging
import os
import sys
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from servers.mock_mcp import Delay, Err, MockMcp, Seen, Sse
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT, SERVERS
from support.processes import free_port
from support.serve import RunningServer

from baton import McpError
from baton.client import Accepted, Answer, Cancelled, ClientError, Declined, InvalidReply, Question, Round
from baton.client import Client as AnyEraClient
from baton.client.deadline import DeadlineExceeded
from baton.forms import BooleanField


def Client(*args: Any, **kwargs: Any) -> AnyEraClient:
    """The client pinned to 2026-07-28: these tests count and read the driver's legs, which a probe
    would precede (the probe and the default are tested in test_client_handshake.py and below)."""
    kwargs.setdefault("protocol", "2026-07-28")
    return AnyEraClient(*args, **kwargs)


def test_the_default_client_probes_for_the_era() -> None:
    assert AnyEraClient("http://127.0.0.1:9/mcp").protocol == "auto"


pytestmark = pytest.mark.timeout(120)

T = TypeVar("T")
VERSION = "2026-07-28"
PV = "io.modelcontextprotocol/protocolVersion"
CAPS = "io.modelcontextprotocol/clientCapabilities"
INFO = "io.modelcontextprotocol/clientInfo"
# Opaque state with non-ASCII, quotes, backslashes, a line separator and base64 punctuation.
STATE = 'v1.é"\'+/==\\ ☃\u2028 "quoted" +/=='
EVERYTHING = "examples/everything.py"
FLOW_TIMEOUT_S = 30.0


def run(coro: Coroutine[Any, Any, T], timeout: float = FLOW_TIMEOUT_S) -> T:
    """Run one coroutine in a fresh event loop, bounded in time."""

    async def bounded() -> T:
        return await asyncio.wait_for(coro, timeout)

    return asyncio.run(bounded())


def b64(text: str) -> str:
    return "=?base64?" + base64.b64encode(text.encode()).decode() + "?="


@pytest.fixture
@needs("process")
def mock() -> Iterator[MockMcp]:
    server = MockMcp().start(free_port())
    yield server
    server.stop()


# -- script helpers -----------------------------------------------------------------------------------


def form_ask(message: str = "Confirm?", props: dict[str, Any] | None = None, required: list[str] | None = None) -> Any:
    schema = {
        "type": "object",
        "properties": props if props is not None else {"confirm": {"type": "boolean"}},
        "required": required if required is not None else ["confirm"],
    }
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


def url_ask() -> dict[str, Any]:
    return {
        "method": "elicitation/create",
        "params": {"mode": "url", "message": "Sign in", "url": "https://example.com/auth", "elicitationId": "e1"},
    }


def ask(asks: dict[str, Any] | None = None, state: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "input_required"}
    if asks is not None:
        result["inputRequests"] = asks
    if state is not None:
        result["requestState"] = state
    return result


def done(text: str = "ok") -> dict[str, Any]:
    return {"resultType": "complete", "content": [{"type": "text", "text": text}]}


def tools(*items: dict[str, Any], ttl: int | None = 0, cursor: str | None = None) -> dict[str, Any]:
    result: dict[str, Any] = {"resultType": "complete", "tools": list(items), "cacheScope": "public"}
    if ttl is not None:
        result["ttlMs"] = ttl
    if cursor is not None:
        result["nextCursor"] = cursor
    return result


def text_of(result: dict[str, Any]) -> str:
    return "".join(b.get("text", "") for b in result.get("content") or [] if b.get("type") == "text")


def retry_part(seen: Seen) -> dict[str, Any]:
    """The params of a leg without `_meta` and the retry members: must equal the original params."""
    return {k: v for k, v in seen.params.items() if k not in ("_meta", "inputResponses", "requestState")}


async def confirm(question: Question) -> Answer:
    return Accepted({"confirm": True})


def check_meta(seen: Seen, caps: dict[str, Any]) -> None:
    assert seen.meta[PV] == VERSION
    assert seen.meta[CAPS] == caps
    assert seen.meta[INFO] == {"name": "baton-client", "version": "0.1.0"}
    assert seen.headers["mcp-protocol-version"] == seen.meta[PV]
    assert seen.headers["mcp-method"] == seen.method
    assert seen.headers["content-type"] == "application/json"
    accept = seen.headers["accept"]
    assert "application/json" in accept
    assert "text/event-stream" in accept


# -- 1. _meta and standard headers on every leg -------------------------------------------------------

HEADER_TOOL_NAME = "déploy ☃"
HEADER_TOOL = {
    "name": HEADER_TOOL_NAME,
    "inputSchema": {
        "type": "object",
        "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
            "dry": {"type": "boolean", "x-mcp-header": "Dry-Run"},
            "target": {"type": "object", "properties": {"zone": {"type": "string", "x-mcp-header": "Zone"}}},
            "note": {"type": "string"},
        },
    },
}


def test_every_leg_carries_meta_and_standard_headers(mock: MockMcp) -> None:
    def call(seen: Seen) -> dict[str, Any]:
        return ask({"q": form_ask()}, STATE) if "requestState" not in seen.params else done()

    mock.on("tools/list", tools(HEADER_TOOL, {"name": "plain", "inputSchema": {"type": "object"}}))
    mock.on("tools/call", call)
    mock.on("prompts/get", ask({"q": form_ask()}, "p-state"), {"resultType": "complete", "messages": []})
    mock.on("resources/read", {"resultType": "complete", "contents": [], "ttlMs": 0, "cacheScope": "public"})
    arguments = {"region": "Zürich", "count": 42, "dry": False, "target": {"zone": "eu-1a"}, "note": "n"}

    async def flow() -> None:
        async with Client(mock.url, on_form=confirm) as client:
            names = [t["name"] for t in await client.list_tools()]
            assert names == [HEADER_TOOL_NAME, "plain"]
            assert text_of(await client.call_tool(HEADER_TOOL_NAME, arguments)) == "ok"
            await client.call_tool(HEADER_TOOL_NAME, {"region": "us", "count": -7, "dry": True})
            await client.call_tool("plain", {"region": "ignored"})
            await client.get_prompt("invité ☂", {"who": "ünï"})
            await client.read_resource("test://ré/sumé")
            await client.read_resource("test://plain")

    run(flow())
    legs = mock.requests()
    assert [s.method for s in legs] == [
        "tools/list",
        *["tools/call"] * 6,
        "prompts/get",
        "prompts/get",
        *["resources/read"] * 2,
    ]
    caps: dict[str, Any] = {"elicitation": {"form": {}}}
    for seen in legs:
        check_meta(seen, caps)
    assert "mcp-name" not in legs[0].headers
    calls = mock.requests("tools/call")
    # Both legs of the first flow: the same name header (base64, not ASCII) and the same param headers.
    for seen in calls[:2]:
        assert seen.headers["mcp-name"] == b64(HEADER_TOOL_NAME)
        params = {k: v for k, v in seen.headers.items() if k.startswith("mcp-param-")}
        assert params == {
            "mcp-param-region": b64("Zürich"),
            "mcp-param-count": "42",
            "mcp-param-dry-run": "false",
            "mcp-param-zone": "eu-1a",
        }
    for seen in calls[2:4]:
        params = {k: v for k, v in seen.headers.items() if k.startswith("mcp-param-")}
        assert params == {"mcp-param-region": "us", "mcp-param-count": "-7", "mcp-param-dry-run": "true"}
    for seen in calls[4:]:
        assert seen.headers["mcp-name"] == "plain"
        assert not [k for k in seen.headers if k.startswith("mcp-param-")]
    for seen in mock.requests("prompts/get"):
        assert seen.headers["mcp-name"] == b64("invité ☂")
    reads = mock.requests("resources/read")
    assert reads[0].headers["mcp-name"] == b64("test://ré/sumé")
    assert reads[1].headers["mcp-name"] == "test://plain"


# -- 2. capabilities follow the handlers ---------------------------------------------------------------


async def raw_handler(params: dict[str, Any]) -> dict[str, Any]:
    return {}


@pytest.mark.parametrize(
    ("handlers", "expected"),
    [
        ({}, {}),
        ({"on_form": confirm}, {"elicitation": {"form": {}}}),
        ({"on_url": confirm}, {"elicitation": {"url": {}}}),
        ({"on_form": confirm, "on_url": confirm}, {"elicitation": {"form": {}, "url": {}}}),
        ({"on_form": confirm, "on_sampling": raw_handler}, {"elicitation": {"form": {}}, "sampling": {}}),
        (
            {"on_form": confirm, "on_url": confirm, "on_sampling": raw_handler, "on_roots": raw_handler},
            {"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}},
        ),
    ],
    ids=["none", "form", "url", "form+url", "form+sampling", "all"],
)
@pytest.mark.filterwarnings("ignore::DeprecationWarning")  # once per process: checked in a fresh one below
def test_capabilities_follow_the_handlers(mock: MockMcp, handlers: dict[str, Any], expected: dict[str, Any]) -> None:
    mock.on("server/discover", {"resultType": "complete", "supportedVersions": [VERSION], "capabilities": {}})

    async def flow() -> None:
        async with Client(mock.url, **handlers) as client:
            assert client.capabilities == expected
            await client.discover()

    run(flow())
    (seen,) = mock.requests()
    check_meta(seen, expected)


DEPRECATION_SCRIPT = """
import json, warnings
warnings.simplefilter("always")
from baton.client import Client

async def handler(params):
    return {}

with warnings.catch_warnings(record=True) as got:
    warnings.simplefilter("always")
    clients = [
        Client("http://127.0.0.1:9/mcp", on_sampling=handler),  # line 12
        Client("http://127.0.0.1:9/mcp", on_sampling=handler, on_roots=handler),
        Client("http://127.0.0.1:9/mcp", on_roots=handler),
        Client("http://127.0.0.1:9/mcp", on_sampling=handler, on_roots=handler),
    ]
print(json.dumps({
    "warnings": [[w.category.__name__, str(w.message), w.filename, w.lineno] for w in got],
    "caps": [c.capabilities for c in clients],
}))
"""


@pytest.mark.process
def test_deprecated_capabilities_warn_once_per_process(tmp_path: Path) -> None:
    script = tmp_path / "deprecations.py"
    script.write_text(DEPRECATION_SCRIPT)
    out = processes.run([sys.executable, str(script)], capture_output=True, text=True, timeout=30, check=True)
    data = json.loads(out.stdout)
    got = data["warnings"]
    assert [w[0] for w in got] == ["DeprecationWarning", "DeprecationWarning"], got
    assert "sampling" in got[0][1]
    assert "roots" in got[1][1]
    assert all(w[2] == str(script) for w in got), got  # stacklevel points at the caller
    assert [w[3] for w in got] == [12, 13]
    assert data["caps"] == [
        {"sampling": {}},
        {"sampling": {}, "roots": {}},
        {"roots": {}},
        {"sampling": {}, "roots": {}},
    ]


# -- 3. the MRTR driver -------------------------------------------------------------------------------


def test_retry_legs_new_id_same_params_state_echoed(mock: MockMcp) -> None:
    def call(seen: Seen) -> dict[str, Any]:
        if "requestState" not in seen.params:
            name = form_ask("Your name?", {"name": {"type": "string"}}, ["name"])
            return ask({"a": form_ask(), "b": name}, STATE)
        return done()

    mock.on("tools/call", call)
    asked: list[str] = []

    async def answer(question: Question) -> Answer:
        asked.append(question.key)
        return Accepted({"confirm": True}) if question.key == "a" else Accepted({"name": "Ada"})

    arguments = {"x": [1, {"y": "é"}], "z": None}

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=answer) as client:
            return await client.call_tool("t", arguments)

    assert text_of(run(flow())) == "ok"
    first, second = mock.requests()
    assert first.id != second.id
    assert retry_part(first) == retry_part(second) == {"name": "t", "arguments": arguments}
    assert "requestState" not in first.params
    assert "inputResponses" not in first.params
    assert second.params["requestState"] == STATE
    assert second.params["inputResponses"] == {
        "a": {"action": "accept", "content": {"confirm": True}},
        "b": {"action": "accept", "content": {"name": "Ada"}},
    }
    assert sorted(asked) == ["a", "b"]
    for seen in (first, second):
        check_meta(seen, {"elicitation": {"form": {}}})


def test_multi_round_sends_only_this_rounds_answers_and_never_invents_state(mock: MockMcp) -> None:
    mock.on(
        "tools/call",
        ask({"k1": form_ask()}, "s1"),
        ask({"k2": form_ask(), "k3": form_ask()}),  # no state this round
        ask({"k4": form_ask()}, "s3"),
        done("three rounds"),
    )

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.call_tool("t", {"a": 1})

    assert text_of(run(flow())) == "three rounds"
    legs = mock.requests()
    assert len(legs) == 4
    assert len({s.id for s in legs}) == 4
    assert all(retry_part(s) == {"name": "t", "arguments": {"a": 1}} for s in legs)
    yes = {"action": "accept", "content": {"confirm": True}}
    assert legs[1].params["inputResponses"] == {"k1": yes}
    assert legs[1].params["requestState"] == "s1"
    assert legs[2].params["inputResponses"] == {"k2": yes, "k3": yes}
    assert "requestState" not in legs[2].params  # none received, none sent
    assert legs[3].params["inputResponses"] == {"k4": yes}
    assert legs[3].params["requestState"] == "s3"


def test_parallel_flows_never_mix(mock: MockMcp) -> None:
    flows = ["A", "B", "C", "D", "E", "F"]

    def call(seen: Seen) -> Any:
        flow = seen.args["flow"]
        if "requestState" not in seen.params:
            # Hold every first leg a moment, so all flows are in flight together.
            return Delay(0.2, ask({f"k-{flow}": form_ask(f"flow {flow}")}, f"state-{flow}-é+/="))
        keys = ",".join(sorted(seen.params.get("inputResponses") or {}))
        return Delay(0.05 * flows.index(flow), done(f"{flow}|{seen.params['requestState']}|{keys}"))

    mock.on("tools/call", call)

    async def answer(question: Question) -> Answer:
        await asyncio.sleep(0.01)
        return Accepted({"confirm": question.message == f"flow {question.key[2:]}"})

    async def all_flows() -> list[dict[str, Any]]:
        async with Client(mock.url, on_form=answer) as client:
            return await asyncio.gather(*(client.call_tool("t", {"flow": f}) for f in flows))

    results = run(all_flows())
    assert [text_of(r) for r in results] == [f"{f}|state-{f}-é+/=|k-{f}" for f in flows]
    retries = [s for s in mock.requests() if "requestState" in s.params]
    assert len(retries) == len(flows)
    for seen in retries:
        flow = seen.args["flow"]
        assert seen.params["requestState"] == f"state-{flow}-é+/="
        assert seen.params["inputResponses"] == {f"k-{flow}": {"action": "accept", "content": {"confirm": True}}}
    assert len({s.id for s in mock.requests()}) == 2 * len(flows)


def test_state_only_round_is_retried_with_the_state(mock: MockMcp) -> None:
    mock.on("tools/call", ask(state=STATE), ask({}, "second"), done("after load shedding"))

    async def flow() -> dict[str, Any]:
        async with Client(mock.url) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "after load shedding"
    first, second, third = mock.requests()
    assert second.params["requestState"] == STATE
    assert third.params["requestState"] == "second"
    assert "inputResponses" not in second.params
    assert "inputResponses" not in third.params
    assert first.id != second.id != third.id


def test_state_only_round_pauses_before_retrying(mock: MockMcp, monkeypatch: pytest.MonkeyPatch) -> None:
    mock.on("tools/call", ask(state="shed"), done())
    real_sleep = asyncio.sleep
    main = threading.get_ident()
    pauses: list[float] = []

    async def sleep(delay: float, result: Any = None) -> Any:
        if threading.get_ident() == main and delay > 0:
            pauses.append(delay)
        return await real_sleep(delay, result)

    monkeypatch.setattr(asyncio, "sleep", sleep)  # the module core.py uses

    async def flow() -> dict[str, Any]:
        async with Client(mock.url) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "ok"
    assert pauses, "no pause before retrying a state-only round"


@pytest.mark.parametrize("method", ["tools/call", "prompts/get", "resources/read"])
def test_missing_result_type_is_complete(mock: MockMcp, method: str) -> None:
    untyped = {"content": [{"type": "text", "text": "old"}], "messages": [], "contents": []}
    mock.on(method, untyped)

    async def flow() -> dict[str, Any]:
        async with Client(mock.url) as client:
            if method == "tools/call":
                return await client.call_tool("t")
            if method == "prompts/get":
                return await client.get_prompt("p")
            return await client.read_resource("test://r")

    assert run(flow()) == untyped
    assert len(mock.requests()) == 1


@pytest.mark.parametrize(
    "result",
    [
        {"resultType": "task", "task": {"taskId": "t1"}},
        {"resultType": "Complete", "content": []},
        {"resultType": "input_required"},  # neither inputRequests nor requestState
        {"resultType": "input_required", "requestState": 42},
        {"resultType": "input_required", "inputRequests": [form_ask()]},
    ],
    ids=["unknown", "wrong-case", "empty-input-required", "state-not-string", "asks-not-object"],
)
def test_invalid_result_raises_client_error(mock: MockMcp, result: dict[str, Any]) -> None:
    mock.on("tools/call", result)

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.call_tool("t")

    with pytest.raises(ClientError):
        run(flow())
    assert len(mock.requests()) == 1  # nothing retried


@pytest.mark.parametrize(("asked", "ok"), [(3, True), (4, False)])
def test_max_rounds(mock: MockMcp, asked: int, ok: bool) -> None:
    mock.on("tools/call", *[ask({f"r{i}": form_ask()}, f"s{i}") for i in range(asked)], done("finished"))

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm, max_rounds=3) as client:
            return await client.call_tool("t")

    if ok:
        assert text_of(run(flow())) == "finished"
    else:
        with pytest.raises(ClientError, match="3 rounds"):
            run(flow())
    assert len(mock.requests()) == 4  # the first leg and one retry per round answered, never more


def test_the_deadline_bounds_the_server_not_the_person(mock: MockMcp) -> None:
    """Time inside a question handler is the person's: it does not count against deadline_s (protocol.md
    P90); a slow server still runs into it, and the error says which deadline, after how long, how to raise it."""
    mock.on("tools/call", ask({"q": form_ask()}, "s"), done("finished"))

    async def slow_person(question: Question) -> Answer:
        await asyncio.sleep(1.5)  # three times the deadline
        return Accepted({"confirm": True})

    async def flow(handler: Any, **options: Any) -> Any:
        async with Client(mock.url, on_form=handler, deadline_s=0.5, **options) as client:
            return await client.call_tool("t")

    assert text_of(run(flow(slow_person))) == "finished"

    async def quick(question: Question) -> Answer:
        return Accepted({"confirm": True})

    # each leg has its own deadline: three legs of 0.35 s pass a 0.5 s deadline
    three = [Delay(0.35, ask({"q": form_ask()}, "s")), Delay(0.35, ask({"q": form_ask()}, "t"))]
    mock.on("tools/call", *three, Delay(0.35, done("finished")))
    assert text_of(run(flow(quick))) == "finished"
    mock.on("tools/call", ask({"q": form_ask()}, "s"), Delay(3.0, done("finished")))

    started = time.monotonic()
    with pytest.raises(DeadlineExceeded) as caught:
        run(flow(quick))
    assert time.monotonic() - started < 2.5
    assert isinstance(caught.value, TimeoutError) and isinstance(caught.value, ClientError)
    assert str(caught.value).startswith("tools/call: the server did not finish within 0.5 s")
    assert "deadline_s" in str(caught.value) and "--timeout" in str(caught.value)


def test_the_persons_own_limit_answers_cancel(mock: MockMcp) -> None:
    seen: list[Any] = []

    def cancelled(request: Any) -> dict[str, Any]:
        seen.append(request.body["params"]["inputResponses"]["q"])
        return done("fell back")

    mock.on("tools/call", ask({"q": form_ask()}, "s"), cancelled)

    async def away(question: Question) -> Answer:
        await asyncio.sleep(30)
        return Accepted({"confirm": True})

    async def flow() -> Any:
        async with Client(mock.url, on_form=away, answer_timeout_s=0.3) as client:
            return await client.call_tool("t")

    started = time.monotonic()
    assert text_of(run(flow())) == "fell back"
    assert time.monotonic() - started < 5
    assert seen == [{"action": "cancel"}]


@pytest.mark.parametrize(
    ("question", "reply"),
    [
        (form_ask(), Accepted({"confirm": "yes"})),  # a string for a boolean
        (form_ask("Name?", {"name": {"type": "string"}}, ["name"]), Accepted({})),  # a required field missing
        (form_ask("Age?", {"age": {"type": "integer", "minimum": 0}}, ["age"]), Accepted({"age": 1.5})),
        (form_ask("Pick", {"c": {"type": "string", "enum": ["a", "b"]}}, ["c"]), Accepted({"c": "z"})),
        (form_ask(), Accepted(["confirm"])),  # not an object
        (form_ask(), {"action": "accept", "content": {"confirm": True}}),  # a raw dict, not a Answer
    ],
    ids=["string-for-boolean", "missing-required", "float-for-integer", "not-in-enum", "not-object", "raw-dict"],
)
def test_invalid_reply_raises_before_anything_is_sent(mock: MockMcp, question: Any, reply: Any) -> None:
    mock.on("tools/call", ask({"q": question}, "s"), done())

    async def answer(q: Question) -> Answer:
        return reply  # type: ignore[no-any-return]

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=answer) as client:
            return await client.call_tool("t")

    with pytest.raises(InvalidReply):
        run(flow())
    assert len(mock.requests()) == 1  # the retry was never sent


def test_decline_cancel_and_url_accept_on_the_wire(mock: MockMcp) -> None:
    mock.on(
        "tools/call",
        ask({"d": form_ask("decline me"), "c": form_ask("cancel me"), "u": url_ask(), "v": url_ask()}, "s"),
        done(),
    )
    url_questions: list[Question] = []

    async def on_form(question: Question) -> Answer:
        return Declined() if question.message == "decline me" else Cancelled()

    async def on_url(question: Question) -> Answer:
        url_questions.append(question)
        return Accepted(None) if question.key == "u" else Accepted({"ignored": True})

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=on_form, on_url=on_url) as client:
            return await client.call_tool("t")

    run(flow())
    retry = mock.requests()[1]
    assert retry.params["inputResponses"] == {
        "d": {"action": "decline"},
        "c": {"action": "cancel"},
        "u": {"action": "accept"},  # URL mode: no content, ever
        "v": {"action": "accept"},
    }
    assert {q.mode for q in url_questions} == {"url"}
    assert {q.url for q in url_questions} == {"https://example.com/auth"}


def test_undeclared_url_question_is_cancelled(mock: MockMcp) -> None:
    mock.on("tools/call", ask({"u": url_ask()}, "s"), done())

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.call_tool("t")

    run(flow())
    assert mock.requests()[1].params["inputResponses"] == {"u": {"action": "cancel"}}


def test_undeclared_sampling_question_raises_client_error(mock: MockMcp) -> None:
    sampling = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    mock.on("tools/call", ask({"s": sampling}, "s"), done())

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.call_tool("t")

    with pytest.raises(ClientError, match="sampling/createMessage"):
        run(flow())
    assert len(mock.requests()) == 1


@pytest.mark.parametrize(
    "bad",
    [
        "not an object",
        {"method": "elicitation/create", "params": {"message": "m", "requestedSchema": {"type": "string"}}},
        {"method": "elicitation/create", "params": {"requestedSchema": {"type": "object"}}},
    ],
    ids=["ask-not-object", "schema-not-object", "no-message"],
)
def test_malformed_question_raises_client_error(mock: MockMcp, bad: Any) -> None:
    mock.on("tools/call", ask({"q": bad}, "s"), done())

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.call_tool("t")

    with pytest.raises(ClientError):
        run(flow())


# -- 4. -32022 version negotiation --------------------------------------------------------------------


def unsupported(*versions: str) -> Err:
    return Err(-32022, "Unsupported protocol version", {"supported": list(versions), "requested": VERSION})


def test_unsupported_version_retried_once_and_succeeds(mock: MockMcp) -> None:
    mock.on("tools/list", unsupported("2099-01-01", VERSION), tools({"name": "t"}))
    mock.on("tools/call", ask({"q": form_ask()}, "s"), unsupported(VERSION), done("negotiated"))

    async def flow() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.list_tools(), await client.call_tool("t")

    listed, result = run(flow())
    assert [t["name"] for t in listed] == ["t"]
    assert text_of(result) == "negotiated"
    legs = mock.requests()
    assert [s.method for s in legs] == ["tools/list"] * 2 + ["tools/call"] * 3
    assert len({s.id for s in legs}) == 5
    for seen in legs:
        check_meta(seen, {"elicitation": {"form": {}}})
    # The retry of the refused MRTR leg repeats its answers and state exactly.
    assert legs[3].params == {**legs[4].params, "_meta": legs[3].params["_meta"]}
    assert legs[4].params["requestState"] == "s"


@pytest.mark.parametrize(
    ("answer", "legs"),
    [
        (unsupported("2099-01-01", "1999-01-01"), 1),  # nothing in common: propagate at once
        (Err(-32022, "Unsupported protocol version"), 1),  # no data.supported
        (unsupported(VERSION), 2),  # always refused: exactly one retry
    ],
    ids=["unknown-only", "no-data", "always"],
)
def test_unsupported_version_propagates(mock: MockMcp, answer: Err, legs: int) -> None:
    mock.on("tools/list", answer)

    async def flow() -> list[dict[str, Any]]:
        async with Client(mock.url) as client:
            return await client.list_tools()

    with pytest.raises(McpError) as info:
        run(flow())
    assert info.value.code == -32022
    assert len(mock.requests()) == legs


# -- 5. caching ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ttl", "cache", "requests"),
    [(60000, True, 1), (0, True, 2), (None, True, 2), (-5, True, 2), (60000, False, 2)],
    ids=["ttl-60s", "ttl-0", "ttl-missing", "ttl-negative", "cache-off"],
)
def test_tools_list_cache(mock: MockMcp, ttl: int | None, cache: bool, requests: int) -> None:
    mock.on("tools/list", tools({"name": "t"}, ttl=ttl))

    async def flow() -> None:
        async with Client(mock.url, cache=cache) as client:
            for _ in range(2):
                assert [t["name"] for t in await client.list_tools()] == ["t"]

    run(flow())
    assert len(mock.requests("tools/list")) == requests


def test_cache_expires_and_keys_pages_by_cursor(mock: MockMcp) -> None:
    def page(seen: Seen) -> dict[str, Any]:
        cursor = seen.params.get("cursor")
        return tools({"name": f"t-{cursor}"}, ttl=300, cursor=None if cursor == "2" else str(int(cursor or 0) + 1))

    mock.on("tools/list", page)

    async def flow() -> None:
        async with Client(mock.url) as client:
            expected = ["t-None", "t-1", "t-2"]
            assert [t["name"] for t in await client.list_tools()] == expected
            assert [t["name"] for t in await client.list_tools()] == expected
            await asyncio.sleep(0.4)
            assert [t["name"] for t in await client.list_tools()] == expected

    run(flow())
    cursors = [s.params.get("cursor") for s in mock.requests("tools/list")]
    assert cursors == [None, "1", "2", None, "1", "2"]


def test_input_required_and_retries_are_never_cached(mock: MockMcp) -> None:
    cached = {"resultType": "complete", "contents": [{"uri": "test://r", "text": "x"}], "ttlMs": 60000}
    mock.on("resources/read", ask({"q": form_ask()}, "s"), cached, ask({"q": form_ask()}, "s2"), cached)

    async def flow() -> None:
        async with Client(mock.url, on_form=confirm) as client:
            for _ in range(2):
                assert (await client.read_resource("test://r"))["contents"][0]["text"] == "x"

    run(flow())
    legs = mock.requests()
    assert len(legs) == 4
    assert [s.params.get("requestState") for s in legs] == [None, "s", None, "s2"]


def test_input_required_on_a_list_method_is_not_cached(mock: MockMcp) -> None:
    mock.on("tools/list", {**ask(state="s"), "ttlMs": 60000}, tools({"name": "t"}))

    async def flow() -> None:
        async with Client(mock.url) as client:
            await client.request("tools/list")
            second = await client.request("tools/list")
            assert second.get("resultType") == "complete"

    run(flow())
    assert len(mock.requests()) == 2


# -- 6. SSE responses ---------------------------------------------------------------------------------


def progress_note(seen: Seen, value: int) -> dict[str, Any]:
    token = seen.meta["progressToken"]
    return {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": value}}


def test_sse_response_with_comment_and_progress(mock: MockMcp) -> None:
    def call(seen: Seen) -> Sse:
        final = ask({"q": form_ask()}, "s") if "requestState" not in seen.params else done("streamed")
        value = 1 if "requestState" not in seen.params else 2
        return Sse(
            [
                ": keep-alive comment\n\n",
                progress_note(seen, value),
                "event: message\ndata: "
                + json.dumps({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "info"}})
                + "\n\n",
            ],
            final,
        )

    mock.on("tools/call", call)
    notes: list[dict[str, Any]] = []

    async def on_progress(note: dict[str, Any]) -> None:
        notes.append(note)

    async def flow() -> dict[str, Any]:
        async with Client(mock.url, on_form=confirm) as client:
            return await client.call_tool("t", progress=on_progress)

    assert text_of(run(flow())) == "streamed"
    legs = mock.requests()
    assert len(legs) == 2
    tokens = [s.meta["progressToken"] for s in legs]
    progress = [n for n in notes if n["method"] == "notifications/progress"]
    assert progress == [
        {"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": t, "progress": v}}
        for t, v in zip(tokens, (1, 2), strict=True)
    ]
    assert tokens[0] != tokens[1]  # a new token with every new id


def test_sse_multiline_data_and_no_callback(mock: MockMcp) -> None:
    def call(seen: Seen) -> Sse:
        response = json.dumps({"jsonrpc": "2.0", "id": seen.id, "result": done("multi")}, indent=1)
        data = "".join(f"data: {line}\n" for line in response.splitlines())
        return Sse([":\n\n", data + "\n"])

    mock.on("tools/call", call)

    async def flow() -> dict[str, Any]:
        async with Client(mock.url) as client:
            return await client.call_tool("t")

    assert text_of(run(flow())) == "multi"
    assert "progressToken" not in mock.requests()[0].meta  # no callback, no token asked


def test_sse_stream_without_response_fails(mock: MockMcp) -> None:
    mock.on("tools/call", lambda seen: Sse([progress_note(seen, 1)]))

    async def flow() -> dict[str, Any]:
        async with Client(mock.url) as client:
            return await client.call_tool("t", progress=lambda note: asyncio.sleep(0))

    with pytest.raises(ConnectionError):
        run(flow())


# -- 7. invalid x-mcp-header annotations --------------------------------------------------------------


def tool(name: str, props: dict[str, Any]) -> dict[str, Any]:
    return {"name": name, "inputSchema": {"type": "object", "properties": props}}


HEADER_TOOLS = [
    tool("good", {"r": {"type": "string", "x-mcp-header": "Region"}, "n": {"type": "integer", "x-mcp-header": "N"}}),
    tool("empty", {"r": {"type": "string", "x-mcp-header": ""}}),
    tool("space", {"r": {"type": "string", "x-mcp-header": "Bad Name"}}),
    tool("colon", {"r": {"type": "string", "x-mcp-header": "Bad:Name"}}),
    tool("non-ascii", {"r": {"type": "string", "x-mcp-header": "Région"}}),
    tool("not-string", {"r": {"type": "string", "x-mcp-header": 7}}),
    tool("number", {"r": {"type": "number", "x-mcp-header": "Amount"}}),
    tool("object", {"r": {"type": "object", "x-mcp-header": "Obj"}}),
    tool("array", {"r": {"type": "array", "items": {"type": "string"}, "x-mcp-header": "List"}}),
    tool(
        "duplicate",
        {"a": {"type": "string", "x-mcp-header": "Region"}, "b": {"type": "string", "x-mcp-header": "rEGION"}},
    ),
    tool("nested", {"o": {"type": "object", "properties": {"x": {"type": "number", "x-mcp-header": "X"}}}}),
    tool("plain", {"r": {"type": "string"}}),
]
BAD_TOOLS = [t["name"] for t in HEADER_TOOLS if t["name"] not in ("good", "plain")]


def test_invalid_header_annotations_dropped_over_http(mock: MockMcp, caplog: pytest.LogCaptureFixture) -> None:
    mock.on("tools/list", tools(*HEADER_TOOLS))

    async def flow() -> list[dict[str, Any]]:
        async with Client(mock.url) as client:
            return await client.list_tools()

    with caplog.at_level(logging.WARNING, logger="baton.client"):
        listed = run(flow())
    assert [t["name"] for t in listed] == ["good", "plain"]
    warned = [r.getMessage() for r in caplog.records if r.name == "baton.client" and r.levelno == logging.WARNING]
    assert len(warned) == len(BAD_TOOLS), warned
    for name, message in zip(BAD_TOOLS, warned, strict=True):
        assert repr(name) in message


@pytest.mark.process
def test_invalid_header_annotations_kept_over_stdio(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"tools/list": tools(*HEADER_TOOLS), "tools/call": done("stdio")}))
    command = [sys.executable, str(SERVERS / "mock_mcp.py"), "--stdio", str(script)]

    async def flow() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        async with Client(command) as client:
            return await client.list_tools(), await client.call_tool("duplicate", {"a": "x", "b": "y"})

    with caplog.at_level(logging.WARNING, logger="baton.client"):
        listed, result = run(flow())
    assert [t["name"] for t in listed] == [t["name"] for t in HEADER_TOOLS]
    assert text_of(result) == "stdio"
    assert not [r for r in caplog.records if r.name == "baton.client"]


# -- 8. step mode -------------------------------------------------------------------------------------


def test_advance_refuses_unanswered_keys(mock: MockMcp) -> None:
    mock.on("tools/call", ask({"a": form_ask(), "b": form_ask()}, "s"), done())

    async def flow() -> None:
        async with Client(mock.url, on_form=confirm) as client:
            step = await client.start("tools/call", {"name": "t", "arguments": {}})
            assert isinstance(step, Round)
            assert step.number == 1
            assert step.request_state == "s"
            assert Round.from_json(step.to_json()) == step
            with pytest.raises(ClientError, match="b"):
                await client.advance(step, {"a": Accepted({"confirm": True})})
            with pytest.raises(InvalidReply):
                await client.advance(step, {"a": Accepted({"confirm": True}), "b": Accepted({"confirm": 1})})
            assert len(mock.requests()) == 1  # refused before anything was sent
            result = await client.advance(step, {"a": Accepted({"confirm": True}), "b": Declined()})
            assert not isinstance(result, Round)
            assert text_of(result) == "ok"

    run(flow())
    retry = mock.requests()[1]
    assert retry.params["inputResponses"] == {
        "a": {"action": "accept", "content": {"confirm": True}},
        "b": {"action": "decline"},
    }
    assert retry.params["requestState"] == "s"


RESUME_SCRIPT = """
import asyncio, json, sys
from baton.client import Accepted, Client, Round

async def never(question):
    raise AssertionError("step mode must not call the handler")

async def main():
    round_ = Round.from_json(sys.stdin.buffer.read())
    async with Client(sys.argv[1], on_form=never, deadline_s=20) as client:
        result = await asyncio.wait_for(client.advance(round_, {"q1": Accepted({"confirm": True})}), 20)
    print(json.dumps(result if isinstance(result, dict) else {"round": result.to_json()}))

asyncio.run(main())
"""


def resume_elsewhere(tmp_path: Path, url: str, saved: str) -> dict[str, Any]:
    script = tmp_path / "resume.py"
    script.write_text(RESUME_SCRIPT)
    out = processes.run(
        [sys.executable, str(script), url], input=saved.encode(), capture_output=True, timeout=60, check=False
    )
    assert out.returncode == 0, out.stderr.decode()
    return dict(json.loads(out.stdout))


def test_step_mode_resumed_in_another_process(serve: Callable[..., RunningServer], tmp_path: Path) -> None:
    server = serve(EVERYTHING)

    async def first() -> str:
        async with Client(server.url, on_form=confirm) as client:
            step = await client.start("tools/call", {"name": "perform", "arguments": {"action": "deploy é"}})
            assert isinstance(step, Round)
            assert list(step.input_requests) == ["q1"]
            (question,) = step.questions()
            assert question.key == "q1"
            assert question.mode == "form"
            assert question.form is not None
            assert isinstance(question.form.fields[0], BooleanField)
            with pytest.raises(ClientError):
                await client.advance(step, {})
            return step.to_json()

    saved = run(first())
    assert Round.from_json(saved).request_state
    result = resume_elsewhere(tmp_path, server.url, saved)
    assert result.get("resultType") == "complete"
    assert text_of(result) == "done: deploy é"


# -- 9. stdio -----------------------------------------------------------------------------------------


@pytest.mark.process
def test_stdio_client_against_baton_serve(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)
    data_dir = tmp_path / "stdio-data"
    data_dir.mkdir()
    command = [str(Path(sys.executable).with_name("baton")), "serve", EVERYTHING, "--stdio"]
    assert command[0] == BATON
    seen: list[str] = []

    async def answer(question: Question) -> Answer:
        seen.append(question.key)
        return Accepted({"confirm": True})

    async def flow() -> tuple[Client, float]:
        client = Client(command, on_form=answer, env={**os.environ, "BATON_DATA_DIR": str(data_dir)})
        try:
            one = await client.call_tool("perform", {"action": "solo"})
            assert text_of(one) == "done: solo"
            both = await asyncio.gather(
                client.call_tool("perform", {"action": "left"}), client.call_tool("perform", {"action": "right"})
            )
            assert [text_of(r) for r in both] == ["done: left", "done: right"]
            proc = client.transport.proc  # type: ignore[attr-defined]
            assert proc is not None
            assert proc.returncode is None
        finally:
            started = time.monotonic()
            await client.close()
        return client, time.monotonic() - started

    client, closing = run(flow())
    assert seen == ["q1", "q1", "q1"]
    proc = client.transport.proc  # type: ignore[attr-defined]
    assert proc.returncode == 0  # ended by EOF on stdin, not by a signal
    assert closing < 5.0


# -- 10. against a real `baton serve` over HTTP --------------------------------------------------------


def test_http_flows_against_baton_serve(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)
    questions: list[Question] = []

    async def answer(question: Question) -> Answer:
        questions.append(question)
        if question.key == "user_context":
            return Accepted({"context": "tests ☃"})
        return Accepted({"confirm": True})

    async def flow() -> None:
        async with Client(server.url, on_form=answer) as client:
            assert text_of(await client.call_tool("perform", {"action": "ship"})) == "done: ship"
            prompt = await client.get_prompt("test_input_required_result_prompt")
            assert prompt["messages"][0]["content"]["text"] == "Use this context: tests ☃"
            resource = await client.read_resource("test://static-text")
            assert resource["contents"][0]["text"] == "This is the content of the static text resource."
            assert client.server_name == "baton-everything"
            names = {t["name"] for t in await client.list_tools()}
            assert {"perform", "test_x_mcp_header"} <= names
            # The server checks Mcp-Param-Region against the body, base64 and all.
            region = await client.call_tool("test_x_mcp_header", {"region": "Zürich ☃"})
            assert text_of(region) == "region: Zürich ☃"

    run(flow())
    assert [q.key for q in questions] == ["q1", "user_context"]


def test_declined_perform_against_baton_serve(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)

    async def no(question: Question) -> Answer:
        return Declined()

    async def flow() -> dict[str, Any]:
        async with Client(server.url, on_form=no) as client:
            return await client.call_tool("perform", {"action": "ship"})

    assert text_of(run(flow())) == "not confirmed: ship"


def test_header_mismatch_refetches_tools(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)

    async def flow() -> dict[str, Any]:
        async with Client(server.url) as client:
            return await client.call_tool("test_x_mcp_header", {"region": "eu"})

    assert text_of(run(flow())) == "region: eu"
