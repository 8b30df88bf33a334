"""`baton dev` for the tests: started as a real subprocess on a free port, its printed address read back."""

from __future__ import annotations

import os
import re
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from support import processes
from support.paths import ROOT

BATON = str(Path(os.environ.get("VIRTUAL_ENV", ROOT / ".venv")) / "bin" / "baton")
ADDRESS = re.compile(r"^baton dev: (http://127\.0\.0\.1:(\d+)/#token=(\S+))$")


@dataclass
class DevRun:
    proc: subprocess.Popen[bytes]
    address: str
    port: int
    token: str

    @property
    def origin(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def interrupt(self, timeout: float = 20.0) -> tuple[int, str]:
        """Ctrl-C: SIGINT, then its exit status and everything it wrote on stderr."""
        self.proc.send_signal(signal.SIGINT)
        try:
            _, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            _, err = self.proc.communicate()
        return self.proc.returncode, err.decode(errors="replace")


@contextmanager
def baton_dev(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None, timeout: float = 30.0
) -> Iterator[DevRun]:
    """`baton dev ARGS --no-browser --port 0`, stopped (SIGINT, then SIGKILL) when the block ends."""
    proc = processes.popen(
        [BATON, "dev", "--no-browser", "--port", "0", *args],
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
        start_new_session=True,  # its own process group, as a terminal gives it: Ctrl-C can reach the group
    )
    try:
        line = _first_line(proc, timeout)
        match = ADDRESS.match(line)
        if match is None:
            proc.kill()
            _, err = proc.communicate()
            raise AssertionError(f"baton dev printed {line!r}, not its address; stderr: {err.decode(errors='replace')}")
        yield DevRun(proc, match.group(1), int(match.group(2)), match.group(3))
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for pipe in (proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def _first_line(proc: subprocess.Popen[bytes], timeout: float) -> str:
    assert proc.stdout is not None
    deadline = time.monotonic() + timeout
    buffered = b""
    while b"\n" not in buffered:
        left = deadline - time.monotonic()
        if left <= 0 or (proc.poll() is not None and not select.select([proc.stdout], [], [], 0)[0]):
            break
        ready, _, _ = select.select([proc.stdout], [], [], min(left, 0.2))
        if ready:
            chunk = os.read(proc.stdout.fileno(), 4096)
            if not chunk:
                break
            buffered += chunk
    return buffered.split(b"\n", 1)[0].decode(errors="replace")
