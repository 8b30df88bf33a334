"""The 2025-11-25 experimental tasks (protocol.md P205-P209), from the same board and store as the Tasks
extension: the official `mcp` SDK's last 1.x drives them against `baton serve examples/everything.py` (a real
process each); in process, a session's tasks are its principal's only, a principal holds a bounded number of
tasks not yet ended, records are sealed at rest in SQLite and Redis, a sweep resumes a round whose instance
died with nobody polling and purges expired records, and `tools/list` marks task tools in both eras. Baton's
client follows 2025-11-25 tasks, Baton's own in process and FastMCP 3's in its own process (P210)."""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from support import processes
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv, peer_env
from support.processes import PortOpen, free_port, start
from support.redis_server import RedisServer
from test_task_store import start_then_die
from test_tasks import ALICE, KEYS, STEPS_RUN, _by_key, caller, make_server, until

from baton import Accepted, Server
from baton.client import Client, Question
from baton.protocol.capabilities import ClientCapabilities
from baton.protocol.errors import McpError
from baton.protocol.messages import Message
from baton.protocol.tasks import TASKS
from baton.server import Exchange, RequestInfo
from baton.server.outbound import Outbound, Stream
from baton.server.sessions import ServerSession
from baton.testing import FakeClock, ScriptedUser, memory_client

pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)
SECRET = "hunter2-the-answer"


@pytest.fixture(scope="module")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`baton serve examples/everything.py` over HTTP, with a data directory of its own."""
    logs = tmp_path_factory.mktemp("tasks-2025")
    env = {k: v for k, v in os.environ.items() if k != "BATON_STATE_KEYS"}
    env["BATON_DATA_DIR"] = str(logs / "data")
    port = free_port()
    command = [BATON, "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"]
    process = start(command, cwd=ROOT, env=env, log=logs / "baton.log", ready=PortOpen(port), timeout=60.0)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.stop()


@pytest.mark.process
def test_the_official_2025_sdk_drives_baton_tasks_through_a_question(everything: str) -> None:
    python = ensure_venv("mcp1")
    done = processes.run(
        [str(python), str(ROOT / "peers" / "legacy_mcp1_tasks_client.py"), everything],
        capture_output=True,
        text=True,
        timeout=120,
        env=peer_env(),
        cwd=ROOT / "peers",
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["capability"] == {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
    support = report["taskSupport"]
    assert support["confirm_delete"] == "optional" and support["failing_job"] == "required"
    assert support["greet"] is None
    created = report["created"]
    assert created["status"] == "working" and created["ttl"] == 3_600_000 and created["pollInterval"] == 1000
    assert report["statuses"][-1] == "input_required"
    (asked,) = report["asked"]  # asked once, on the tasks/result stream, naming its task
    assert asked["message"] == "Delete a.txt?"
    assert asked["_meta"] == {"io.modelcontextprotocol/related-task": {"taskId": created["taskId"]}}
    assert report["result"]["content"][0]["text"] == "Deleted a.txt"
    assert report["result"]["_meta"] == asked["_meta"]
    assert report["after"] == "completed" and report["listed"] is True
    assert report["cancelled"] == "cancelled" and report["cancel_again"] == -32602
    assert report["failed"] == [-32603, "protocol_error_job always fails with a protocol error"]
    assert report["not_a_task"] == -32601


# -- in process --------------------------------------------------------------------------------------------


async def _drop(message: dict[str, Any]) -> None:
    raise AssertionError(f"nothing is sent on this stream: {message}")


async def in_session(server: Server, method: str, params: dict[str, Any], principal: str = "alice") -> Any:
    """One request of a 2025-11-25 session of `principal`; its result, or {"error": code}."""
    session = ServerSession(principal, "2025-11-25", ClientCapabilities.parse({"elicitation": {}}))
    ex = Exchange(RequestInfo("http"), principal=principal)
    try:
        msg = Message(method, params, 1, True)
        return await server.runtime.handshake.handle(msg, ex, session, Stream(_drop, Outbound(), can_request=False))
    except McpError as exc:
        return {"error": exc.code, "message": exc.message}


def test_a_sessions_tasks_are_its_principals_own() -> None:
    async def main() -> None:
        server = make_server(ledger="memory:")
        try:
            made = await in_session(server, "tools/call", {"name": "compute", "arguments": {"seconds": 5}, "task": {}})
            task_id = made["task"]["taskId"]
            assert made["task"]["status"] == "working" and made["task"]["ttl"] == server.settings.task_ttl_ms
            assert (await in_session(server, "tasks/get", {"taskId": task_id}))["status"] == "working"
            assert [t["taskId"] for t in (await in_session(server, "tasks/list", {}))["tasks"]] == [task_id]
            assert (await in_session(server, "tasks/list", {}, principal="mallory"))["tasks"] == []
            for method in ("tasks/get", "tasks/result", "tasks/cancel"):
                assert (await in_session(server, method, {"taskId": task_id}, principal="mallory"))["error"] == -32602
            assert (await in_session(server, "tasks/cancel", {"taskId": task_id}))["status"] == "cancelled"
            plain = await in_session(server, "tools/call", {"name": "compute", "arguments": {"seconds": 0}})
            assert plain["content"][0]["text"] == "done after 0s"  # without params.task: in the request
        finally:
            await server.aclose()

    asyncio.run(main())


def test_tools_list_marks_task_tools_in_both_eras() -> None:
    async def main() -> None:
        server = make_server(ledger="memory:")
        modern = {t["name"]: t.get("execution") for t in (await caller(server)("tools/list", {}))["tools"]}
        handshake_era = {t["name"]: t.get("execution") for t in (await in_session(server, "tools/list", {}))["tools"]}
        for listed in (modern, handshake_era):
            assert listed["compute"] == {"taskSupport": "optional"}
            assert listed["must"] == {"taskSupport": "required"}
        await server.aclose()

    asyncio.run(main())


def test_a_principal_holds_a_bounded_number_of_tasks_not_yet_ended() -> None:
    async def main() -> None:
        server = make_server(ledger="memory:", task_limit=2)
        call = caller(server)
        try:
            first = (await call("tools/call", {"name": "compute", "arguments": {"seconds": 30}}))["taskId"]
            await call("tools/call", {"name": "compute", "arguments": {"seconds": 30}})
            refused = (await call("tools/call", {"name": "compute", "arguments": {"seconds": 30}}))["error"]
            assert refused["code"] == -32600 and "Too many tasks" in refused["message"]
            assert refused["data"] == {"liveTasks": 2, "taskLimit": 2}
            assert "taskId" in await call("tools/call", {"name": "compute", "arguments": {}}, principal="bob")
            await call("tasks/cancel", {"taskId": first})  # an ended task no longer counts
            assert "taskId" in await call("tools/call", {"name": "compute", "arguments": {"seconds": 30}})
        finally:
            await server.aclose()

    asyncio.run(main())


async def _answered_task(server: Server) -> None:
    call = caller(server)
    task_id = (await call("tools/call", {"name": "ask_two", "arguments": {}}))["taskId"]
    await until(call, task_id, "input_required")
    answers = {key: {"action": "accept", "content": {"name": SECRET}} for key in ("a", "b")}
    await call("tasks/update", {"taskId": task_id, "inputResponses": answers})
    done = await until(call, task_id, "completed")
    assert done["result"]["content"][0]["text"] == f"{SECRET} & {SECRET}"


def test_task_records_are_sealed_at_rest_in_sqlite(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    server = make_server(ledger=f"sqlite://{path}")
    asyncio.run(_answered_task(server))
    asyncio.run(server.aclose())
    dump = b"".join(p.read_bytes() for p in path.parent.glob("ledger.db*"))  # the file, its WAL included
    assert b"baton_tasks" in dump  # the table is there
    assert SECRET.encode() not in dump and b"ask_two" not in dump


def test_task_records_are_sealed_at_rest_in_redis(redis_server: RedisServer) -> None:
    server = make_server(ledger=redis_server.url)

    async def answered_then_closed() -> None:  # one loop: the server's Redis connections belong to it
        try:
            await _answered_task(server)
        finally:
            await server.aclose()

    asyncio.run(answered_then_closed())
    with redis.Redis.from_url(redis_server.url) as client:
        records = [client.get(key) for key in client.keys("baton:task:*") if client.type(key) == b"string"]
    assert len(records) == 1
    assert all(SECRET.encode() not in value and b"ask_two" not in value for value in records)  # type: ignore[operator]


async def _resumed_unpolled(url: str) -> None:
    """Instance one dies in the middle of a task's round; nobody polls: instance two's sweep finds the round
    whose lease ran out and finishes it, replaying over the journal."""
    one, two = make_server(ledger=url, task_lease_ms=300), make_server(ledger=url, task_lease_ms=300)
    try:
        await two.runtime.start()  # as a transport does: the sweep starts
        task_id = await start_then_die(one)
        for _ in range(300):
            if len(STEPS_RUN) >= 4 and len(two.runtime.tasks) == 0:
                break
            await asyncio.sleep(0.01)
        assert sorted(STEPS_RUN) == [0, 1, 2, 3]
        done = await caller(two)("tasks/get", {"taskId": task_id})
        assert done["status"] == "completed" and done["result"]["content"][0]["text"] == "4 steps done"
    finally:
        await one.aclose()
        await two.aclose()


def test_the_sweep_resumes_an_orphaned_round_nobody_polls_through_sqlite(tmp_path: Path) -> None:
    asyncio.run(_resumed_unpolled(f"sqlite://{tmp_path / 'ledger.db'}"))


def test_the_sweep_resumes_an_orphaned_round_nobody_polls_through_redis(redis_server: RedisServer) -> None:
    asyncio.run(_resumed_unpolled(redis_server.url))


def test_the_sweep_leaves_another_servers_tasks_to_it(tmp_path: Path) -> None:
    """Two different servers share the default store (the data directory's): the other one's sweep never runs
    this server's orphaned task, even with a tool of the same name; this server's does."""
    url = f"sqlite://{tmp_path / 'ledger.db'}"
    ran_elsewhere: list[int] = []

    async def main() -> None:
        one, mine = make_server(ledger=url, task_lease_ms=300), make_server(ledger=url, task_lease_ms=300)
        other = Server("other", state_keys=KEYS, ledger=url, task_lease_ms=300)

        @other.tool(task="optional")
        async def steps(n: int = 4, pause: float = 0.1) -> str:
            ran_elsewhere.append(n)
            return "not this one"

        try:
            await other.runtime.start()
            task_id = await start_then_die(one)
            await asyncio.sleep(1.0)  # three leases: the other server swept the orphan several times
            assert ran_elsewhere == [] and len(STEPS_RUN) < 4
            await mine.runtime.start()
            done = await until(caller(mine), task_id, "completed", principal="alice")
            assert done["result"]["content"][0]["text"] == "4 steps done" and ran_elsewhere == []
        finally:
            for server in (one, mine, other):
                await server.aclose()

    asyncio.run(main())


def test_the_sweep_purges_expired_task_records(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"

    async def main() -> int:
        server = make_server(ledger=f"sqlite://{path}", task_ttl_ms=200)
        try:
            task_id = (await caller(server)("tools/call", {"name": "compute", "arguments": {}}))["taskId"]
            await until(caller(server), task_id, "completed")
            wall.advance(0.3)
            return await server.runtime.tasks.sweep_once()
        finally:
            await server.aclose()

    with FakeClock() as wall:  # the record expires when the test says, not when a loaded machine gets there
        assert asyncio.run(main()) == 0
    with sqlite3.connect(path) as db:
        assert db.execute("SELECT count(*) FROM baton_tasks_v2").fetchone() == (0,)


# -- Baton's client on 2025-11-25 tasks (protocol.md P210) -------------------------------------------------


def test_the_client_follows_a_2025_task_of_baton_answering_on_the_result_stream() -> None:
    async def main() -> None:
        server = make_server(ledger="memory:", task_poll_interval_ms=20)
        seen: list[str] = []
        sent: list[dict[str, Any]] = []
        user = ScriptedUser({"a": {"name": "Ann"}, "b": {"name": "Bob"}})
        options: dict[str, Any] = {"extensions": {TASKS: {}}, "info": ALICE, "protocol": "2025-11-25"}
        options["on_message"] = lambda way, message: sent.append(message) if way == "sent" else None
        async with memory_client(server, user, on_task=lambda task: seen.append(task["status"]), **options) as client:
            assert (await client.call_tool("ask_two")).text == "Ann & Bob"
            assert seen[0] == "working" and seen[-1] == "completed"
            assert any(m.get("method") == "tasks/result" for m in sent)
            called = [m for m in sent if m.get("method") == "tools/call"]
            assert called and called[0]["params"]["task"] == {}
            with pytest.raises(McpError) as failed:
                await client.call_tool("fails")
            assert failed.value.code == -32603
            assert (await client.call_tool("must")).is_error  # a tool error inside the task: its result
        async with memory_client(server, protocol="2025-11-25", on_form=_by_key, info=ALICE) as plain:
            refused = await plain.call_tool("must")  # no extension declared: no task, a tool error
            assert refused.is_error and "runs only as a task" in refused.text

    asyncio.run(main())


@pytest.mark.process
def test_the_client_drives_fastmcp_2025_tasks_through_a_question(tmp_path: Path) -> None:
    """FastMCP 3.4.11 (the last FastMCP serving 2025-11-25 tasks; Docket's in-memory backend) in its own
    process: Baton's client sees the tools' taskSupport, runs `crunch` as a task to completion, and answers
    the question `approve` asks while its task runs (FastMCP sends it on the session's stream)."""
    python = ensure_venv("fastmcp3")
    port = free_port()
    command = [str(python), str(ROOT / "peers" / "fastmcp3_tasks_server.py"), "--port", str(port)]
    log = tmp_path / "fastmcp3.log"
    process = start(command, cwd=ROOT / "peers", env=peer_env(), log=log, ready=PortOpen(port), timeout=60.0)
    url = f"http://127.0.0.1:{port}/mcp"

    async def main() -> None:
        seen: list[str] = []
        asked: list[str] = []

        async def on_form(question: Question) -> Any:
            asked.append(question.message)
            return Accepted({"name": "Ann"})

        async with Client(
            url, extensions={TASKS: {}}, on_form=on_form, on_task=lambda t: seen.append(t["status"])
        ) as c:
            assert {t.name: t.task_support for t in await c.list_tools()} == {
                "crunch": "optional",
                "approve": "optional",
                "hello": "forbidden",
            }
            assert (await c.call_tool("hello")).text == "hello" and seen == []
            assert (await c.call_tool("crunch", {"n": 3})).text == "crunched 3"
            assert seen[0] == "working" and seen[-1] == "completed"
            assert (await c.call_tool("approve", {"change": "v2"})).text == "approved v2 by Ann"
            assert asked == ["Who approves v2?"]

    try:
        asyncio.run(main())
    except BaseException:
        print(log.read_text(errors="replace"))  # FastMCP's side, for the failure report
        raise
    finally:
        process.stop()
