"""`baton bridge` between other SDKs: the TypeScript SDK v1 as the host, a FastMCP 4.x server behind it.

- The TypeScript SDK v1 client (`@modelcontextprotocol/sdk` 1.x, 2025-11-25 only, from npm:
  tests/support/ts_sdk.py) over stdio, `peers/bridge_ts_host.mjs` → `baton bridge` → `baton serve
  examples/everything.py` over HTTP on 2026-07-28: its rounds become the host's `elicitation/create`.
- A FastMCP 4.1.6 server whose tool asks with the imperative `ctx.elicit` (2025-11-25 sessions only,
  `peers/fastmcp_elicit_server.py`) → `baton bridge --protocol 2025-11-25` → Baton's client on 2026-07-28:
  the question reaches the host as an `input_required` round (protocol.md P135).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv, peer_env
from support.processes import PortOpen, Process, free_port, start
from support.serve import RunningServer
from support.ts_sdk import ensure_ts_sdk, node

from baton.client import Accepted, Client, Declined, Question

pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)  # a peer may be installed on first use


def test_the_typescript_sdk_v1_host_reaches_a_2026_server_through_the_bridge(
    serve: Callable[..., RunningServer],
) -> None:
    server = serve(str(ROOT / "examples" / "everything.py"))
    command = [node(), str(ROOT / "peers" / "bridge_ts_host.mjs"), str(ensure_ts_sdk()), "--", BATON, "bridge"]
    done = processes.run(
        [*command, server.url], capture_output=True, text=True, timeout=90, cwd=ROOT, env=peer_env(), check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"the host printed no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    report = json.loads(lines[0])
    assert "failed" not in report, report
    assert report["version"] == "baton-everything"
    assert {"test_simple_text", "test_input_required_result_multi_round"} <= set(report["tools"])
    assert report["simple"] == "This is a simple text response for testing."
    # Two 2026 rounds, each the host's own elicitation/create, answered by its handler.
    assert report["two_rounds"] == "Ada likes teal"
    assert report["asked"] == ["What is your name?", "What is your favorite color?"]
    # The bridge sends 0, 50 and 100 before the result; SDK v1 handles the result first, and drops a progress
    # notification that comes with it in one read (its token already retired): on a loaded machine 50 came with
    # it once. What reached the host came in order, the first at least.
    progress = report["progress"]
    assert report["progress_result"] == "Progress test completed" and progress == [0, 50, 100][: len(progress)]
    assert progress, report
    assert report["logs"] == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert "Traceback" not in done.stderr


@pytest.fixture
@needs("process")
def fastmcp_elicit(tmp_path: Path) -> Iterator[str]:
    """`peers/fastmcp_elicit_server.py` (fastmcp 4.1.6, sessions) on loopback; its MCP URL."""
    port = free_port()
    command = [str(ensure_venv("fastmcp")), str(ROOT / "peers" / "fastmcp_elicit_server.py"), "--port", str(port)]
    process: Process = start(
        command, cwd=ROOT, env=peer_env(), log=tmp_path / "fastmcp.log", ready=PortOpen(port), timeout=60.0
    )
    with process:
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.mark.parametrize(("reply", "said"), [(Accepted({"guests": 4}), "Chez Lin for 4"), (Declined(), "declined")])
def test_a_fastmcp_servers_ctx_elicit_reaches_a_2026_host_as_a_round(
    fastmcp_elicit: str, reply: Any, said: str
) -> None:
    asked: list[str] = []

    async def answer(question: Question) -> Any:
        asked.append(question.message)
        return reply

    async def flow() -> tuple[str, str | None]:
        bridge = [BATON, "bridge", "--protocol", "2025-11-25", fastmcp_elicit]
        async with Client(bridge, on_form=answer, protocol="2026-07-28") as host:  # pinned: a late probe falls back
            result = await host.call_tool("reserve", {"restaurant": "Chez Lin"})
            return result.text, host.era

    text, era = asyncio.run(asyncio.wait_for(flow(), 60))
    assert era == "2026-07-28" and said in text
    assert asked == ["How many guests at Chez Lin?"]
