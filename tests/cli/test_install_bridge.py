"""`baton install HOST URL --bridge`: a stdio entry that runs `baton bridge URL` (protocol.md P159); the default
for Claude Desktop, whose file takes no URL. A header goes in only as a `$VAR` reference."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support.install import baton, configs
from support.paths import ROOT
from support.serve import RunningServer

from baton.client import Client

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

URL = "https://mcp.example.com/mcp"
HEADER = "X-Api-Key=$EXAMPLE_KEY"
BRIDGE = [sys.executable, "-m", "baton", "bridge", URL, "--header", HEADER]


def test_claude_desktop_installs_a_url_as_the_bridge(tmp_path: Path) -> None:
    done = baton(tmp_path, "claude-desktop", URL, "--header", HEADER)
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    entry = written["mcpServers"]["mcp.example.com"]
    assert [entry["command"], *entry["args"]] == BRIDGE and "env" not in entry


def test_vscode_and_cursor_take_bridge_and_keep_url_entries_without_it(tmp_path: Path) -> None:
    assert baton(tmp_path, "vscode", URL, "--bridge", "--header", HEADER, "--name", "r").returncode == 0
    vscode = json.loads((tmp_path / ".config" / "Code" / "User" / "mcp.json").read_text())
    assert vscode == {"servers": {"r": {"type": "stdio", "command": BRIDGE[0], "args": BRIDGE[1:]}}}
    assert baton(tmp_path, "cursor", URL, "--bridge", "--name", "r").returncode == 0
    cursor = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())
    assert cursor == {"mcpServers": {"r": {"command": BRIDGE[0], "args": BRIDGE[1:5]}}}
    assert baton(tmp_path, "cursor", URL, "--name", "plain").returncode == 0
    assert json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["plain"] == {"url": URL}


def test_claude_code_gets_the_bridge_command(tmp_path: Path) -> None:
    done = baton(tmp_path, "claude-code", URL, "--bridge", "--header", HEADER, "--name", "r")
    assert done.returncode == 0, done.stderr
    expected = f"claude mcp add r -- {sys.executable} -m baton bridge {URL} --header 'X-Api-Key=$EXAMPLE_KEY'"
    assert done.stdout.strip().endswith(expected)
    assert not configs(tmp_path)


def test_a_header_value_is_never_written_and_misuse_is_one_line(tmp_path: Path) -> None:
    literal = baton(tmp_path, "claude-desktop", URL, "--header", "X-Api-Key=s3cr3t")
    assert literal.returncode == 2 and "s3cr3t" not in literal.stdout + literal.stderr
    assert literal.stderr.startswith("baton install: --header X-Api-Key: give the value as $VAR")
    unbridged = baton(tmp_path, "cursor", URL, "--header", HEADER)
    assert unbridged.returncode == 2 and "add --bridge" in unbridged.stderr
    file_target = baton(tmp_path, "cursor", str(ROOT / "examples" / "projects.py"), "--bridge")
    assert file_target.returncode == 2 and "--bridge and --header are for an http(s) URL" in file_target.stderr
    assert not configs(tmp_path)


def test_the_written_entry_runs_the_bridge_to_the_server(tmp_path: Path, serve: Callable[..., RunningServer]) -> None:
    server = serve(str(ROOT / "examples" / "everything.py"))
    assert baton(tmp_path, "claude-desktop", server.url, "--header", HEADER, "--name", "e").returncode == 0
    entry = json.loads((tmp_path / ".config" / "Claude" / "claude_desktop_config.json").read_text())["mcpServers"]["e"]

    async def listed() -> str:
        # as the host starts it: its command and arguments, the variable from the host's environment
        async with Client([entry["command"], *entry["args"]], env={"EXAMPLE_KEY": "k"}) as host:
            return (await host.call_tool("test_simple_text")).text

    assert asyncio.run(asyncio.wait_for(listed(), 60)) == "This is a simple text response for testing."
