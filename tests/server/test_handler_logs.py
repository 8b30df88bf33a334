"""A handler's `ctx.log` lines: shown at info by `baton serve` (and so `baton dev`) without a flag, written
once per flow however many rounds replay them, and `--log-level` explained by `--help` (protocol.md P129)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.paths import BATON
from support.serve import serve_once
from wire import meta

from baton import Accepted, Context, Server
from baton.testing import Connected, ScriptedUser, memory_client

CHATTY = """
from baton import Context, Server

server = Server("chatty")


@server.tool()
async def hello(ctx: Context) -> str:
    await ctx.log("info", "hello from the tool")
    await ctx.log("debug", "a debug line")
    return "hi"
"""


def call_over_stdio(tmp_path: Path, *flags: str) -> subprocess.CompletedProcess[str]:
    (tmp_path / "chatty.py").write_text(textwrap.dedent(CHATTY))
    request = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "hello", "_meta": meta()}}
    return serve_once(tmp_path, "chatty.py", "--stdio", *flags, messages=[request])


@pytest.mark.process
def test_ctx_log_shows_at_info_without_a_flag_and_a_flag_applies_to_it(tmp_path: Path) -> None:
    done = call_over_stdio(tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["result"]["content"][0]["text"] == "hi"
    assert "INFO baton.handler: hello from the tool" in done.stderr, done.stderr
    assert "a debug line" not in done.stderr
    assert "requestState keys" not in done.stderr  # Baton's own info lines stay quiet without a flag
    quiet = call_over_stdio(tmp_path, "--log-level", "warning")
    assert quiet.returncode == 0, quiet.stderr
    assert "hello from the tool" not in quiet.stderr
    loud = call_over_stdio(tmp_path, "--log-level", "debug")
    assert "a debug line" in loud.stderr, loud.stderr


@pytest.mark.process
def test_log_level_is_explained_by_help() -> None:
    done = processes.run([BATON, "serve", "--help"], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0
    text = " ".join(done.stdout.split())
    assert "--log-level {debug,info,warning,error} what the server writes to stderr" in text, text
    assert "ctx.log lines from info up" in text


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_line_before_an_ask_is_written_once_per_flow(era: str, caplog: pytest.LogCaptureFixture) -> None:
    server = Server("logs")

    @server.tool()
    async def two_questions(ctx: Context) -> str:
        await ctx.log("info", "starting")
        first = await ctx.confirm("First?", key="a")
        await ctx.log("info", f"first: {first}")
        second = await ctx.gather(ctx.confirm("Second?", key="b"), ctx.confirm("Third?", key="c"))
        await ctx.log("info", f"then: {second}")
        return "done"

    user = ScriptedUser({key: Accepted({"confirm": True}) for key in "abc"})
    notes: list[dict[str, Any]] = []

    async def note(message: dict[str, Any]) -> None:
        notes.append(message)

    async def main() -> str:
        async with memory_client(server, user, protocol=era) as client:
            return (await client.call_tool("two_questions", progress=note)).text

    with caplog.at_level("INFO", logger="baton.handler"):
        assert asyncio.run(main()) == "done"
    lines = [r.getMessage() for r in caplog.records if r.name == "baton.handler"]
    assert lines == ["starting", "first: True", "then: (True, True)"]
    if era == "2025-11-25":  # a session gets every level until it sets one: the same lines, once each
        sent = [n["params"]["data"] for n in notes if n.get("method") == "notifications/message"]
        assert sent == lines


def test_a_line_after_an_ask_that_a_later_round_skips_is_still_written(caplog: pytest.LogCaptureFixture) -> None:
    """`ctx.secret` asks in the first round, and not in the next (the vault has the key by then): the count of
    lines written, not of asks made, says where the replay ends."""
    server = Server("logs")

    @server.tool()
    async def deploy(ctx: Context) -> str:
        await ctx.info("starting")
        await ctx.secret("deploy_key", "Your deploy key, please")
        await ctx.info("got the key")
        if not await ctx.confirm("Deploy now?", key="go"):
            return "not deployed"
        await ctx.info("deployed")
        return "deployed"

    user = ScriptedUser({"connect-deploy_key": Connected("key-1"), "go": Accepted({"confirm": True})})

    async def main() -> str:
        async with memory_client(server, user) as client:
            return (await client.call_tool("deploy")).text

    with caplog.at_level("INFO", logger="baton.handler"):
        assert asyncio.run(main()) == "deployed"
    assert [r.getMessage() for r in caplog.records if r.name == "baton.handler"] == [
        "starting", "got the key", "deployed",
    ]  # fmt: skip
