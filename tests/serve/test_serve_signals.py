"""`baton serve` ends cleanly on SIGINT, SIGTERM and (on stdio) end of input (protocol.md P98, P115): a real
subprocess, real signals, a request in flight; exit 130 after SIGINT, 0 otherwise, never a traceback.

A host stops a stdio server as MCP says: it closes stdin, waits, sends SIGTERM, waits, sends SIGKILL. So the
tests here also close stdin first: a listen stream then ends at once, a running call gets a short grace,
and a signal after EOF still ends the server at once; through a launcher that does not `exec`, closing the
launcher's stdin ends Baton, its child, too."""

from __future__ import annotations

import os
import signal
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import processes
from support.paths import SERVERS
from support.serve import start_server
from support.stdio import StdioPeer
from wire import post, request

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

GRACE_LINE = "still running after"  # what the server logs when the EOF grace ran out (P115)


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


def listening(peer: StdioPeer) -> None:
    """The server answers, then has a `subscriptions/listen` stream open (acknowledged)."""
    peer.request(1, "server/discover")
    assert peer.read(timeout=30)["id"] == 1
    peer.request("listen", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
    assert peer.read()["method"] == "notifications/subscriptions/acknowledged"


def test_end_of_input_ends_a_listen_stream_at_once(peer: StdioPeer) -> None:
    listening(peer)
    assert peer.close() == 0  # within close()'s 10 s; the stream alone used to hold the server for ever
    errors = stderr_of(peer)
    assert "Traceback" not in errors and GRACE_LINE not in errors, errors


def test_end_of_input_gives_a_running_call_a_short_grace(peer: StdioPeer, tmp_path: Path) -> None:
    """A 60-second call at EOF is cancelled after the grace (P115), not awaited to its end."""
    serving_with_a_slow_call(peer, tmp_path / "runs.log")
    assert peer.close() == 0
    errors = stderr_of(peer)
    assert "Traceback" not in errors and GRACE_LINE in errors, errors
    assert "slow:end" not in (tmp_path / "runs.log").read_text()


@pytest.mark.parametrize("listen", [False, True], ids=["call", "call-and-listen"])
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_after_end_of_input_ends_the_server_at_once(
    peer: StdioPeer, tmp_path: Path, signum: int, status: int, listen: bool
) -> None:
    """stdin closed, then the signal within the grace: the server ends then, not after the grace (no grace
    line) nor after the call (it used to ignore every signal once stdin had closed)."""
    serving_with_a_slow_call(peer, tmp_path / "runs.log")
    if listen:
        peer.request("listen", "subscriptions/listen", {"notifications": {"toolsListChanged": True}})
        assert peer.read()["method"] == "notifications/subscriptions/acknowledged"
    assert peer.proc.stdin is not None
    peer.proc.stdin.close()
    time.sleep(0.3)  # the server reads the EOF (the signal must come after it, and well within the grace)
    peer.proc.send_signal(signum)
    assert peer.proc.wait(10) == status
    errors = stderr_of(peer)
    assert "Traceback" not in errors and "KeyboardInterrupt" not in errors, errors
    assert GRACE_LINE not in errors, errors
    assert "slow:end" not in (tmp_path / "runs.log").read_text()


def children_of(pid: int) -> list[int]:
    """The pids of the live processes whose parent is `pid`, read from /proc."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue  # gone meanwhile
        if fields[0] != "Z" and int(fields[1]) == pid:
            found.append(int(entry.name))
    return found


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def test_closing_a_launchers_stdin_ends_baton_it_did_not_exec(tmp_path: Path) -> None:
    """`sh launch.sh` runs Baton as its child (no `exec`; the command after it keeps sh from exec-ing it
    implicitly): closing the launcher's stdin, as a host does, ends Baton, a listen stream open, so that
    no orphan is left when the host then kills the launcher."""
    launcher = tmp_path / "launch.sh"
    launcher.write_text('"$@"\necho "baton exited $?" >&2\n')
    peer = StdioPeer(str(SERVERS / "guarded.py"), launcher=["sh", str(launcher)])
    baton: list[int] = []
    with peer.process:
        try:
            listening(peer)
            baton = children_of(peer.proc.pid)
            assert len(baton) == 1, baton
            assert peer.proc.stdin is not None
            peer.proc.stdin.close()
            deadline = time.monotonic() + 10
            while alive(baton[0]) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert not alive(baton[0]), "Baton outlived the stdin its launcher passed on"
            assert peer.proc.wait(10) == 0
            assert "baton exited 0" in stderr_of(peer)
        finally:
            for pid in baton:  # still running after a failure: Baton is this test's to stop
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)


SUPERVISED = {"one process": (), "workers": ("--workers", "2"), "reload": ("--reload",)}


@pytest.mark.parametrize("mode", SUPERVISED)
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_ends_an_http_server_with_the_same_status(tmp_path: Path, signum: int, status: int, mode: str) -> None:
    """Over HTTP uvicorn catches the signal and swallows the interrupt it re-raises: the status must still
    say Ctrl-C (it used to be 0 after SIGINT, and death by signal after SIGTERM), in one process as under
    uvicorn's supervisor of `--workers` and `--reload` (which ended with 0 after Ctrl-C)."""
    with start_server(str(SERVERS / "guarded.py"), *SUPERVISED[mode], log=tmp_path / "server.log") as server:
        assert post(server.url, request("tools/list")).status_code == 200  # serving: the supervisor has the signals
        server.proc.send_signal(signum)
        assert server.proc.wait(15) == status
        errors = server.log.read_text()
        assert "Traceback" not in errors and "KeyboardInterrupt" not in errors, errors


EARLY_SIGNAL = """
import os, signal, sys
import uvicorn
from baton import web
real = uvicorn.Config.__init__
def signalled(self, *args, **kwargs):
    os.kill(os.getpid(), signal.{name})
    real(self, *args, **kwargs)
uvicorn.Config.__init__ = signalled
print("exit", web.run("nowhere:app", "127.0.0.1", 0, graceful_s=1, {options}), flush=True)
"""


@pytest.mark.parametrize("options", ["workers=2", "reload_dirs=['.']"], ids=["workers", "reload"])
@pytest.mark.parametrize(("signum", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_a_signal_before_the_supervisor_has_the_signals_ends_the_start(
    tmp_path: Path, signum: int, status: int, options: str
) -> None:
    """The port is open before uvicorn's supervisor installs its handlers, and whoever sees it open may signal at
    once (CI did): the signal ends the start with the same status, never the process by the signal nor a
    traceback. The signal here comes as uvicorn builds its configuration, deterministically."""
    script = EARLY_SIGNAL.format(name=signal.Signals(signum).name, options=options)
    done = processes.run(
        [sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False
    )
    assert (done.returncode, done.stdout) == (0, f"exit {status}\n"), done.stderr
    assert "Traceback" not in done.stderr, done.stderr
