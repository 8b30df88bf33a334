"""The tests' layout: they mirror the package, one flat namespace of module names, and a folder per package.

tests/PKG/test_*.py test src/baton/PKG/; tests/test_X.py tests the top-level module src/baton/X.py; the folders of
PROJECT_FOLDERS hold what no one package owns. A new test file that fits none of these says where it goes.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest
from support.paths import ROOT
from support.serve import server_environment
from support.source_tree import parsed

TESTS = ROOT / "tests"
SRC = ROOT / "src" / "baton"
PROJECT_FOLDERS = {
    "cli": "the commands: src/baton/cli.py, cli_client/, cli_keys.py and install/ (one package, baton/cli/, to come)",
    "bench": "the tests of bench/'s scripts",
    "conformance": "the official conformance suite and the public fuzzer against Baton",
    "interop": "Baton against the other SDKs, each in its venv",
    "scaleout": "several instances behind nginx sharing a redis-server",
    "project": "the docs, the README's commands, the tutorial, the demo, the layout and the markers",
}


def _test_files() -> list[str]:
    return sorted(str(path.relative_to(TESTS)) for path in TESTS.rglob("test_*.py"))


def test_each_test_file_is_where_its_subject_is() -> None:
    misplaced: list[str] = []
    for name in _test_files():
        parts = name.split("/")
        if len(parts) == 1:
            module = parts[0].removeprefix("test_")
            if not (SRC / module).is_file():
                misplaced.append(f"{name}: tests/ holds only tests of a top-level module (src/baton/{module} is not)")
        elif len(parts) != 2 or not ((SRC / parts[0] / "__init__.py").is_file() or parts[0] in PROJECT_FOLDERS):
            misplaced.append(
                f"{name}: not a folder named after a package of src/baton, nor one of {sorted(PROJECT_FOLDERS)}"
            )
    assert not misplaced, "move these (tests/conftest.py says where tests go):\n" + "\n".join(misplaced)


def test_no_two_test_modules_share_a_name() -> None:
    """tests/ and every folder of test files are on sys.path (tests/conftest.py): one namespace of module names."""
    folders = [TESTS, *(path.parent for path in TESTS.glob("*/test_*.py"))]
    where: dict[str, set[str]] = defaultdict(set)
    for folder in folders:
        for path in folder.glob("*.py"):
            if path.name != "conftest.py":
                where[path.name].add(str(path.relative_to(TESTS)))
    twice = {name: sorted(places) for name, places in where.items() if len(places) > 1}
    assert not twice, f"pytest imports test modules by their name alone (no __init__.py): rename one of {twice}"


# What starts a process, by module: `subprocess.run(...)`, `os.fork()`, `asyncio.create_subprocess_exec(...)`.
STARTERS = {
    "subprocess": {"Popen", "run", "call", "check_call", "check_output", "getoutput", "getstatusoutput"},
    "asyncio": {"create_subprocess_exec", "create_subprocess_shell"},
    "os": {"fork", "forkpty", "posix_spawn", "posix_spawnp", "system", "popen", "spawnv", "spawnve", "execv", "execve"},
    "pty": {"fork", "spawn"},
    "multiprocessing": {"Process", "Pool"},
}
# The files that may start a process themselves, and why.
STARTERS_ALLOWED = {
    "support/processes.py": "the one module that starts the tests' processes",
    "project/test_markers.py": "starts what the `unit` guard must refuse, inside the guard",
}


def test_every_process_starts_through_support_processes() -> None:
    found: list[str] = []
    for path in sorted(TESTS.rglob("*.py")):
        name = str(path.relative_to(TESTS))
        if name in STARTERS_ALLOWED:
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.ImportFrom) and node.module in STARTERS:
                taken = {alias.name for alias in node.names} & STARTERS[node.module]
                found += [f"{name}:{node.lineno}: from {node.module} import {t}" for t in sorted(taken)]
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.attr in STARTERS.get(node.func.value.id, ())
            ):
                found.append(f"{name}:{node.lineno}: {node.func.value.id}.{node.func.attr}(...)")
    assert not found, "start processes through support.processes (start, spawn, run, popen):\n" + "\n".join(found)


def test_no_test_server_uses_the_home_data_directory(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A `baton serve` started by a module fixture (before conftest sets the test's data directory) keeps its keys
    and ledger beside its log, never under ~/.local/share/baton; a test's own data directory wins."""
    log = tmp_path / "module" / "serve.log"
    monkeypatch.delenv("BATON_DATA_DIR")
    assert server_environment(log)["BATON_DATA_DIR"] == str(log.parent)
    assert server_environment(log, {"BATON_DATA_DIR": "/elsewhere"})["BATON_DATA_DIR"] == "/elsewhere"
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "test's own"))
    assert server_environment(log)["BATON_DATA_DIR"] == str(tmp_path / "test's own")
