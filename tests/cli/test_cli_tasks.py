"""`baton call` on a tool that runs as a task (protocol.md P173): it declares the Tasks extension, follows the
task to its end, shows its status on stderr while it runs, and answers its questions as in a request."""

from __future__ import annotations

import subprocess

import pytest
from support import processes
from support.paths import BATON, ROOT

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

STDIO = ("--", BATON, "serve", "examples/everything.py", "--stdio")


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return processes.run([BATON, *args], cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)


def test_call_shows_a_tasks_status_and_answers_its_question() -> None:
    done = run_cli("call", "confirm_delete", "filename=notes.txt", "--answer", '*={"confirm": true}', *STDIO)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("Deleted notes.txt")
    assert "task " in done.stderr and ": working" in done.stderr and ": input_required" in done.stderr
    assert ": completed" in done.stderr


def test_call_of_a_failing_task_exits_with_the_protocol_error() -> None:
    done = run_cli("call", "protocol_error_job", *STDIO)
    assert done.returncode != 0
    assert "protocol_error_job always fails with a protocol error" in done.stdout + done.stderr
    assert "Traceback" not in done.stderr
