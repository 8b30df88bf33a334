"""Interop peer: the official `mcp` SDK's last 1.x (mcp==1.30.0) drives a server's 2025-11-25 experimental tasks,
for tests only.

Usage: `python legacy_mcp1_tasks_client.py URL` (Streamable HTTP). Against `examples/everything.py`: reads the
`tasks` capability and the tools' `execution.taskSupport`, calls `confirm_delete` as a task, polls it to
`input_required`, takes its result with `tasks/result` (the server asks its question there, answered by the
`elicitation_callback`), lists the tasks, cancels a slow one (twice), and reads a failing task's error and a
non-task tool's refusal. Prints one JSON report. Runs in its own venv (`.cache/interop/mcp1`), never in Baton's.
"""

from __future__ import annotations

import asyncio
import json
import sys
from contextlib import AsyncExitStack
from typing import Any

from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.context import RequestContext
from mcp.shared.exceptions import McpError
from mcp.types import CallToolResult, ElicitRequestParams, ElicitResult, ErrorData


async def run(url: str) -> dict[str, Any]:
    report: dict[str, Any] = {"asked": []}

    async def on_elicit(
        context: RequestContext[ClientSession, Any], params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        shown = params.model_dump(by_alias=True, exclude_none=True, mode="json")
        report["asked"].append(shown)
        fields = shown.get("requestedSchema", {}).get("properties", {})
        content = {k: True if v.get("type") == "boolean" else "Ann" for k, v in fields.items()}
        return ElicitResult(action="accept", content=content)

    async with AsyncExitStack() as stack:
        read, write, _ = await stack.enter_async_context(streamable_http_client(url))
        session = await stack.enter_async_context(ClientSession(read, write, elicitation_callback=on_elicit))
        init = await session.initialize()
        tasks = init.capabilities.tasks
        report["capability"] = None if tasks is None else tasks.model_dump(by_alias=True, exclude_none=True)
        listed = await session.list_tools()
        report["taskSupport"] = {
            t.name: (t.execution.taskSupport if t.execution is not None else None) for t in listed.tools
        }
        x = session.experimental
        made = await x.call_tool_as_task("confirm_delete", {"filename": "a.txt"})
        task_id = made.task.taskId
        report["created"] = made.task.model_dump(by_alias=True, exclude_none=True, mode="json")
        statuses = []
        for _ in range(200):
            status = (await x.get_task(task_id)).status
            statuses.append(status)
            if status != "working":
                break
            await asyncio.sleep(0.05)
        report["statuses"] = statuses
        result = await x.get_task_result(task_id, CallToolResult)
        report["result"] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
        report["after"] = (await x.get_task(task_id)).status
        slow = (await x.call_tool_as_task("slow_compute", {"seconds": 30})).task.taskId
        report["listed"] = {task_id, slow} <= {t.taskId for t in (await x.list_tasks()).tasks}
        report["cancelled"] = (await x.cancel_task(slow)).status
        try:
            await x.cancel_task(slow)
        except McpError as exc:
            report["cancel_again"] = exc.error.code
        failing = (await x.call_tool_as_task("protocol_error_job", {})).task.taskId
        try:
            await x.get_task_result(failing, CallToolResult)
        except McpError as exc:
            report["failed"] = [exc.error.code, exc.error.message]
        try:
            await x.call_tool_as_task("greet", {"name": "Ann"})
        except McpError as exc:
            report["not_a_task"] = exc.error.code
    return report


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run(sys.argv[1]))))
