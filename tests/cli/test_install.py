"""`baton install` for each host, into a throw-away home, against golden files; then the written entry is
started exactly as a host starts it (its command, arguments and variables, from `/`) and listed by a real
2025-11-25 host client (`mcp` 1.30, peers/legacy_mcp1_host.py) and by Baton's client."""

from __future__ import annotations

import asyncio
import json
import os
import stat
import sys
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.install import baton, configs
from support.paths import ROOT
from support.peer_venvs import ensure_venv, peer_env

from baton.client import Client

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

GOLDEN = Path(__file__).parents[1] / "golden" / "install"
PROJECTS = ROOT / "examples" / "projects.py"
NEEDS_URL = """
from baton import Context, Server

server = Server("weather")


@server.tool()
async def forecast(ctx: Context, city: str) -> str:
    handle = await ctx.secret("weather_api_key", "Connect your weather account")
    return f"{city}: {len(await handle.reveal())}"
"""


def generic(text: str) -> str:
    """A file or output with this machine's paths replaced by placeholders, to compare with a golden file."""
    return text.replace(sys.executable, "{python}").replace(str(ROOT), "{root}")


def golden(name: str, text: str) -> None:
    path = GOLDEN / name
    if os.environ.get("BATON_UPDATE_GOLDEN"):
        path.write_text(generic(text))
    assert generic(text) == path.read_text(), f"differs from {path} (BATON_UPDATE_GOLDEN=1 rewrites it)"


WRITTEN = {
    "claude-desktop": (".config/Claude/claude_desktop_config.json", "mcpServers"),
    "cursor": (".cursor/mcp.json", "mcpServers"),
    "vscode": (".config/Code/User/mcp.json", "servers"),
}


@pytest.mark.parametrize("host", sorted(WRITTEN))
def test_each_host_file_matches_its_golden_file_and_starts_from_anywhere(
    host: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    done = baton(tmp_path, host, str(PROJECTS), "--env", "PROJECTS_NOTE=kept secret")
    assert done.returncode == 0, done.stderr
    assert "kept secret" not in done.stdout + done.stderr
    relative, key = WRITTEN[host]
    written = tmp_path / relative
    golden(f"{host}.json", written.read_text())
    entry = json.loads(written.read_text())[key]["projects"]
    assert entry["env"] == {"PROJECTS_NOTE": "kept secret"}
    # as a host starts it: only its command, arguments and variables, from /
    listed = processes.run(
        [str(ensure_venv("mcp1")), str(ROOT / "peers" / "legacy_mcp1_host.py"), json.dumps(entry)],
        capture_output=True, text=True, timeout=120, check=False, env=peer_env(),
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "delete_project" in json.loads(listed.stdout)

    async def baton_lists() -> list[str]:
        command = [entry["command"], *entry["args"]]
        async with Client(command, env=entry.get("env")) as client:
            return [tool.name for tool in await client.list_tools()]

    monkeypatch.chdir("/")
    assert "delete_project" in asyncio.run(baton_lists())


def test_mcp_json_and_claude_code_print_and_never_echo_values(tmp_path: Path) -> None:
    printed = baton(tmp_path, "mcp-json", str(PROJECTS), "--env", "TOKEN=s3cr3t")
    assert printed.returncode == 0, printed.stderr
    golden("mcp-json.json", printed.stdout)
    assert "s3cr3t" not in printed.stdout + printed.stderr and "${TOKEN}" in printed.stdout
    command = baton(tmp_path, "claude-code", str(PROJECTS), "--env", "TOKEN=s3cr3t")
    assert command.returncode == 0, command.stderr
    golden("claude-code.txt", command.stdout)
    assert "s3cr3t" not in command.stdout + command.stderr
    url = baton(tmp_path, "claude-code", "http://127.0.0.1:8000/mcp", "--name", "local")
    assert url.stdout.strip().endswith("claude mcp add --transport http local http://127.0.0.1:8000/mcp")
    assert not configs(tmp_path)  # neither wrote a config


def test_url_entries(tmp_path: Path) -> None:
    for host in ("cursor", "vscode"):
        assert baton(tmp_path, host, "https://mcp.example.com/mcp", "--name", "remote").returncode == 0
    cursor = json.loads((tmp_path / ".cursor" / "mcp.json").read_text())
    vscode = json.loads((tmp_path / ".config" / "Code" / "User" / "mcp.json").read_text())
    assert cursor == {"mcpServers": {"remote": {"url": "https://mcp.example.com/mcp"}}}
    assert vscode == {"servers": {"remote": {"type": "http", "url": "https://mcp.example.com/mcp"}}}
    desktop = baton(tmp_path, "claude-desktop", "https://mcp.example.com/mcp")  # the bridge: test_install_bridge.py
    assert desktop.returncode == 0, desktop.stderr


def test_reinstall_replaces_only_its_entry_and_keeps_unknown_keys(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    before = {"theme": {"x": 1}, "mcpServers": {"other": {"command": "other"}, "projects": {"command": "old"}}}
    config.write_text(json.dumps(before))
    done = baton(tmp_path, "cursor", str(PROJECTS))
    assert done.returncode == 0 and "replaced 'projects'" in done.stdout
    after = json.loads(config.read_text())
    assert after["theme"] == {"x": 1} and after["mcpServers"]["other"] == {"command": "other"}
    assert after["mcpServers"]["projects"]["command"] == sys.executable
    assert json.loads((config.parent / "mcp.json.bak").read_text()) == before
    again = baton(tmp_path, "cursor", str(PROJECTS), "--name", "second")
    assert set(json.loads(config.read_text())["mcpServers"]) == {"other", "projects", "second"}
    assert again.returncode == 0


def test_a_workspace_file_and_json_with_comments(tmp_path: Path) -> None:
    workspace = tmp_path / "proj"
    settings = workspace / ".vscode" / "mcp.json"
    settings.parent.mkdir(parents=True)
    settings.write_text(
        '{\n  // my servers\n  "servers": {"a": {"type": "stdio", "command": "a",},},\n  "inputs": []\n}\n'
    )
    done = baton(tmp_path, "vscode", str(PROJECTS), "--workspace", str(workspace))
    assert done.returncode == 0, done.stderr
    after = json.loads(settings.read_text())
    assert set(after["servers"]) == {"a", "projects"} and after["inputs"] == []
    assert "comments" in done.stderr and "mcp.json.bak" in done.stderr  # said, and kept in the backup
    assert "// my servers" in (settings.parent / "mcp.json.bak").read_text()


@pytest.mark.parametrize(
    ("content", "said"),
    [
        ('{"mcpServers": {\n  "a": {"command": "a"}\n  "b": 1}', "line 3, column 3"),
        ("[1, 2]", "holds a JSON list, not an object"),
        ('{"mcpServers": []}', '"mcpServers" in'),
    ],
)
def test_a_file_that_is_not_valid_is_never_overwritten(tmp_path: Path, content: str, said: str) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text(content)
    done = baton(tmp_path, "cursor", str(PROJECTS))
    assert done.returncode == 1
    assert str(config) in done.stderr and said in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr
    assert config.read_text() == content and not (config.parent / "mcp.json.bak").exists()


def test_empty_missing_and_read_only_files(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    assert baton(tmp_path, "cursor", str(PROJECTS)).returncode == 0  # missing: created
    config.write_text("")
    assert baton(tmp_path, "cursor", str(PROJECTS)).returncode == 0  # empty: taken as {}
    assert "projects" in json.loads(config.read_text())["mcpServers"]
    config.chmod(stat.S_IRUSR | stat.S_IRGRP)
    before = config.read_text()
    done = baton(tmp_path, "cursor", str(PROJECTS), "--name", "another")
    assert done.returncode == 1 and "is read-only; it was not changed" in done.stderr
    assert config.read_text() == before


def test_dry_run_writes_nothing(tmp_path: Path) -> None:
    done = baton(tmp_path, "claude-desktop", str(PROJECTS), "--dry-run", "--env", "K=v4lue")
    assert done.returncode == 0 and "would add 'projects'" in done.stdout and "${K}" in done.stdout
    assert "v4lue" not in done.stdout
    assert not configs(tmp_path)


def test_a_server_the_host_could_not_start_is_not_installed(tmp_path: Path) -> None:
    secret = tmp_path / "src" / "weather.py"
    secret.parent.mkdir()
    secret.write_text(NEEDS_URL)
    home = tmp_path / "home"
    home.mkdir()
    done = baton(home, "claude-desktop", str(secret))
    assert done.returncode == 2
    assert "not installed" in done.stderr and "BATON_PUBLIC_URL" in done.stderr and "--env" in done.stderr
    assert not configs(home)
    fixed = baton(home, "claude-desktop", str(secret), "--env", "BATON_PUBLIC_URL=http://127.0.0.1:8000")
    assert fixed.returncode == 0, fixed.stderr
    missing = baton(home, "cursor", str(tmp_path / "nope.py"))
    assert missing.returncode == 2 and "no such file" in missing.stderr


def test_the_check_runs_in_the_hosts_environment_not_the_installers_shell(tmp_path: Path) -> None:
    """Issue 42, item 1: `BATON_PUBLIC_URL` exported, as the tutorial says, is not the entry's: the check
    refuses, names it and the `--env` to add (never its value); with that `--env`, it installs."""
    secret = tmp_path / "src" / "weather.py"
    secret.parent.mkdir()
    secret.write_text(NEEDS_URL)
    home = tmp_path / "home"
    home.mkdir()
    shell = {"BATON_PUBLIC_URL": "http://127.0.0.1:8123"}
    done = baton(home, "claude-desktop", str(secret), shell=shell)
    assert done.returncode == 2, done.stdout + done.stderr
    assert 'add --env BATON_PUBLIC_URL="$BATON_PUBLIC_URL"' in done.stderr and "8123" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and not configs(home)
    fixed = baton(home, "claude-desktop", str(secret), "--env", "BATON_PUBLIC_URL=http://127.0.0.1:8123", shell=shell)
    assert fixed.returncode == 0, fixed.stderr
    written = json.loads((home / WRITTEN["claude-desktop"][0]).read_text())
    assert written["mcpServers"]["weather"]["env"] == shell


def test_no_variable_of_the_shell_reaches_the_check(tmp_path: Path) -> None:
    server = tmp_path / "reads_env.py"
    home = tmp_path / "home"
    home.mkdir()
    server.write_text(
        "import os\nfrom baton import Server\n\nBASE = os.environ['WEATHER_API_BASE']\nserver = Server('w')\n"
    )
    shell = {"WEATHER_API_BASE": "https://api.example.com"}
    done = baton(home, "cursor", str(server), shell=shell)
    assert done.returncode == 2 and "not installed" in done.stderr and "WEATHER_API_BASE" in done.stderr
    assert not configs(home)
    fixed = baton(home, "cursor", str(server), "--env", "WEATHER_API_BASE=https://api.example.com")
    assert fixed.returncode == 0, fixed.stderr


def test_an_env_file_and_bad_pairs(tmp_path: Path) -> None:
    env_file = tmp_path / "server.env"
    env_file.write_text("# comment\nexport A='1'\nB=2\n")
    done = baton(tmp_path, "cursor", str(PROJECTS), "--env-file", str(env_file), "--env", "B=3")
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / ".cursor" / "mcp.json").read_text())["mcpServers"]["projects"]["env"] == {
        "A": "1",
        "B": "3",
    }
    bad = baton(tmp_path, "cursor", str(PROJECTS), "--env", "no-equals")
    assert bad.returncode == 2 and "--env takes KEY=VALUE" in bad.stderr


def test_python_server_py_serves_over_stdio(monkeypatch: pytest.MonkeyPatch) -> None:
    """`Server.run()` at the end of an example: `python examples/projects.py` is a stdio server."""

    async def call() -> Any:
        async with Client([sys.executable, str(PROJECTS)]) as client:
            tools = [tool.name for tool in await client.list_tools()]
            return tools, (await client.call_tool("list_projects")).text

    monkeypatch.chdir("/")
    tools, text = asyncio.run(call())
    assert "delete_project" in tools and text
