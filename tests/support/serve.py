"""`baton serve TARGET --http 127.0.0.1:PORT` as a subprocess, stopped by `RunningServer.stop()`."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping
from pathlib import Path

from support.paths import BATON, ROOT
from support.processes import STARTUP_TIMEOUT_S, PortOpen, Process, free_port, start


class RunningServer:
    """A `baton serve` subprocess on a loopback port; its combined output is in `log`. Leaving `with` stops it."""

    def __init__(self, process: Process, port: int) -> None:
        assert process.log is not None
        self.process = process
        self.port = port
        self.log: Path = process.log
        self.url = f"http://127.0.0.1:{port}/mcp"

    @property
    def proc(self) -> subprocess.Popen[bytes]:
        return self.process.proc

    def stop(self) -> None:
        self.process.stop()

    def __enter__(self) -> RunningServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def start_server(
    target: str,
    *args: str,
    log: Path,
    port: int | None = None,
    env: Mapping[str, str] | None = None,
    timeout: float = STARTUP_TIMEOUT_S,
) -> RunningServer:
    """Start `baton serve TARGET --http 127.0.0.1:PORT *ARGS` in the project root, with `env` over this
    process's environment, and return once the port accepts (a free port unless `port` is given)."""
    port = port or free_port()
    process = start(
        [BATON, "serve", target, "--http", f"127.0.0.1:{port}", *args],
        log=log,
        cwd=ROOT,
        env={**os.environ, **(env or {})},
        ready=PortOpen(port),
        timeout=timeout,
        name=f"baton serve {target}",
    )
    return RunningServer(process, port)
