"""`baton install` and the file it writes (issue 41, item 4): links planted in a workspace are never
followed, a symbolic-link config is written through to its file (or refused, P117), concurrent installs
keep every entry, VS Code's JSON with comments is read as VS Code reads it, a secret leaves the file and its
backup 0600, and every file-system error is one line naming the path, exit 1."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

import pytest
from support import processes
from support.install import UNPRIVILEGED, baton
from support.paths import BATON, ROOT

from baton.install import jsonc

PROJECTS = ROOT / "examples" / "projects.py"
URL = "https://mcp.example.com/mcp"


def one_line_exit_1(done: subprocess.CompletedProcess[str], path: Path) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr, done.stderr
    assert str(path) in done.stderr, done.stderr


@pytest.mark.process
def test_a_link_planted_at_the_backup_is_replaced_not_followed(tmp_path: Path) -> None:
    workspace = tmp_path / "checkout"
    settings = workspace / ".vscode" / "mcp.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{"servers": {}}')
    hook = workspace / ".git" / "hooks" / "pre-commit"
    hook.parent.mkdir(parents=True)
    (settings.parent / "mcp.json.bak").symlink_to(hook)  # an untrusted checkout plants its hook this way
    done = baton(tmp_path, "vscode", URL, "--name", "remote", "--workspace", str(workspace))
    assert done.returncode == 0, done.stderr
    assert not hook.exists()
    backup = settings.parent / "mcp.json.bak"
    assert not backup.is_symlink() and backup.read_text() == '{"servers": {}}'


@pytest.mark.process
def test_a_link_planted_at_the_lock_file_is_refused(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    victim = tmp_path / "victim"
    (config.parent / "mcp.json.lock").symlink_to(victim)
    done = baton(tmp_path, "cursor", URL, "--name", "remote")
    one_line_exit_1(done, config.parent / "mcp.json.lock")
    assert not victim.exists() and not config.exists()


@pytest.mark.process
def test_a_symlinked_config_is_written_through_and_stays_a_link(tmp_path: Path) -> None:
    dotfiles = tmp_path / "dotfiles" / "mcp.json"
    dotfiles.parent.mkdir()
    dotfiles.write_text('{"mcpServers": {"other": {"url": "https://other.example/mcp"}}}')
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.symlink_to(dotfiles)
    done = baton(tmp_path, "cursor", URL, "--name", "remote")
    assert done.returncode == 0, done.stderr
    assert config.is_symlink() and f"(a link to {dotfiles})" in done.stdout
    assert set(json.loads(dotfiles.read_text())["mcpServers"]) == {"other", "remote"}
    assert json.loads((dotfiles.parent / "mcp.json.bak").read_text())["mcpServers"].keys() == {"other"}


@pytest.mark.process
def test_a_link_to_nothing_or_out_of_the_workspace_is_refused(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    nowhere = tmp_path / ".git" / "hooks" / "pre-commit"
    config.symlink_to(nowhere)
    done = baton(tmp_path, "cursor", URL, "--name", "remote")
    one_line_exit_1(done, config)
    assert "does not exist" in done.stderr and not nowhere.exists() and config.is_symlink()

    workspace = tmp_path / "checkout"
    (workspace / ".vscode").mkdir(parents=True)
    outside = tmp_path / "elsewhere.json"
    outside.write_text("{}")
    (workspace / ".vscode" / "mcp.json").symlink_to(outside)
    done = baton(tmp_path, "vscode", URL, "--name", "remote", "--workspace", str(workspace))
    one_line_exit_1(done, workspace / ".vscode" / "mcp.json")
    assert "out of the workspace" in done.stderr and outside.read_text() == "{}"


@pytest.mark.process
def test_thirty_pairs_of_concurrent_installs_keep_every_entry(tmp_path: Path) -> None:
    """Two installs into one file at once, 30 times (five pairs at a time, each pair into its own file)."""
    lost = []
    for batch in range(6):
        started = []
        for pair in range(batch * 5, batch * 5 + 5):
            home = tmp_path / f"home{pair}"
            home.mkdir()
            env = {**os.environ, "HOME": str(home)}
            for name in ("first", "second"):
                command = [BATON, "install", "cursor", URL, "--name", name]
                started.append((pair, processes.popen(command, env=env, stdout=subprocess.PIPE, text=True)))
        for _, process in started:
            out = process.communicate(timeout=120)[0]
            assert process.returncode == 0 and "added" in out, out
        for pair in range(batch * 5, batch * 5 + 5):  # read once both installs of every pair have ended
            kept = json.loads((tmp_path / f"home{pair}" / ".cursor" / "mcp.json").read_text())["mcpServers"]
            if set(kept) != {"first", "second"}:
                lost.append(pair)
    assert not lost, f"an entry was lost in pairs {sorted(set(lost))} of 30"


def test_json_with_comments_keeps_the_line_and_column_of_an_error() -> None:
    text = '{\n  /* two\n  lines */ "a": 1, // c\n  "b" 2\n}'
    plain, had_comments = jsonc.plain(text)
    assert had_comments and len(plain) == len(text) and plain.count("\n") == text.count("\n")
    with pytest.raises(json.JSONDecodeError) as error:
        json.loads(plain)
    assert (error.value.lineno, error.value.colno) == (4, 7)


VSCODE_ACCEPTS = [
    '{"servers": {"a": {"url": "u"}, // a comment after a trailing comma\n}, }',
    '{"servers": {"a": {"url": "u"},\n  /* b, commented out: */\n  // "b": {"url": "v"},\n},\n"inputs": [1, 2, ],}',
    '{"servers": {"a": {"url": "u"},},}',
    '{"servers": {"a": {"url": "u, // not a comment"}}} // the end',
]


@pytest.mark.process
@pytest.mark.parametrize("content", VSCODE_ACCEPTS)
def test_json_with_comments_as_vscode_reads_it(tmp_path: Path, content: str) -> None:
    settings = tmp_path / ".vscode" / "mcp.json"
    settings.parent.mkdir()
    settings.write_text(content)
    done = baton(tmp_path, "vscode", URL, "--name", "remote", "--workspace", str(tmp_path))
    assert done.returncode == 0, done.stderr
    servers = json.loads(settings.read_text())["servers"]
    assert set(servers) == {"a", "remote"} and servers["a"]["url"].startswith("u")
    assert ("comments" in done.stderr) == ("/*" in content or "// " in content)


@pytest.mark.process
@pytest.mark.parametrize(("content", "said"), [("{,}", "line 1, column 2"), ('{"servers": [1,,2]}', "column 16")])
def test_a_comma_without_a_value_is_refused_as_vscode_refuses_it(tmp_path: Path, content: str, said: str) -> None:
    settings = tmp_path / ".vscode" / "mcp.json"
    settings.parent.mkdir()
    settings.write_text(content)
    done = baton(tmp_path, "vscode", URL, "--name", "remote", "--workspace", str(tmp_path))
    one_line_exit_1(done, settings)
    assert said in done.stderr and settings.read_text() == content


@pytest.mark.process
def test_a_secret_leaves_the_config_and_its_backup_0600(tmp_path: Path) -> None:
    config = tmp_path / ".cursor" / "mcp.json"
    config.parent.mkdir()
    config.write_text('{"mcpServers": {}}')
    config.chmod(0o644)
    plain = baton(tmp_path, "cursor", URL, "--name", "remote")
    assert plain.returncode == 0 and stat.S_IMODE(config.stat().st_mode) == 0o644  # no secret: its mode kept
    done = baton(tmp_path, "cursor", str(PROJECTS), "--env", "PROJECTS_NOTE=s3cr3t")
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    assert stat.S_IMODE((config.parent / "mcp.json.bak").stat().st_mode) == 0o600


@pytest.mark.process
def test_a_server_file_in_an_unreadable_folder_is_one_line(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    server = locked / "projects.py"
    server.write_text(PROJECTS.read_text())
    locked.chmod(0)
    try:
        done = baton(tmp_path, "cursor", str(server), modes_apply=True)
        serve = processes.run(
            [*(UNPRIVILEGED if os.geteuid() == 0 else []), BATON, "serve", str(server), "--stdio"],
            capture_output=True, text=True, timeout=60, check=False, stdin=subprocess.DEVNULL,
        )  # fmt: skip
    finally:
        locked.chmod(0o755)
    one_line_exit_1(done, server)
    assert "Permission denied" in done.stderr
    assert serve.returncode == 2 and serve.stderr.strip() == f"baton serve: cannot read {server}: Permission denied"


@pytest.mark.process
def test_file_system_errors_are_one_line_naming_the_path(tmp_path: Path) -> None:
    folder = tmp_path / ".cursor"
    folder.mkdir()
    folder.chmod(0o555)
    try:
        done = baton(tmp_path, "cursor", URL, "--name", "remote", modes_apply=True)
    finally:
        folder.chmod(0o755)
    one_line_exit_1(done, folder)
    folder.rmdir()
    folder.write_text("a file where the folder goes")
    done = baton(tmp_path, "cursor", URL, "--name", "remote")
    one_line_exit_1(done, folder)
    for env_file in (tmp_path / "missing.env", tmp_path / "latin1.env"):
        (tmp_path / "latin1.env").write_bytes(b"NOTE=caf\xe9\n")
        one_line_exit_1(baton(tmp_path, "mcp-json", str(PROJECTS), "--env-file", str(env_file)), env_file)
