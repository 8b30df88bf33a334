"""The Tasks extension's wire (`io.modelcontextprotocol/tasks`, SEP-2663): its identifier, its methods, the
task statuses, and the error a task-only tool answers a client that did not declare the extension.

A task is a flat `Result & Task` on the wire: `CreateTaskResult` is `resultType: "task"` with the task's
fields at the top level (no `task` wrapper, no `requestState`, no `inputRequests`); `tasks/get` answers the
`DetailedTask`: the same fields, with `inputRequests` while `input_required`, `result` once `completed`,
`error` once `failed`. Durations are integer milliseconds (`ttlMs`, `pollIntervalMs`).
"""

from __future__ import annotations

import time
from typing import Any, Final, Literal

from .errors import MISSING_CAPABILITY, McpError

TASKS: Final = "io.modelcontextprotocol/tasks"
"""The extension's identifier, under `capabilities.extensions` on both sides."""

TERMINAL: Final = frozenset({"completed", "failed", "cancelled"})

TaskSupport = Literal["optional", "required"]
TASK_SUPPORT: Final = ("optional", "required")


def timestamp(epoch_s: float) -> str:
    """An ISO 8601 UTC timestamp with milliseconds, as `createdAt` and `lastUpdatedAt` carry."""
    whole = int(epoch_s)
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(whole)) + f".{int((epoch_s - whole) * 1000):03d}Z"


def required_error(what: str) -> McpError:
    """-32021 for a request that only the tasks extension can serve, naming the extension in its data."""
    return McpError(
        MISSING_CAPABILITY,
        f"Missing required client capability: {what} needs the {TASKS} extension; declare it under "
        "clientCapabilities.extensions",
        {"requiredCapabilities": {"extensions": {TASKS: {}}}},
    )


def task_id_of(params: dict[str, Any]) -> str | None:
    """The `taskId` of a tasks/* request's params, if it is a string."""
    value = params.get("taskId")
    return value if isinstance(value, str) else None
