"""Following a task of the Tasks extension (`io.modelcontextprotocol/tasks`) to its end, for `Client.drive`:
poll `tasks/get` every `pollIntervalMs`, answer `input_required` through the client's question callbacks and
send the answers with `tasks/update`, and cancel the task if the caller is cancelled (protocol.md P173)."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from ..protocol.errors import McpError
from .errors import ClientError
from .rounds import Round

TaskWatcher = Callable[[dict[str, Any]], None]
"""Sees each `tasks/get` answer (the task's status, its `statusMessage`): `baton call` shows it."""

MIN_POLL_S, MAX_POLL_S, DEFAULT_POLL_S = 0.05, 30.0, 1.0


class TaskDriver(Protocol):
    """What following a task needs of the client."""

    server_name: str | None

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]: ...

    def answers_for(self, step: Round) -> Awaitable[dict[str, Any]]: ...


def poll_interval(task: dict[str, Any]) -> float:
    """The pause before the next `tasks/get`: the server's `pollIntervalMs`, kept within 50 ms and 30 s."""
    ms = task.get("pollIntervalMs")
    if isinstance(ms, bool) or not isinstance(ms, int | float):
        return DEFAULT_POLL_S
    return min(MAX_POLL_S, max(MIN_POLL_S, ms / 1000))


async def follow(client: TaskDriver, method: str, created: dict[str, Any], watch: TaskWatcher | None) -> dict[str, Any]:
    """The result of the task `created` (a `CreateTaskResult`): its inlined `result` once completed. A failed
    task raises its error as `McpError`; a cancelled one `ClientError`."""
    task_id = created.get("taskId")
    if not isinstance(task_id, str):
        raise ClientError(f"{method}: a task result without a taskId")
    task, rounds = created, 0
    try:
        while True:
            status = task.get("status")
            if watch is not None:
                watch(task)
            if status == "completed":
                result = task.get("result")
                if not isinstance(result, dict):
                    raise ClientError(f"{method}: task {task_id} completed without a result")
                return result
            if status == "failed":
                error = task.get("error")
                error = error if isinstance(error, dict) else {}
                raise McpError(
                    int(error.get("code", -32603)), str(error.get("message", "the task failed")), error.get("data")
                )
            if status == "cancelled":
                raise ClientError(f"{method}: task {task_id} was cancelled")
            if status == "input_required" and isinstance(task.get("inputRequests"), dict) and task["inputRequests"]:
                rounds += 1
                step = Round(
                    method=method,
                    params={},
                    input_requests=task["inputRequests"],
                    number=rounds,
                    server=client.server_name,
                )
                responses = await client.answers_for(step)
                await client.request("tasks/update", {"taskId": task_id, "inputResponses": responses})
            else:
                await asyncio.sleep(poll_interval(task))
            task = await client.request("tasks/get", {"taskId": task_id})
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # best effort: the caller gave up, the server should stop too
            await asyncio.shield(client.request("tasks/cancel", {"taskId": task_id}))
        raise
