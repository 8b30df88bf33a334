"""What tasks of the Tasks extension cost one instance (protocol.md P165-P172), measured in process.

Three figures, each for the task store given (`--store memory:`, `sqlite:///PATH`, or `redis://…`):

- created per second: sequential `tools/call` of a task tool that returns at once, through the server's own
  dispatch (`Runtime.handle`, no transport): each answer waits until the task's record is written;
- resume latency: from sending the `tasks/update` that answers a parked task's last question to its handler
  running past that question (the next round replays over the journal), median and p95;
- bytes per task: the store record of a completed task and of a parked one (what `tasks/get` shows, the
  call's params and the journal); for `memory:` the Python heap held per parked task (tracemalloc); for
  SQLite, the file (and its WAL) over the tasks made; for Redis, `MEMORY USAGE` of a parked task's key.

Run: `.venv/bin/python bench/tasks.py [--store URL] [-n N] [--json]` (a few seconds; one core).
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import statistics
import sys
import tempfile
import time
import tracemalloc
from dataclasses import dataclass
from typing import Any

from baton import Accepted, Context, KeyRing, Server
from baton.protocol.messages import Message
from baton.protocol.tasks import TASKS
from baton.server import Exchange, RequestInfo

META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}, "elicitation": {"form": {}}},
}
_ids = itertools.count(1)


@dataclass
class Name:
    name: str


def make_server(store: str, resumed: dict[str, float]) -> Server:
    # No bound on tasks not yet ended (P208): the rate measures the store, not the limit.
    server = Server("bench-tasks", state_keys=KeyRing.ephemeral_key(), ledger=store, task_limit=10**9)

    @server.tool(task="optional")
    def quick(n: int = 0) -> str:
        return f"done {n}"

    @server.tool(task="optional")
    async def ask(ctx: Context, n: int = 0) -> str:
        answer = await ctx.elicit(Name, "Your name?", key="who")
        resumed[str(n)] = time.perf_counter()  # the round after the answer got here
        return f"Hello, {answer.data.name if isinstance(answer, Accepted) else '?'}"

    return server


async def call(server: Server, method: str, params: dict[str, Any]) -> dict[str, Any]:
    msg = Message(method, {**params, "_meta": META}, next(_ids), True)
    reply = await server.runtime.handle(msg, Exchange(RequestInfo("stdio")))
    body = reply.body  # type: ignore[union-attr]
    if "error" in body:
        raise RuntimeError(body["error"])
    result: dict[str, Any] = body["result"]
    return result


async def parked(server: Server, task_id: str) -> dict[str, Any]:
    while True:
        task = await call(server, "tasks/get", {"taskId": task_id})
        if task["status"] == "input_required":
            return task
        await asyncio.sleep(0.001)


async def measure(store: str, n: int) -> dict[str, Any]:
    resumed: dict[str, float] = {}
    server = make_server(store, resumed)
    try:
        await call(server, "tools/call", {"name": "quick", "arguments": {}})  # warm up (opens the store)
        started = time.perf_counter()
        for i in range(n):
            await call(server, "tools/call", {"name": "quick", "arguments": {"n": i}})
        created_per_s = n / (time.perf_counter() - started)
        await asyncio.sleep(0.2)  # let the last rounds record their end

        latencies: list[float] = []
        ids: list[str] = []
        rounds = max(20, min(n // 10, 200))
        for i in range(rounds):
            task_id = (await call(server, "tools/call", {"name": "ask", "arguments": {"n": i}}))["taskId"]
            await parked(server, task_id)
            sent = time.perf_counter()
            answer = {"who": {"action": "accept", "content": {"name": f"p{i}"}}}
            await call(server, "tasks/update", {"taskId": task_id, "inputResponses": answer})
            while str(i) not in resumed:  # noqa: ASYNC110 (a bare yield: an Event would add its own wake-up)
                await asyncio.sleep(0)
            latencies.append((resumed[str(i)] - sent) * 1000)
            ids.append(task_id)

        done_id = (await call(server, "tools/call", {"name": "quick", "arguments": {"n": 1}}))["taskId"]
        await asyncio.sleep(0.05)
        park_id = (await call(server, "tools/call", {"name": "ask", "arguments": {"n": 10**6}}))["taskId"]
        await parked(server, park_id)
        store_obj = server.runtime.task_store
        done_record, park_record = await store_obj.get(done_id), await store_obj.get(park_id)
        assert done_record is not None and park_record is not None
        figures: dict[str, Any] = {
            "store": store.rsplit("@", maxsplit=1)[-1],
            "tasks": n,
            "created_per_s": round(created_per_s),
            "resume_ms_median": round(statistics.median(latencies), 3),
            "resume_ms_p95": round(statistics.quantiles(latencies, n=20)[-1], 3),
            "record_bytes_completed": len(done_record[2]),
            "record_bytes_parked": len(park_record[2]),
        }
        if store.startswith("memory"):
            figures["heap_bytes_per_parked_task"] = await heap_per_parked(server)
        path = getattr(store_obj, "path", None)
        if path is not None:  # SQLite: the file and its write-ahead log, over every task made
            made = n + 2 + len(ids)
            size = sum(p.stat().st_size for p in (path, path.with_name(path.name + "-wal")) if p.exists())
            figures["file_bytes_per_task"] = size // made
        if store.startswith(("redis", "rediss", "unix")):
            redis = store_obj._redis  # type: ignore[attr-defined]
            figures["redis_memory_usage_parked"] = await redis.memory_usage(store_obj.prefix + park_id)  # type: ignore[attr-defined]
        return figures
    finally:
        await server.aclose()


async def heap_per_parked(server: Server, count: int = 500) -> int:
    """The Python heap one parked task holds in a memory store (its record), over `count` tasks."""
    ids = [(await call(server, "tools/call", {"name": "ask", "arguments": {"n": -1}}))["taskId"] for _ in range(3)]
    for task_id in ids:
        await parked(server, task_id)
    tracemalloc.start()
    before = tracemalloc.take_snapshot()
    for i in range(count):
        task_id = (await call(server, "tools/call", {"name": "ask", "arguments": {"n": -2 - i}}))["taskId"]
        await parked(server, task_id)
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    return grown // count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--store", default=None, help="memory:, sqlite:///PATH or redis://HOST:PORT/DB (default: a temp SQLite file)"
    )
    parser.add_argument("-n", type=int, default=2000, help="tasks to create for the rate (default 2000)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or f"sqlite:///{tmp}/ledger.db"
        try:
            figures = asyncio.run(measure(store, args.n))
        except KeyboardInterrupt:
            return 130
    if args.json:
        print(json.dumps(figures))
    else:
        print("| " + " | ".join(figures) + " |")
        print("|" + "---|" * len(figures))
        print("| " + " | ".join(str(v) for v in figures.values()) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
