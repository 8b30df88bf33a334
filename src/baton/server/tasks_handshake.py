"""The 2025-11-25 experimental tasks, for hosts on that version (protocol.md P205): the same task board, store
and handlers as the Tasks extension of 2026-07-28, reached the 2025-11-25 way.

A session's `initialize` answers the `tasks` capability (list, cancel, task-augmented `tools/call`) when the
server has a task tool. A `tools/call` carrying `params.task` to such a tool makes a task and answers
`CreateTaskResult` (`{task: Task}`); `tasks/get` answers the `Task` (`ttl` and `pollInterval` in
milliseconds), `tasks/list` the principal's tasks, `tasks/cancel` the cancelled task (-32602 for one already
ended), and `tasks/result` waits for the task to end and answers its `CallToolResult`, or its error. While the
task waits in `input_required`, `tasks/result` sends its questions on its own stream as `elicitation/create`
(or whatever the ask is) with `_meta["io.modelcontextprotocol/related-task"]`, and hands the answers to the
task as `tasks/update` would: the next round runs as in 2026-07-28.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any, Final

from ..protocol.errors import McpError, invalid_params
from ..protocol.messages import Message
from ..protocol.tasks import TERMINAL, task_id_of
from .exchange import Exchange
from .outbound import Stream
from .results import error_result
from .tasks import Task, TaskBoard

RELATED_TASK: Final = "io.modelcontextprotocol/related-task"
METHODS: Final = frozenset({"tasks/get", "tasks/result", "tasks/list", "tasks/cancel"})
CAPABILITY: Final[dict[str, Any]] = {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
"""The `tasks` capability a session's `initialize` answers when the server has a task tool."""
LIST_PAGE = 50
_CURSOR = "t:"  # a tasks/list cursor: the last id listed, after this prefix
_WAIT_S = 0.25  # how often tasks/result looks again at a task running on another instance

AskOn = Callable[[dict[str, Any], Stream], Awaitable[dict[str, Any]]]
"""Send a round's input requests on a stream and collect the answers by key (the session's bridge)."""


def handshake_task(wire: dict[str, Any]) -> dict[str, Any]:
    """The board's view of a task (`envelope`) as the 2025-11-25 `Task`."""
    task = {
        "taskId": wire["taskId"],
        "status": wire["status"],
        "createdAt": wire["createdAt"],
        "lastUpdatedAt": wire["lastUpdatedAt"],
        "ttl": wire["ttlMs"],
        "pollInterval": wire["pollIntervalMs"],
    }
    if "statusMessage" in wire:
        task["statusMessage"] = wire["statusMessage"]
    return task


def related(task_id: str) -> dict[str, Any]:
    return {RELATED_TASK: {"taskId": task_id}}


class HandshakeTasks:
    """The tasks methods of a 2025-11-25 session, over one server's task board."""

    def __init__(self, board: Callable[[], TaskBoard], ask: AskOn) -> None:
        self._boards = board  # the server's, read when first used (the runtime is being made with this)
        self._ask = ask

    @property
    def _board(self) -> TaskBoard:
        return self._boards()

    async def handle(self, msg: Message, ex: Exchange, stream: Stream) -> dict[str, Any]:
        board = self._board
        if msg.method == "tasks/list":
            return await self._list(msg.params, ex)
        task_id = task_id_of(msg.params)
        if task_id is None:
            raise invalid_params(f'Invalid params: {msg.method} needs "taskId" (a string)')
        if msg.method == "tasks/get":
            return self._shown(await board.lookup(task_id, ex))
        if msg.method == "tasks/cancel":
            if (await board.lookup(task_id, ex)).status in TERMINAL:
                raise invalid_params(f"Invalid params: task {task_id!r} has already ended; it cannot be cancelled")
            return self._shown(await board.stop(task_id, ex))
        return await self._result(task_id, ex, stream)

    def _shown(self, task: Task) -> dict[str, Any]:
        return handshake_task(self._board.envelope(task, "complete"))

    async def _list(self, params: dict[str, Any], ex: Exchange) -> dict[str, Any]:
        cursor = params.get("cursor")
        if cursor is not None and not (isinstance(cursor, str) and cursor.startswith(_CURSOR)):
            raise invalid_params("Invalid params: this cursor is not one tasks/list gave")
        after = "" if cursor is None else cursor[len(_CURSOR) :]
        found = await self._board.listed(ex, after, LIST_PAGE + 1)
        page: dict[str, Any] = {"tasks": [self._shown(task) for task in found[:LIST_PAGE]]}
        if len(found) > LIST_PAGE:
            page["nextCursor"] = _CURSOR + found[LIST_PAGE - 1].task_id
        return page

    async def _result(self, task_id: str, ex: Exchange, stream: Stream) -> dict[str, Any]:
        """Wait for the task to end, asking its questions on this request's stream meanwhile."""
        board = self._board
        while True:
            task = await board.lookup(task_id, ex)
            if task.status in TERMINAL:
                return _final(task)
            if task.status == "input_required" and task.input_requests:
                asks = {
                    key: {**ask, "params": {**ask.get("params", {}), "_meta": related(task_id)}}
                    for key, ask in task.input_requests.items()
                }
                await board.answer(task_id, await self._ask(asks, stream), ex)
                continue
            runner = task.runner
            if runner is not None and not runner.done():  # its round runs here: wait for it to settle
                await asyncio.wait({runner}, timeout=_WAIT_S * 4)
            else:
                await asyncio.sleep(_WAIT_S)


def _final(task: Task) -> dict[str, Any]:
    """What `tasks/result` answers for an ended task: the tool's result, its protocol error, or for a cancelled
    task a tool error saying so; each result carries the related-task `_meta` (the session reshapes it for
    2025-11-25 as any tools/call result, `handshake_result`)."""
    if task.status == "failed" and task.error is not None:
        raise McpError(task.error["code"], task.error["message"], task.error.get("data"))
    if task.status == "completed" and task.result is not None:
        result = dict(task.result)
    else:
        result = error_result(f"The task was {task.status} before it produced a result.")
    result["_meta"] = {**result.get("_meta", {}), **related(task.task_id)}
    return result
