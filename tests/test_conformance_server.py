"""The official MCP conformance suite, server side: `baton serve examples/everything.py` must pass all
40 scenarios at 2026-07-28 with no failed and no warning checks (driven by tools/conformance.py)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
BATON = ROOT / ".venv" / "bin" / "baton"
RUNNER = ROOT / "tools" / "conformance.py"
EXPECTED_SCENARIOS = 40
STARTUP_TIMEOUT = 20.0
RUNNER_TIMEOUT = 840.0

pytestmark = [pytest.mark.conformance, pytest.mark.timeout(900)]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def tail(path: Path, limit: int = 4000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"(cannot read {path}: {exc})"
    return text[-limit:] or "(empty)"


def wait_until_listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while True:
        if proc.poll() is not None:
            pytest.fail(f"baton serve exited with {proc.returncode} before listening; its log:\n{tail(log)}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            if time.monotonic() >= deadline:
                pytest.fail(f"baton serve not listening on {port} after {STARTUP_TIMEOUT:.0f}s:\n{tail(log)}")
            time.sleep(0.1)


def stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)


def describe_failures(summary: dict[str, Any]) -> str:
    lines: list[str] = []
    for name, scenario in summary.get("scenarios", {}).items():
        if scenario.get("status") == "PASS":
            continue
        error = f": {scenario['error']}" if scenario.get("error") else ""
        lines.append(f"{scenario.get('status')} {name}{error}")
        lines += [f"    {p['status']} {p['id']}: {p['message']}" for p in scenario.get("problems", [])]
    return "\n".join(lines) or "(no failing scenario)"


def test_everything_server_passes_the_conformance_suite(tmp_path: Path) -> None:
    assert BATON.exists(), f"{BATON} is missing: run `./dev setup` first"
    port = free_port()
    log = tmp_path / "baton-serve.log"
    with log.open("wb") as log_file:
        server = subprocess.Popen(
            [str(BATON), "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"],
            cwd=ROOT,
            stdin=subprocess.DEVNULL,
            stdout=log_file,
            stderr=log_file,
        )
    try:
        wait_until_listening(server, port, log)
        try:
            run = subprocess.run(
                [sys.executable, str(RUNNER), "server", f"http://127.0.0.1:{port}/mcp", "--json"],
                cwd=ROOT,
                capture_output=True,
                text=True,
                timeout=RUNNER_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired as exc:
            pytest.fail(f"tools/conformance.py timed out after {exc.timeout:.0f}s; server log:\n{tail(log)}")
        try:
            summary: dict[str, Any] = json.loads(run.stdout)
        except ValueError:
            pytest.fail(
                f"tools/conformance.py exited {run.returncode} without a JSON summary\n"
                f"stdout:\n{run.stdout[-3000:]}\nstderr:\n{run.stderr[-3000:]}\nserver log:\n{tail(log)}"
            )
    finally:
        stop(server)

    counts = summary["summary"]
    report = [line for line in run.stderr.splitlines() if not line.startswith("PASS ")]
    details = "\n\n".join(
        [
            describe_failures(summary),
            "runner report (PASS lines dropped):\n" + "\n".join(report[-150:]),
            f"server log:\n{tail(log, 2000)}",
        ]
    )
    assert counts["scenarios"] == EXPECTED_SCENARIOS, details
    assert (counts["passed"], counts["failed"], counts["warnings"]) == (EXPECTED_SCENARIOS, 0, 0), details
    assert summary["errors"] == [], details
    assert run.returncode == 0, details
