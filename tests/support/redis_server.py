"""A real redis-server on 127.0.0.1 for the ledger and connect-store tests (they fail, never skip, without it)."""

from __future__ import annotations

import shutil
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest
import redis

from support.processes import LOOPBACK, Process, free_port, start

INSTALL_HINT = "install it with `apt-get install -y redis-server` (Debian/Ubuntu) so that it is on PATH"
STARTUP_TIMEOUT_S = 15.0


@dataclass(frozen=True)
class AnswersPing:
    """Ready once redis-server on `port` replies +PONG to PING (accepting is not enough: it may be loading)."""

    port: int

    def __call__(self, process: Process) -> bool:
        try:
            with socket.create_connection((LOOPBACK, self.port), timeout=0.5) as s:
                s.sendall(b"PING\r\n")
                return s.recv(64).startswith(b"+PONG")
        except OSError:
            return False

    def __str__(self) -> str:
        return f"no +PONG on {LOOPBACK}:{self.port}"


class RedisServer:
    """A redis-server on 127.0.0.1, stoppable and restartable on the same port.

    Without persistence by default; `persistent=True` turns on the append-only file, fsynced on every
    write (what docs/deploy.md advises), so a restart keeps every acknowledged claim.
    """

    def __init__(self, workdir: Path, port: int | None = None, *, persistent: bool = False) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail(f"redis-server is not on PATH, and the Redis ledger tests need a real one: {INSTALL_HINT}")
        self.binary = binary
        self.workdir = workdir
        self.port = port or free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.persistent = persistent
        self.process: Process | None = None

    @property
    def proc(self) -> subprocess.Popen[bytes] | None:
        return self.process.proc if self.process is not None else None

    def start(self) -> None:
        aof = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        args = ["--port", str(self.port), "--bind", LOOPBACK, "--save", "", *aof]
        self.process = start(
            [self.binary, *args, "--dir", str(self.workdir)],
            log=self.workdir / f"redis-{self.port}.log",
            append=True,
            ready=AnswersPing(self.port),
            timeout=STARTUP_TIMEOUT_S,
            name="redis-server",
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
        self.process = None

    def keys(self, prefix: str) -> list[bytes]:
        """The keys under `prefix`, read with a client of its own (not the ledger's)."""
        with redis.Redis(port=self.port) as client:
            return list(client.keys(prefix + "*"))
