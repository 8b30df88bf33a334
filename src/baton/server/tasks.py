"""Tasks (the `io.modelcontextprotocol/tasks` extension, SEP-2663) on the server: the task board that makes a
call a task, runs its rounds in the background, and answers `tasks/get`, `tasks/update` and `tasks/cancel`.

A task is a flow whose rounds are driven by `tasks/update` instead of retries (protocol.md P165-P170): each
round replays the handler from the top over the task's journal (`ReplayEngine.task_round`), so the author's
`await ctx.elicit(...)` is the same code in a task. A round that asks parks the task in `input_required`
with its `inputRequests`; `tasks/update` collects the answers, and once every pending ask is answered the
next round runs. Task ids are unguessable (192 random bits) and bound to the principal that made them:
another principal's id is "not found", as an unknown one is (-32602). Records are kept `ttlMs` from their
creation, then purged (a task still running then is cancelled).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..protocol.capabilities import ClientCapabilities
from ..protocol.errors import INTERNAL_ERROR, McpError, invalid_params, method_not_found
from ..protocol.extensions import Extensions, negotiated
from ..protocol.messages import Message
from ..protocol.tasks import TASKS, TERMINAL, required_error, task_id_of, timestamp
from ..state.seal import FlowState
from .exchange import Exchange, RequestInfo
from .registry import Flow

log = logging.getLogger("baton.server")

DEFAULT_TASK_TTL_MS = 3_600_000
DEFAULT_POLL_INTERVAL_MS = 1_000


@dataclass(slots=True)
class TaskJob:
    """What every round of one task needs, fixed when the task is made: the flow, its target and checked
    arguments, the request's params (its `_meta` and arguments), a detached exchange (no stream: the request
    that made the task has ended), the client's capabilities, and the flow state whose journal the rounds
    replay over."""

    flow: Flow
    target: str
    kwargs: dict[str, Any]
    params: dict[str, Any]
    exchange: Exchange
    caps: ClientCapabilities
    state: FlowState


Settled = tuple[str, dict[str, Any]]
"""What a round ends in: ("input_required", inputRequests), ("completed", result) or ("failed", error)."""


class RoundRunner(Protocol):
    """The replay engine's side of a task: runs one round over the task's journal."""

    async def task_round(self, job: TaskJob, responses: dict[str, Any], status: Callable[[str], None]) -> Settled: ...


@dataclass(slots=True)
class Task:
    """One task's record: who made it, where it is, and what a round left for `tasks/get`."""

    task_id: str
    principal: str
    job: TaskJob
    created: float
    expires: float  # time.monotonic() after which the record is purged
    updated: float = 0.0
    status: str = "working"
    message: str | None = None
    input_requests: dict[str, Any] = field(default_factory=dict)
    responses: dict[str, Any] = field(default_factory=dict)  # answers gathered for the pending asks
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    runner: asyncio.Task[None] | None = None


def detached(ex: Exchange) -> Exchange:
    """The request's exchange without its stream: a task's rounds run after the request that made it."""
    return Exchange(
        info=RequestInfo(ex.info.transport),
        principal=ex.principal,
        scopes=ex.scopes,
        protocol_version=ex.protocol_version,
        client_info=ex.client_info,
    )


class TaskBoard:
    """One server's tasks, in this process (protocol.md P165)."""

    def __init__(
        self,
        engine: RoundRunner,
        offered: Callable[[], Extensions],
        *,
        ttl_ms: int = DEFAULT_TASK_TTL_MS,
        poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
    ) -> None:
        self._engine = engine
        self._offered = offered
        self.ttl_ms = ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self._tasks: dict[str, Task] = {}
        self._expiry: collections.deque[tuple[float, str]] = collections.deque()  # in creation order

    def __len__(self) -> int:
        return len(self._tasks)

    # -- making a task ------------------------------------------------------------------------------

    async def create(self, job: TaskJob) -> dict[str, Any]:
        """Make `job` a task, start its first round, and answer the `CreateTaskResult`: the record exists
        before the answer leaves, so a `tasks/get` right after it finds the task."""
        self.purge()
        now = time.time()
        task_id = secrets.token_urlsafe(24)  # protocol.md P168: unguessable; bound to the principal below
        job.state.journal.pending = {}
        task = Task(task_id, job.exchange.principal, job, now, time.monotonic() + self.ttl_ms / 1000, now)
        self._tasks[task_id] = task
        self._expiry.append((task.expires, task_id))
        self._start(task)
        return self._envelope(task, "task")

    def _start(self, task: Task) -> None:
        task.status, task.updated = "working", time.time()
        task.runner = asyncio.get_running_loop().create_task(self._advance(task), name=f"baton task {task.task_id}")

    async def _advance(self, task: Task) -> None:
        """Run one round of `task` and record where it ended."""
        responses, task.responses = task.responses, {}
        try:
            status, payload = await self._engine.task_round(task.job, responses, lambda m: self._said(task, m))
        except asyncio.CancelledError:
            return  # tasks/cancel (or the purge) has set the status already
        except Exception as exc:  # a fault of Baton's own: the task fails, the server goes on
            log.error("task %s of %s %r raised", task.task_id, task.job.flow.method, task.job.target, exc_info=exc)
            status, payload = "failed", McpError(INTERNAL_ERROR, "Internal error while running the task").to_dict()
        finally:
            task.runner = None
        if task.status == "cancelled":
            return
        task.status, task.updated = status, time.time()
        if status == "input_required":
            task.input_requests = payload
        elif status == "completed":
            task.result = payload
        else:
            task.error = payload

    def _said(self, task: Task, message: str) -> None:
        task.message, task.updated = message, time.time()

    # -- the methods --------------------------------------------------------------------------------

    def _find(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> Task:
        """The task a tasks/* request names, after the gates: the server offers the extension (else -32601),
        the client declared it (else -32021), and the task exists for this principal (else -32602)."""
        offered = self._offered()
        if TASKS not in offered:
            raise method_not_found(msg.method)
        if negotiated(offered, caps.extensions, TASKS) is None:
            raise required_error(msg.method)
        task_id = task_id_of(msg.params)
        if task_id is None:
            raise invalid_params(f'Invalid params: {msg.method} needs "taskId" (a string)')
        self.purge()
        task = self._tasks.get(task_id)
        if task is None or task.principal != ex.principal:  # P168: another principal's task is not found
            raise invalid_params(f"Task not found: {task_id!r} (unknown, expired, or not yours)")
        return task

    async def get(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        return self._envelope(self._find(msg, ex, caps), "complete")

    async def update(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        """Answers for a task in `input_required`: kept for the asks still pending (others are ignored); once
        every pending ask is answered, the next round runs. The ack is empty: `tasks/get` shows the rest."""
        task = self._find(msg, ex, caps)
        answers = msg.params.get("inputResponses")
        if not isinstance(answers, dict):
            raise invalid_params('Invalid params: tasks/update needs "inputResponses" (an object)')
        if task.status == "input_required":
            for key in [key for key in answers if key in task.input_requests]:
                task.responses[key] = answers[key]
                del task.input_requests[key]
            task.updated = time.time()
            if not task.input_requests:
                self._start(task)
        return {"resultType": "complete"}

    async def cancel(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        """Cancel a task not yet ended (its running round is cancelled); a task already ended stays as it is.
        Either way the ack is empty (protocol.md P169)."""
        task = self._find(msg, ex, caps)
        if task.status not in TERMINAL:
            self._cancel(task)
        return {"resultType": "complete"}

    def _cancel(self, task: Task) -> None:
        task.status, task.updated = "cancelled", time.time()
        task.input_requests = {}
        if task.runner is not None:
            task.runner.cancel()

    # -- keeping ------------------------------------------------------------------------------------

    def purge(self) -> None:
        """Forget the tasks whose `ttlMs` has passed (cancelling any still running)."""
        now = time.monotonic()
        while self._expiry and self._expiry[0][0] <= now:
            _, task_id = self._expiry.popleft()
            task = self._tasks.pop(task_id, None)
            if task is not None and task.runner is not None:
                task.runner.cancel()

    def cancel_all(self) -> None:
        """At shutdown: stop every running round."""
        for task in self._tasks.values():
            if task.runner is not None:
                with contextlib.suppress(RuntimeError):  # its loop may be closed already
                    task.runner.cancel()

    def _envelope(self, task: Task, result_type: str) -> dict[str, Any]:
        """The task on the wire: `CreateTaskResult` ("task") or `DetailedTask` ("complete", for tasks/get)."""
        wire: dict[str, Any] = {
            "resultType": result_type,
            "taskId": task.task_id,
            "status": task.status,
            "createdAt": timestamp(task.created),
            "lastUpdatedAt": timestamp(task.updated),
            "ttlMs": self.ttl_ms,
            "pollIntervalMs": self.poll_interval_ms,
        }
        if task.message is not None:
            wire["statusMessage"] = task.message
        if result_type == "task":
            return wire
        if task.status == "input_required":
            wire["inputRequests"] = task.input_requests
        elif task.status == "completed" and task.result is not None:
            wire["result"] = task.result
        elif task.status == "failed" and task.error is not None:
            wire["error"] = task.error
        return wire
