"""Following a 2025-11-25 experimental task (protocol.md P210): in a session whose server declared
task-augmented `tools/call` (`capabilities.tasks.requests.tools.call`), a `Client` that declared the tasks
extension calls a tool whose `execution.taskSupport` is "optional" or "required" with `params.task`, and
follows the `CreateTaskResult`: it polls `tasks/get` every `pollInterval`, and once the task waits for input
or has ended it asks `tasks/result`, which answers the tool's result (or its error) when the task ends. The
server's questions meanwhile come as server requests (on that request's stream, or on the session's own) and
are answered by the same callbacks as any. If the caller is cancelled, `tasks/cancel` goes out first.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any

from .errors import ClientError
from .tasks import TaskWatcher, poll_interval

SessionLeg = Callable[[str, dict[str, Any]], Awaitable[dict[str, Any]]]
"""One request of the session: (method, params) -> result; a server error raises its McpError."""


def offers_tool_tasks(initialize_result: dict[str, Any] | None) -> bool:
    """Whether a 2025-11-25 server declared task-augmented `tools/call`."""
    caps = (initialize_result or {}).get("capabilities")
    tasks = caps.get("tasks") if isinstance(caps, dict) else None
    requests = tasks.get("requests") if isinstance(tasks, dict) else None
    tools = requests.get("tools") if isinstance(requests, dict) else None
    return isinstance(tools, dict) and isinstance(tools.get("call"), dict)


def task_support(tool: dict[str, Any]) -> str:
    """A listed tool's `execution.taskSupport` ("forbidden" when absent, as the 2025-11-25 schema says)."""
    execution = tool.get("execution")
    support = execution.get("taskSupport") if isinstance(execution, dict) else None
    return support if support in ("optional", "required") else "forbidden"


def _shown(task: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 `Task` as a watcher sees a 2026-07-28 one (`ttlMs`, `pollIntervalMs`)."""
    shown = {k: v for k, v in task.items() if k not in ("ttl", "pollInterval")}
    shown["ttlMs"], shown["pollIntervalMs"] = task.get("ttl"), task.get("pollInterval")
    return shown


async def follow_handshake(request: SessionLeg, created: dict[str, Any], watch: TaskWatcher | None) -> dict[str, Any]:
    """The result of the task a `tools/call` made (`created`, a `CreateTaskResult`)."""
    task = created.get("task")
    task_id = task.get("taskId") if isinstance(task, dict) else None
    if not isinstance(task, dict) or not isinstance(task_id, str):
        raise ClientError("tools/call: a task result without a task id")
    try:
        while True:
            shown = _shown(task)
            if watch is not None:
                watch(shown)
            status = task.get("status")
            if status == "cancelled":
                raise ClientError(f"tools/call: task {task_id} was cancelled")
            if status in ("input_required", "completed", "failed"):
                result = await request("tasks/result", {"taskId": task_id})  # the questions come meanwhile
                if watch is not None and status == "input_required":
                    with contextlib.suppress(Exception):  # only what the watcher shows: best effort
                        watch(_shown(await request("tasks/get", {"taskId": task_id})))
                return result
            await asyncio.sleep(poll_interval(shown))
            task = await request("tasks/get", {"taskId": task_id})
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):  # best effort: the caller gave up, the server should stop too
            await asyncio.shield(request("tasks/cancel", {"taskId": task_id}))
        raise
