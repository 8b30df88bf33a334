"""Start and stop the processes the tests run (servers, peers, workers), everything on 127.0.0.1.

`start(argv, ready=PortOpen(port))` returns a `Process` once its readiness check passes; if the process
exits first, or is not ready within `timeout`, it is stopped and `StartupError` carries its output.
`Process.stop()` always ends it: SIGTERM, a bounded wait, SIGKILL, reap, close its pipes. It is
idempotent, and it is what leaving `with start(...) as process:` calls, so a fixture that yields inside
that block stops the process whatever the test did.

Every process the tests start starts here: `run` (a command to its end, as `subprocess.run`) and `popen` (a
`subprocess.Popen` the test drives itself) are the two doors for what `start` does not fit, so that one module
says how the suite starts processes (tests/project/test_tests_layout.py counts the others: none).
"""

from __future__ import annotations

import contextlib
import os
import random
import re
import select
import socket
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

from .cpu_ledger import note_started

LOOPBACK = "127.0.0.1"
STARTUP_TIMEOUT_S = 60.0  # generous: the suite runs on several workers, on machines busy with more
STOP_GRACE_S = 10.0  # SIGTERM to SIGKILL
REAP_S = 5.0  # SIGKILL to giving up on the exit status
OUTPUT_TAIL = 6000  # characters of output in a failure message
_POLL_S = 0.05
_DRAIN_S = 1.0

Check = Callable[["Process"], bool]
"""A readiness check: called every 50 ms with the starting process until it returns True."""


# Under pytest-xdist each worker (PYTEST_XDIST_WORKER=gw0, gw1, ...) takes its ports from a slice of its own
# below Linux's ephemeral range (32768-60999): a port it picked cannot be picked by another worker, nor taken
# as the source port of some connection, before its server binds it. Without xdist, the system picks.
_WORKER_PORTS = range(20000, 32768)
_WORKER_SLICES = 16
_next_port: list[int] = []  # this worker's next candidate (a list: set on first use)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now (in this xdist worker's slice, under xdist)."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not worker.startswith("gw") or not worker[2:].isdigit():
        return _bound_port(0)
    size = len(_WORKER_PORTS) // _WORKER_SLICES
    first = _WORKER_PORTS.start + int(worker[2:]) % _WORKER_SLICES * size
    if not _next_port:
        _next_port.append(first + random.randrange(size))  # apart from another suite's worker of the same number
    for _ in range(size):
        port = _next_port[0]
        _next_port[0] = first + (port + 1 - first) % size
        with contextlib.suppress(OSError):
            return _bound_port(port)
    raise RuntimeError(f"no free port in {first}-{first + size - 1} for xdist worker {worker}")


def _bound_port(port: int) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((LOOPBACK, port))
        return int(sock.getsockname()[1])


class StartupError(RuntimeError):
    """A process exited before it was ready, or was not ready in time; the message carries its output."""


@dataclass(frozen=True)
class PortOpen:
    """Ready once a TCP connection to 127.0.0.1:`port` is accepted."""

    port: int

    def __call__(self, process: Process) -> bool:
        try:
            with socket.create_connection((LOOPBACK, self.port), timeout=0.5):
                return True
        except OSError:
            return False

    def __str__(self) -> str:
        return f"no connection accepted on {LOOPBACK}:{self.port}"


@dataclass(frozen=True)
class OutputLine:
    """Ready once a line of the process's output contains `text` (a str) or matches it (a compiled regex).

    The output is the log file when the process writes to one, else its stdout pipe, read a byte at a
    time up to the matching line so that the test can go on reading what follows.
    """

    text: str | re.Pattern[str]

    def __call__(self, process: Process) -> bool:
        if process.log is not None:
            try:
                lines = process.log.read_text(errors="replace").splitlines()
            except OSError:
                return False
            return any(self._matches(line) for line in lines)
        while (line := process._stdout_line()) is not None:
            if self._matches(line):
                return True
        return False

    def _matches(self, line: str) -> bool:
        return self.text in line if isinstance(self.text, str) else self.text.search(line) is not None

    def __str__(self) -> str:
        shown = self.text if isinstance(self.text, str) else self.text.pattern
        return f"no output line with {shown!r}"


class Process:
    """A started process: `proc` (the Popen), `log` (its combined output, if it goes to a file), `stop()`."""

    def __init__(self, proc: subprocess.Popen[bytes], name: str, log: Path | None) -> None:
        self.proc = proc
        self.name = name
        self.log = log
        self._read: dict[str, bytes] = {"stdout": b"", "stderr": b""}  # pipe output read here
        self._partial = b""  # stdout read by OutputLine after its last complete line
        self._stdout_eof = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def running(self) -> bool:
        return self.proc.poll() is None

    def output(self, limit: int = OUTPUT_TAIL) -> str:
        """The last `limit` characters the process wrote: its log file, or what was read from its pipes."""
        if self.log is not None:
            try:
                text = self.log.read_text(errors="replace")
            except OSError as exc:
                return f"(cannot read {self.log}: {exc})"
        else:
            text = "".join(
                f"--- {name} ---\n{data.decode(errors='replace')}\n" for name, data in self._read.items() if data
            )
        return text[-limit:] if text else "(no output)"

    def wait_ready(self, check: Check, timeout: float = STARTUP_TIMEOUT_S) -> None:
        """Return once `check` passes; else stop the process and raise StartupError with its output."""
        deadline = time.monotonic() + timeout
        try:
            while not check(self):
                if self.proc.poll() is not None:
                    why = f"exited with {self.proc.returncode} before it was ready"
                    break
                if time.monotonic() >= deadline:
                    why = f"was not ready within {timeout:g} s ({check})"
                    break
                time.sleep(_POLL_S)
            else:
                return
        except BaseException:
            self.stop()
            raise
        self.stop()
        raise StartupError(f"{self.name} (pid {self.pid}) {why}; its output:\n{self.output()}")

    def stop(self, grace: float = STOP_GRACE_S) -> int | None:
        """SIGTERM, up to `grace` seconds, SIGKILL (at once when `grace` is 0); reap; close the pipes.

        Returns the exit status (None only if even SIGKILL did not end it within REAP_S). Idempotent.
        """
        proc = self.proc
        if proc.poll() is None and grace > 0:
            proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(grace)
        if proc.poll() is None:
            proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(REAP_S)
        self._close_pipes()
        return proc.returncode

    def kill(self) -> None:
        """SIGKILL at once, as in a crash (no graceful shutdown), and reap."""
        self.stop(grace=0)

    def __enter__(self) -> Process:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()

    def _stdout_line(self) -> str | None:
        """The next complete line already written to the stdout pipe, or None: never blocks, never reads past it."""
        stream = self.proc.stdout
        if stream is None:
            raise ValueError(f"{self.name}: OutputLine needs a log file or stdout=subprocess.PIPE")
        fd = stream.fileno()
        while not self._stdout_eof and select.select([fd], [], [], 0)[0]:
            byte = os.read(fd, 1)
            if not byte:
                self._stdout_eof = True
                break
            self._read["stdout"] += byte
            if byte == b"\n":
                line, self._partial = self._partial, b""
                return line.decode(errors="replace")
            self._partial += byte
        return None

    def _close_pipes(self) -> None:
        """Keep what is left in the output pipes (for `output()`), then close every pipe."""
        for name in ("stdout", "stderr"):
            stream = getattr(self.proc, name)
            if stream is None or stream.closed:
                continue
            deadline = time.monotonic() + _DRAIN_S
            try:
                fd = stream.fileno()
                while time.monotonic() < deadline and select.select([fd], [], [], 0.05)[0]:
                    chunk = os.read(fd, 65536)
                    if not chunk:
                        break
                    self._read[name] += chunk
            except (OSError, ValueError):
                pass
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError, ValueError):
                    stream.close()


def spawn(
    argv: Sequence[str | os.PathLike[str]],
    *,
    log: Path | None = None,
    append: bool = False,
    name: str | None = None,
    cwd: str | os.PathLike[str] | None = None,
    env: Mapping[str, str] | None = None,
    **popen: Any,
) -> Process:
    """Start `argv` without waiting. With `log`, stdout and stderr both go to that file (appended to with
    `append`); stdin is /dev/null unless `popen` says otherwise. `env` is the whole environment (None:
    this process's). Call `wait_ready` on the result, or use `start`."""
    popen.setdefault("stdin", subprocess.DEVNULL)
    note_started(argv)
    if log is not None:
        with log.open("ab" if append else "wb") as fh:
            proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=fh, stderr=subprocess.STDOUT, **popen)
    else:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, **popen)
    return Process(proc, name or Path(os.fspath(argv[0])).name, log)


def start(
    argv: Sequence[str | os.PathLike[str]],
    *,
    ready: Check | None = None,
    timeout: float = STARTUP_TIMEOUT_S,
    **options: Any,
) -> Process:
    """`spawn(argv, **options)`, then wait until `ready` passes (see `Process.wait_ready`)."""
    process = spawn(argv, **options)
    if ready is not None:
        process.wait_ready(ready, timeout)
    return process


def run(argv: Any, **options: Any) -> subprocess.CompletedProcess[Any]:
    """Run `argv` to its end: `subprocess.run(argv, **options)`, the one place the tests call it."""
    note_started(argv)
    return subprocess.run(argv, **options)  # noqa: PLW1510 (check= is the caller's, as with subprocess.run)


def popen(argv: Any, **options: Any) -> subprocess.Popen[Any]:
    """`subprocess.Popen(argv, **options)`, for a test that drives the process itself (stdin, signals, a pty)."""
    note_started(argv)
    return subprocess.Popen(argv, **options)
