"""Task records in the ledger's backends (protocol.md P172, P174): two servers sharing one store act as two
instances: a task made on one is seen on the other, answered there (the next round runs there, rebuilt from
the record and its journal), and the first sees it completed; a cancel on one stops the round running on the
other; a task whose instance died is taken over once its lease runs out. SQLite (one host) and a real
redis-server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from support.redis_server import RedisServer
from test_tasks import STEPS_RUN, caller, make_server, until

from baton import Server

LEASE_MS = 300


async def _two_instances(url: str) -> None:
    one, two = make_server(ledger=url, task_lease_ms=LEASE_MS), make_server(ledger=url, task_lease_ms=LEASE_MS)
    call_one, call_two = caller(one), caller(two)
    try:
        task_id = (await call_one("tools/call", {"name": "ask_two", "arguments": {}}))["taskId"]
        parked = await until(call_one, task_id, "input_required")
        assert (await call_two("tasks/get", {"taskId": task_id}))["inputRequests"] == parked["inputRequests"]
        assert (await call_two("tasks/get", {"taskId": task_id}, principal="mallory"))["error"]["code"] == -32602
        await call_two("tasks/update", {"taskId": task_id, "inputResponses": {"a": _accept("Ann")}})
        assert list((await call_one("tasks/get", {"taskId": task_id}))["inputRequests"]) == ["b"]
        await call_two("tasks/update", {"taskId": task_id, "inputResponses": {"b": _accept("Bob")}})
        done = await until(call_one, task_id, "completed")
        assert done["result"]["content"][0]["text"] == "Ann & Bob"
        slow = (await call_one("tools/call", {"name": "compute", "arguments": {"seconds": 30}}))["taskId"]
        await call_two("tasks/cancel", {"taskId": slow})  # instance one learns it at its next lease renewal
        await asyncio.sleep(LEASE_MS / 1000)
        assert len(one.runtime.tasks) == 0  # its round was stopped there
        assert (await call_one("tasks/get", {"taskId": slow}))["status"] == "cancelled"
    finally:
        await one.aclose()
        await two.aclose()


async def _taken_over(url: str) -> None:
    """Instance one dies in the middle of a task's round (its round and heartbeat stop, nothing more is
    written); once the lease runs out, a poll on instance two takes the task over and replays it over the
    journal: every `ctx.once` step that had ended runs once in all."""
    one, two = make_server(ledger=url, task_lease_ms=LEASE_MS), make_server(ledger=url, task_lease_ms=LEASE_MS)
    try:
        task_id = await start_then_die(one)
        assert (await caller(two)("tasks/get", {"taskId": task_id}))["status"] == "working"  # lease still held
        done = await until(caller(two), task_id, "completed")
        assert done["result"]["content"][0]["text"] == "4 steps done"
        assert sorted(STEPS_RUN) == [0, 1, 2, 3]  # the steps that had ended did not run again
    finally:
        await one.aclose()
        await two.aclose()


async def start_then_die(one: Server) -> str:
    """Start a task of four `ctx.once` steps on `one`, which dies in the middle of the third (its round and
    heartbeat stop, nothing more is written); the task's id."""
    STEPS_RUN.clear()
    task_id: str = (await caller(one)("tools/call", {"name": "steps", "arguments": {"n": 4, "pause": 0.2}}))["taskId"]
    while len(STEPS_RUN) < 2:  # noqa: ASYNC110 (the steps run in a task of the server, not ours to wait on)
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)  # in the middle of the third step
    one.runtime.tasks.cancel_all()  # the instance dies: no more writes, no more heartbeats
    return task_id


def test_a_task_whose_instance_died_is_taken_over_through_sqlite(tmp_path: Path) -> None:
    asyncio.run(_taken_over(f"sqlite://{tmp_path / 'ledger.db'}"))


def test_a_task_whose_instance_died_is_taken_over_through_redis(redis_server: RedisServer) -> None:
    asyncio.run(_taken_over(redis_server.url))


def test_two_instances_share_tasks_through_sqlite(tmp_path: Path) -> None:
    asyncio.run(_two_instances(f"sqlite://{tmp_path / 'ledger.db'}"))


def test_two_instances_share_tasks_through_redis(redis_server: RedisServer) -> None:
    asyncio.run(_two_instances(redis_server.url))
    assert redis_server.keys("baton:task:")


def _accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}
