"""`baton serve --stdio` ends cleanly on SIGINT, SIGTERM and end of input (protocol.md P98): a real
subprocess, real signals, a request in flight; exit 130 after SIGINT, 0 otherwise, never a traceback."""

from __future__ import annotations

import signal
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.paths import SERVERS
from support.stdio import StdioPeer


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[StdioPeer]:
    p = StdioPeer(str(SERVERS / "guarded.py"), {"BATON_TEST_RUNLOG": str(tmp_path / "runs.log")})
    with p.process:
        yield p


def stderr_of(peer: StdioPeer) -> str:
    assert peer.proc.stderr is not None
    return peer.proc.stderr.read().decode(errors="replace")


def serving_with_a_slow_call(peer: StdioPeer, runlog: Path) -> None:
    """The server answers, then has a 60-second tool call in flight."""
    peer.request(1, "tools/list")
    assert peer.read(timeout=30)["id"] == 1
    peer.request(2, "tools/call", {"name": "slow", "arguments": {"seconds": 60}})
    deadline = time.monotonic() + 10
    while "slow:start" not in (runlog.read_text() if runlog.exists() else ""):
        assert time.monotonic() < deadline, "the slow tool never started"
        time.sleep(0.05)


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_ends_the_server_at_once_without_a_traceback(
    peer: StdioPeer, tmp_path: Path, signum: int, status: int
) -> None:
    serving_with_a_slow_call(peer, tmp_path / "runs.log")
    started = time.monotonic()
    peer.proc.send_signal(signum)
    assert peer.proc.wait(10) == status
    assert time.monotonic() - started < 5  # the call in flight was cancelled, not awaited
    errors = stderr_of(peer)
    assert "Traceback" not in errors and "KeyboardInterrupt" not in errors, errors
    assert "slow:end" not in (tmp_path / "runs.log").read_text()


def test_end_of_input_ends_the_server_with_status_0(peer: StdioPeer) -> None:
    peer.request(1, "tools/list")
    assert peer.read(timeout=30)["id"] == 1
    assert peer.close() == 0
    errors = stderr_of(peer)
    assert "Traceback" not in errors, errors


def test_sigint_while_idle_on_a_silent_client(peer: StdioPeer) -> None:
    peer.request(1, "server/discover")
    assert peer.read(timeout=30)["id"] == 1
    peer.proc.send_signal(signal.SIGINT)
    assert peer.proc.wait(10) == 130
    assert "Traceback" not in stderr_of(peer)
