"""Baton's client against FastMCP 4's tasks (the 2026-07-28 Tasks extension, `fastmcp[tasks]` on Docket's
in-memory backend) in its own process: it follows a task to its result polling at the server's
`pollIntervalMs`, answers the question a task asks while it runs (FastMCP 4 asks the guard way inside a task:
`ctx.elicit` is refused there), and cancels the task of a caller that gave up (protocol.md P173)."""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.paths import ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv, peer_env
from support.processes import PortOpen, free_port, start

from baton import Accepted
from baton.client import Client, Question
from baton.protocol.errors import McpError
from baton.protocol.tasks import TASKS

pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)


@pytest.fixture
def fastmcp_tasks(tmp_path: Path) -> Iterator[str]:
    """peers/fastmcp4_tasks_server.py over stateless Streamable HTTP; its log goes to the captured output,
    which pytest shows when the test fails."""
    python = ensure_venv("fastmcp4tasks")
    port = free_port()
    command = [str(python), str(ROOT / "peers" / "fastmcp4_tasks_server.py"), "--port", str(port)]
    log = tmp_path / "fastmcp4tasks.log"
    process = start(command, cwd=ROOT / "peers", env=peer_env(), log=log, ready=PortOpen(port), timeout=60.0)
    try:
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.stop()
        print(log.read_text(errors="replace"))  # FastMCP's side, for a failure report


def test_the_client_drives_fastmcp_4_tasks_to_their_results(fastmcp_tasks: str) -> None:
    async def main() -> None:
        seen: list[tuple[float, dict[str, Any]]] = []
        asked: list[str] = []

        async def on_form(question: Question) -> Any:
            asked.append(question.message)
            return Accepted({"name": "Ann"})

        def watch(task: dict[str, Any]) -> None:
            seen.append((time.monotonic(), task))

        async with Client(fastmcp_tasks, extensions={TASKS: {}}, on_form=on_form, on_task=watch) as c:
            assert (await c.call_tool("crunch", {"n": 3})).text == "crunched 3"
            statuses = [task["status"] for _, task in seen]
            assert statuses[0] == "working" and statuses[-1] == "completed" and len(statuses) >= 3
            assert {task["pollIntervalMs"] for _, task in seen} == {200}
            gaps = [after - before for (before, _), (after, _) in itertools.pairwise(seen)]
            assert min(gaps) >= 0.18  # polled no faster than the 200 ms asked
            seen.clear()
            assert (await c.call_tool("approve", {"change": "v2"})).text == "approved v2 by Ann"
            assert asked == ["Who approves v2?"]
            assert "input_required" in [task["status"] for _, task in seen]
            refused = await c.call_tool("ask_inline")  # ctx.elicit inside a task: FastMCP's tool error
            assert refused.is_error and "not supported inside a background task" in refused.text
        async with Client(fastmcp_tasks, on_form=on_form) as plain:  # no extension declared: no task
            assert (await plain.call_tool("crunch", {"n": 4})).text == "crunched 4"
            with pytest.raises(McpError) as refused:
                await plain.call_tool("dawdle")  # a task-only tool
            assert refused.value.code == -32021

    asyncio.run(main())


def test_a_caller_that_gives_up_cancels_its_fastmcp_4_task(fastmcp_tasks: str) -> None:
    async def main() -> None:
        ids: list[str] = []
        async with Client(fastmcp_tasks, extensions={TASKS: {}}, on_task=lambda t: ids.append(t["taskId"])) as c:
            with pytest.raises(TimeoutError):
                await asyncio.wait_for(c.call_tool("dawdle"), 1.0)
            assert (await c.request("tasks/get", {"taskId": ids[0]}))["status"] == "cancelled"

    asyncio.run(main())
