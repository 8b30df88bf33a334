"""Task records in the ledger's backends (protocol.md P172): two servers sharing one store act as two
instances: a task made on one is seen on the other, answered there (the next round runs there, rebuilt from
the record and its journal), and the first sees it completed. SQLite (one host) and a real redis-server."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from support.redis_server import RedisServer
from test_tasks import caller, make_server, until


async def _two_instances(url: str) -> None:
    one, two = make_server(ledger=url), make_server(ledger=url)
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
        await call_two("tasks/cancel", {"taskId": slow})  # recorded; instance one's round is not told (P172)
        assert (await call_one("tasks/get", {"taskId": slow}))["status"] in ("working", "cancelled")
        assert (await call_two("tasks/get", {"taskId": slow}))["status"] == "cancelled"
    finally:
        await one.aclose()
        await two.aclose()


def test_two_instances_share_tasks_through_sqlite(tmp_path: Path) -> None:
    asyncio.run(_two_instances(f"sqlite://{tmp_path / 'ledger.db'}"))


def test_two_instances_share_tasks_through_redis(redis_server: RedisServer) -> None:
    asyncio.run(_two_instances(redis_server.url))
    assert redis_server.keys("baton:task:")


def _accept(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}
