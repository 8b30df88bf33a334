"""Issue: people take their time and hosts drop questions. The client side: a person slower than the
deadline in either protocol version, `baton call --answer/--answers/--timeout`, a wrong path, Ctrl-C."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.paths import BATON, ROOT

from baton.client import Accepted, Client, Question

EVERYTHING = "examples/everything.py"


@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_a_person_slower_than_the_deadline_in_either_version(serve: Any, protocol: str) -> None:
    """A Baton server's question answered after three times the client's deadline: the person's time (P90)."""
    server = serve(EVERYTHING)

    async def slow(question: Question) -> Any:
        await asyncio.sleep(1.5)  # three times the deadline: the person's time, not the server's
        return Accepted({"confirm": True})

    async def flow() -> str:
        async with Client(server.url, protocol=protocol, on_form=slow, deadline_s=0.5) as client:
            return (await client.call_tool("perform", {"action": "deploy"})).text

    assert asyncio.run(flow()) == "done: deploy"


def baton(*args: str, stdin: int | None = subprocess.DEVNULL, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [BATON, *args], cwd=ROOT, stdin=stdin, capture_output=True, text=True, timeout=timeout, check=False
    )


def test_answers_on_the_command_line(serve: Any, tmp_path: Path) -> None:
    url = serve(EVERYTHING).url
    flow = "test_input_required_result_multi_round"
    done = baton("call", url, flow, "--answer", 'step1={"name":"Al"}', "--answer", 'step2={"color":"red"}')
    assert done.returncode == 0 and done.stdout.strip() == "Al likes red", done.stderr
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps({"step1": {"name": "Bo"}, "step2": "decline"}))
    assert baton("call", url, flow, "--answers", str(answers)).stdout.strip() == "Bo likes no colour"
    declined = baton("call", url, "perform", "action=x", "--answer", "*=decline")
    assert declined.stdout.strip() == "not confirmed: x"
    # checked against the schema like a typed answer
    wrong = baton("call", url, flow, "--answer", 'step1={"nom":"Al"}')
    assert wrong.returncode == 2 and "--answer step1: the answer to 'step1' does not fit the question" in wrong.stderr
    # no terminal and no answer: a clear failure, not a hang
    started = time.monotonic()
    missing = baton("call", url, flow, "--answer", 'step1={"name":"Al"}')
    assert missing.returncode == 2 and time.monotonic() - started < 30
    assert missing.stderr.startswith("baton call: the server asks") and len(missing.stderr.splitlines()) == 1
    assert "there is no terminal to answer at: pass --answer step2=JSON" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_an_answer_not_json_or_used_by_no_question_is_named(serve: Any) -> None:
    """`--answer` text that is not JSON is a usage error saying so; a key no question used, a warning (P125)."""
    url = serve(EVERYTHING).url
    flow = "test_input_required_result_multi_round"
    broken = baton("call", url, flow, "--answer", "step1={name: Al}")
    assert broken.returncode == 2, broken.stderr
    assert "baton call: --answer step1: '{name: Al}' is not JSON (" in broken.stderr
    assert "must be an object" not in broken.stderr and "Traceback" not in broken.stderr
    typo = ("--answer", 'step1={"name":"Al"}', "--answer", 'step2={"color":"red"}', "--answer", "stepp3=decline")
    done = baton("call", url, flow, *typo)
    assert done.returncode == 0 and done.stdout.strip() == "Al likes red", done.stderr
    assert done.stderr.splitlines() == [
        "baton call: warning: no question used the answer given for 'stepp3' (it asked 'step1', 'step2'); "
        "the call ran without it: check the key"
    ]
    # the typo that leaves a question unanswered is named in the error
    missing = baton("call", url, flow, "--answer", 'step1={"name":"Al"}', "--answer", 'stepp2={"color":"red"}')
    assert missing.returncode == 2 and missing.stderr.rstrip().endswith("; the answers given are for 'stepp2'")


def test_timeout_and_a_wrong_path(serve: Any) -> None:
    server = serve(EVERYTHING)
    helped = baton("call", "--help")
    assert "--timeout SECONDS" in helped.stdout and "--answer KEY=JSON" in helped.stdout
    bad = baton("tools", "--timeout", "0", server.url)
    assert bad.returncode == 2 and "positive number of seconds" in bad.stderr
    assert baton("tools", "--timeout", "30", server.url).returncode == 0
    # a long wait shows it waits: the server's progress, on stderr
    shown = baton("call", "--timeout", "30", server.url, "test_tool_with_progress")
    assert shown.returncode == 0 and "... 50/100 step 50\n" in shown.stderr, shown.stderr
    wrong = server.url.replace("/mcp", "/wrong")
    done = baton("tools", wrong)
    assert done.returncode == 1
    assert done.stderr.strip() == (
        f"baton tools: {wrong}: no MCP endpoint at this address (HTTP 404); the server says: "
        "'Not found: the MCP endpoint is /mcp'"
    )
    refused = baton("tools", "http://127.0.0.1:1/mcp")  # nothing listens on port 1: cannot reach, and why
    assert refused.returncode == 1
    assert refused.stderr.startswith("baton tools: cannot reach the server: cannot connect to http://127.0.0.1:1")


@pytest.mark.process
def test_ctrl_c_while_waiting_on_a_silent_stdio_server_exits_130_without_a_traceback(tmp_path: Path) -> None:
    started = tmp_path / "started"
    silent = f"import pathlib, time; pathlib.Path({str(started)!r}).touch(); time.sleep(120)"
    proc = processes.popen(
        [BATON, "tools", "--", sys.executable, "-c", silent],
        cwd=ROOT,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Ctrl-C once the command waits on its server: on a loaded machine a fixed pause could end while `baton`
    # itself is still starting, before it handles SIGINT.
    deadline = time.monotonic() + 60
    while not started.exists() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err


SLOW = '''
import asyncio
import os
from pathlib import Path

from baton import Server

server = Server("slow", "1.0.0")
MARK = Path(os.environ["SLOW_MARK"])


@server.tool()
async def slow() -> str:
    """Takes a minute."""
    MARK.write_text("started\\n")
    try:
        await asyncio.sleep(60)
    except asyncio.CancelledError:
        MARK.write_text("started\\ncancelled\\n")
        raise
    return "done"
'''


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_ctrl_c_during_a_call_cancels_it_on_the_wire(serve: Any, tmp_path: Path, transport: str) -> None:
    """Ctrl-C outside a question: exit 130, no traceback, and the server's tool is cancelled (issue 24)."""
    (tmp_path / "slow.py").write_text(SLOW)
    mark = tmp_path / "mark"
    env = {**os.environ, "SLOW_MARK": str(mark)}
    if transport == "http":
        words = [serve(str(tmp_path / "slow.py"), env=env).url, "slow"]
    else:
        words = ["slow", "--", BATON, "serve", str(tmp_path / "slow.py"), "--stdio"]
    proc = processes.popen(
        [BATON, "call", *words],
        cwd=ROOT,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 30
    while not mark.exists():
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err and out == ""
    while "cancelled" not in mark.read_text():
        assert time.monotonic() < deadline, "the server's tool was never cancelled"
        time.sleep(0.05)
