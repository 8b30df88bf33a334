"""Shared pytest configuration: markers, an isolated data directory, and real servers on loopback."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).resolve().parent.parent
BATON = str(Path(sys.executable).with_name("baton"))
SERVERS = Path(__file__).resolve().parent / "servers"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "conformance: runs the official MCP conformance suite (node via tools/conformance.py)"
    )


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own data directory, so no key file is shared by accident."""
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path_factory.mktemp("baton-data")))
    monkeypatch.delenv("BATON_STATE_KEYS", raising=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}:\n{log.read_text()}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"server did not listen on {port} within {timeout} s:\n{log.read_text()}")


class RunningServer:
    """A `baton serve` subprocess on a loopback port."""

    def __init__(self, proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
        self.proc = proc
        self.port = port
        self.log = log
        self.url = f"http://127.0.0.1:{port}/mcp"

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Start `baton serve TARGET --http 127.0.0.1:PORT` (stopped after the test)."""
    started: list[RunningServer] = []

    def start(target: str, *args: str, env: dict[str, str] | None = None) -> RunningServer:
        port = free_port()
        log = tmp_path / f"server-{port}.log"
        with log.open("wb") as fh:
            proc = subprocess.Popen(
                [BATON, "serve", target, "--http", f"127.0.0.1:{port}", *args],
                cwd=ROOT,
                stdout=fh,
                stderr=subprocess.STDOUT,
                env={**os.environ, **(env or {})},
            )
        server = RunningServer(proc, port, log)
        started.append(server)
        wait_for_port(port, proc, log)
        return server

    yield start
    for server in started:
        server.stop()


INSTALL_HINT = "install it with `apt-get install -y redis-server` (Debian/Ubuntu) so that it is on PATH"


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
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        log = self.workdir / f"redis-{self.port}.log"
        aof = ["--appendonly", "yes", "--appendfsync", "always"] if self.persistent else ["--appendonly", "no"]
        args = ["--port", str(self.port), "--bind", "127.0.0.1", "--save", "", *aof]
        with log.open("ab") as fh:
            self.proc = subprocess.Popen(
                [self.binary, *args, "--dir", str(self.workdir)], stdout=fh, stderr=subprocess.STDOUT
            )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"redis-server exited with {self.proc.returncode}:\n{log.read_text()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as s:
                    s.sendall(b"PING\r\n")
                    if s.recv(64).startswith(b"+PONG"):
                        return
            except OSError:
                pass
            time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"redis-server did not answer PING on port {self.port}:\n{log.read_text()}")

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.proc = None

    def keys(self, prefix: str) -> list[bytes]:
        """The keys under `prefix`, read with a client of its own (not the ledger's)."""
        with redis.Redis(port=self.port) as client:
            return list(client.keys(prefix + "*"))
