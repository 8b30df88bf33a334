"""Tasks (`io.modelcontextprotocol/tasks`, SEP-2663; protocol.md P165-P170) on the server, in process: a task
tool makes a task only for a client that declared the extension, `ctx.elicit` inside a task parks it in
input_required and `tasks/update` resumes it (answers may come one at a time), cancellation, the MRTR rounds
before `ctx.start_task()`, progress as the status message, principal isolation and expiry."""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from support.paths import ROOT

from baton import Accepted, Context, KeyRing, McpError, Server, ToolError
from baton.client import Question
from baton.protocol.messages import Message
from baton.protocol.tasks import TASKS
from baton.server import Exchange, RequestInfo
from baton.state.ledger import principal_tag
from baton.testing import FakeClock, ScriptedUser, memory_client

TASKS_CAPS = {"extensions": {TASKS: {}}, "elicitation": {"form": {}}}
_ids = itertools.count(1)


@dataclass
class Name:
    name: str


def by_client_address(info: RequestInfo) -> str:
    """The principal hook of these tests: the caller's name is the "host" of its client address."""
    assert info.client is not None
    return info.client[0]


KEYS = KeyRing.ephemeral_key()  # shared by the instances of a test, as every instance of one server must (P207)


def make_server(**options: Any) -> Server:
    server = Server("tasks", state_keys=options.pop("state_keys", KEYS), principal=by_client_address, **options)

    @server.tool(task="optional")
    async def compute(seconds: float = 0.0) -> str:
        await asyncio.sleep(seconds)
        return f"done after {seconds:g}s"

    @server.tool(task="required")
    async def must() -> str:
        raise ToolError("it failed as a tool")

    @server.tool(task="optional")
    async def steps(ctx: Context, n: int = 4, pause: float = 0.1) -> str:
        for i in range(n):
            await ctx.once(f"step{i}", lambda i=i: _step(i, pause))  # type: ignore[misc]
        return f"{n} steps done"

    @server.tool(task="optional")
    async def fails() -> str:
        raise McpError(-32603, "a protocol error")

    @server.tool(task="optional")
    async def ask_two(ctx: Context) -> str:
        first, second = await ctx.gather(ctx.elicit(Name, "First?", key="a"), ctx.elicit(Name, "Second?", key="b"))
        return " & ".join(x.data.name for x in (first, second) if isinstance(x, Accepted))

    @server.tool(task="required", task_start="handler")
    async def ask_then_task(ctx: Context) -> str:
        answer = await ctx.elicit(Name, "Name?", key="who")
        await ctx.start_task()
        await ctx.progress(1, 2, "halfway")
        await asyncio.sleep(0.2)
        return f"Hello, {answer.data.name if isinstance(answer, Accepted) else '?'}"

    return server


STEPS_RUN: list[int] = []  # every step that ran to its end, on any instance


async def _step(i: int, pause: float) -> int:
    await asyncio.sleep(pause)
    STEPS_RUN.append(i)
    return i


Call = Callable[..., Awaitable[dict[str, Any]]]


def caller(server: Server) -> Call:
    """Send one 2026-07-28 request to the server in process; the reply's result, or its error as {"error": ...}."""

    async def call(method: str, params: dict[str, Any], *, caps: Any = None, principal: str = "alice") -> Any:
        meta = {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": TASKS_CAPS if caps is None else caps,
        }
        msg = Message(method, {**params, "_meta": meta}, next(_ids), True)
        reply = await server.runtime.handle(msg, Exchange(RequestInfo("http", client=(principal, 1))))
        body = reply.body  # type: ignore[union-attr]
        return {"error": body["error"]} if "error" in body else body["result"]

    return call


async def until(call: Call, task_id: str, *statuses: str, **kw: Any) -> dict[str, Any]:
    for _ in range(200):
        got = await call("tasks/get", {"taskId": task_id}, **kw)
        if got.get("status") in statuses:
            return got
        await asyncio.sleep(0.01)
    raise AssertionError(f"task {task_id} never reached {statuses}: {got}")


def test_a_task_tool_makes_a_task_only_for_a_client_that_declared_the_extension() -> None:
    async def main() -> None:
        call = caller(make_server(task_poll_interval_ms=250))
        created = await call("tools/call", {"name": "compute", "arguments": {"seconds": 0.05}})
        assert created["resultType"] == "task" and created["status"] == "working"
        assert created["pollIntervalMs"] == 250 and created["ttlMs"] == 3_600_000
        assert not {"result", "requestState", "inputRequests", "task", "ttl"} & set(created)
        assert len(created["taskId"]) >= 32  # 192 random bits, url-safe
        done = await until(call, created["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "done after 0.05s" and done["resultType"] == "complete"
        plain = await call("tools/call", {"name": "compute", "arguments": {}}, caps={})
        assert plain["resultType"] == "complete" and plain["content"][0]["text"] == "done after 0s"
        refused = await call("tools/call", {"name": "must", "arguments": {}}, caps={})
        assert refused["error"]["code"] == -32021
        assert refused["error"]["data"] == {"requiredCapabilities": {"extensions": {TASKS: {}}}}
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):  # gated on the client's declaration
            gated = await call(method, {"taskId": created["taskId"], "inputResponses": {}}, caps={})
            assert gated["error"]["code"] == -32021, method
        for method in ("tasks/list", "tasks/result"):  # removed by SEP-2663
            assert (await call(method, {"taskId": created["taskId"]}))["error"]["code"] == -32601
        failed_as_tool = await call("tools/call", {"name": "must", "arguments": {}})
        result = (await until(call, failed_as_tool["taskId"], "completed"))["result"]
        assert result["isError"] is True

    asyncio.run(main())


def test_a_server_without_task_tools_does_not_offer_the_methods() -> None:
    async def main() -> None:
        server = Server("plain", state_keys=KeyRing.ephemeral_key(), principal=by_client_address)

        @server.tool
        def hello() -> str:
            return "hi"

        call = caller(server)
        assert (await call("tasks/get", {"taskId": "x"}))["error"]["code"] == -32601
        assert "extensions" not in server.runtime.capabilities()
        assert make_server().runtime.capabilities()["extensions"] == {TASKS: {}}

    asyncio.run(main())


def test_questions_inside_a_task_park_it_and_answers_resume_it_one_at_a_time() -> None:
    async def main() -> None:
        call = caller(make_server())
        task_id = (await call("tools/call", {"name": "ask_two", "arguments": {}}))["taskId"]
        parked = await until(call, task_id, "input_required")
        assert sorted(parked["inputRequests"]) == ["a", "b"]
        assert parked["inputRequests"]["a"]["method"] == "elicitation/create"
        ack = await call("tasks/update", {"taskId": task_id, "inputResponses": {"a": _accept("Ann"), "zz": {}}})
        assert ack == {"resultType": "complete", "_meta": ack["_meta"]}
        still = await call("tasks/get", {"taskId": task_id})
        assert still["status"] == "input_required" and list(still["inputRequests"]) == ["b"]
        await call("tasks/update", {"taskId": task_id, "inputResponses": {"b": _accept("Bob")}})
        done = await until(call, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "Ann & Bob"
        bad = await call("tasks/update", {"taskId": task_id, "inputResponses": "no"})
        assert bad["error"]["code"] == -32602

    asyncio.run(main())


def test_mrtr_rounds_come_first_then_the_call_becomes_a_task_with_progress_as_its_status() -> None:
    async def main() -> None:
        call = caller(make_server())
        first = await call("tools/call", {"name": "ask_then_task", "arguments": {}})
        assert first["resultType"] == "input_required" and "taskId" not in first
        second = await call(
            "tools/call",
            {
                "name": "ask_then_task",
                "arguments": {},
                "inputResponses": {"who": _accept("Alice")},
                "requestState": first["requestState"],
            },
        )
        assert second["resultType"] == "task" and "requestState" not in second
        working = await until(call, second["taskId"], "working")
        for _ in range(100):
            if "statusMessage" in working:
                break
            await asyncio.sleep(0.01)
            working = await call("tasks/get", {"taskId": second["taskId"]})
        assert working["statusMessage"] == "halfway"
        done = await until(call, second["taskId"], "completed")
        assert done["result"]["content"][0]["text"] == "Hello, Alice"

    asyncio.run(main())


def test_cancel_stops_a_running_task_and_is_an_empty_ack_on_an_ended_one() -> None:
    async def main() -> None:
        server = make_server()
        call = caller(server)
        task_id = (await call("tools/call", {"name": "compute", "arguments": {"seconds": 30}}))["taskId"]
        await asyncio.sleep(0.02)
        ack = await call("tasks/cancel", {"taskId": task_id})
        assert set(ack) == {"resultType", "_meta"} and ack["resultType"] == "complete"
        assert (await call("tasks/get", {"taskId": task_id}))["status"] == "cancelled"
        await asyncio.sleep(0.01)
        assert len(server.runtime.tasks) == 0  # its round was stopped: nothing runs here any more
        again = await call("tasks/cancel", {"taskId": task_id})
        assert again["resultType"] == "complete"

    asyncio.run(main())


def test_another_principals_task_is_not_found_and_expired_tasks_are_purged() -> None:
    async def main() -> None:
        server = make_server(task_ttl_ms=150)
        call = caller(server)
        task_id = (await call("tools/call", {"name": "compute", "arguments": {}}))["taskId"]
        assert (await call("tasks/get", {"taskId": task_id}))["taskId"] == task_id
        held = await server.runtime.task_store.get(task_id)
        assert held is not None and held[0] == principal_tag("alice") and b"alice" not in held[2]
        for method in ("tasks/get", "tasks/cancel", "tasks/update"):
            theirs = await call(method, {"taskId": task_id, "inputResponses": {}}, principal="mallory")
            assert theirs["error"]["code"] == -32602 and "not found" in theirs["error"]["message"]
        unknown = await call("tasks/get", {"taskId": "no-such-task"})
        assert unknown["error"]["code"] == -32602
        wall.advance(0.2)
        assert (await call("tasks/get", {"taskId": task_id}))["error"]["code"] == -32602
        assert await server.runtime.task_store.get(task_id) is None

    with FakeClock() as wall:  # the expiry moves with the test, not with a loaded machine
        asyncio.run(main())


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ({"task": True}, 'FastMCP\'s task=True is task="optional"'),
        ({"task": "always"}, 'task must be "optional" or "required"'),
        ({"task_start": "handler"}, 'task_start needs task="optional" or task="required"'),
        ({"task": "optional", "task_start": "later"}, 'task_start must be "call" or "handler"'),
    ],
)
def test_task_options_are_checked_where_they_are_written(bad: dict[str, Any], said: str) -> None:
    server = Server("x", state_keys=KeyRing.ephemeral_key())
    with pytest.raises(TypeError) as refused:
        server.add_tool(lambda: "x", name="t", **bad)
    assert said in str(refused.value)


def _accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


# -- Baton's client drives tasks (protocol.md P173) ---------------------------------------------------------

ALICE = RequestInfo("http", client=("alice", 1))


async def _by_key(question: Question) -> Any:
    return Accepted({"name": {"a": "Ann", "b": "Bob"}[question.key]})


def test_the_client_follows_a_task_answering_its_questions_through_the_same_callbacks() -> None:
    async def main() -> None:
        server = make_server(ledger="memory:", task_poll_interval_ms=20)
        seen: list[str] = []
        options: dict[str, Any] = {"extensions": {TASKS: {}}, "on_form": _by_key, "info": ALICE}
        async with memory_client(server, on_task=lambda task: seen.append(task["status"]), **options) as client:
            assert (await client.call_tool("ask_two")).text == "Ann & Bob"
            assert seen[0] == "working" and "input_required" in seen and seen[-1] == "completed"
            assert (await client.call_tool("must")).is_error
            with pytest.raises(McpError) as failed:
                await client.call_tool("fails")
            assert failed.value.code == -32603
        async with memory_client(server, on_form=_by_key, info=ALICE) as plain:  # no extension: in the request
            assert (await plain.call_tool("compute", {"seconds": 0})).text == "done after 0s"
            with pytest.raises(McpError) as refused:
                await plain.call_tool("must")
            assert refused.value.code == -32021

    asyncio.run(main())


def test_a_cancelled_caller_cancels_its_task() -> None:
    async def main() -> None:
        server = make_server(ledger="memory:", task_poll_interval_ms=20)
        created: list[str] = []
        options: dict[str, Any] = {"extensions": {TASKS: {}}, "info": ALICE}
        async with memory_client(server, on_task=lambda task: created.append(task["taskId"]), **options) as client:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(client.call_tool("compute", {"seconds": 30}), 0.3)
        assert (await caller(server)("tasks/get", {"taskId": created[0]}))["status"] == "cancelled"

    asyncio.run(main())


def test_the_projects_release_runs_as_a_task_with_a_scripted_approval_and_builds_once() -> None:
    """examples/projects.py's `release_project`, through the testing kit: the approval asked inside the task
    is answered by the scripted user, and the build (in `ctx.once`) runs once across the task's rounds."""
    spec = importlib.util.spec_from_file_location("projects_for_tasks", ROOT / "examples" / "projects.py")
    assert spec is not None and spec.loader is not None
    module = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up
    spec.loader.exec_module(module)
    server = module.server

    async def main() -> tuple[str, list[str], list[str]]:
        user = ScriptedUser({"approve": {"confirm": True}})
        statuses: list[str] = []
        watch = lambda task: statuses.append(task["status"])  # noqa: E731
        async with memory_client(server, user, extensions={TASKS: {}}, on_task=watch) as client:
            return (await client.call_tool("release_project", {"project_id": "apollo"})).text, statuses, user.keys

    text, statuses, keys = asyncio.run(main())
    assert text.startswith("Released build apollo-") and keys == ["approve"]
    assert "input_required" in statuses and statuses[-1] == "completed"


def test_a_task_only_tool_in_a_2025_session_is_a_tool_error_the_model_can_relay() -> None:
    """2025-11-25 sessions have no tasks here: a task-only tool answers a tool error there (as a missing
    capability does, protocol.md P96), and an optional one runs in the request."""

    async def main() -> None:
        server = make_server(ledger="memory:")
        async with memory_client(server, protocol="2025-11-25", info=ALICE) as client:
            refused = await client.call_tool("must")
            assert refused.is_error and "runs only as a task" in refused.text
            assert (await client.call_tool("compute", {"seconds": 0})).text == "done after 0s"

    asyncio.run(main())
