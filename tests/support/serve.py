"""`baton serve TARGET --http 127.0.0.1:PORT` as a subprocess, stopped by `RunningServer.stop()`; `serve_once`
runs `baton serve` to its end (a stdio server until its input ends, a server that refuses to start)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from support import processes
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
        env=server_environment(log, env),
        ready=PortOpen(port),
        timeout=timeout,
        name=f"baton serve {target}",
    )
    return RunningServer(process, port)


def server_environment(log: Path, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """This process's environment with `env` over it, and a data directory: the test's own (conftest sets one per
    test), else the folder of the server's log. A module fixture starts before conftest sets the test's, and a
    server without one would keep its keys and ledger under the home directory (~/.local/share/baton)."""
    environment = {**os.environ, **(env or {})}
    environment.setdefault("BATON_DATA_DIR", str(log.parent))
    return environment


def start_for_module(
    tmp_path_factory: Any, target: str, *args: str, env: Mapping[str, str] | None = None
) -> RunningServer:
    """`start_server(target)` for a module-scoped fixture (one server for tests that keep nothing in it), its log
    and data directory (`server_environment`) in a folder of its own."""
    log = tmp_path_factory.mktemp(Path(target.partition(":")[0]).stem) / "server.log"
    return start_server(target, *args, log=log, env=env)


def start_with_pages(target: str, log: Path) -> RunningServer:
    """`start_server(target)` whose public URL is its own loopback address (development: the page rung's pages
    and the development login), with its stores and ledger in memory."""
    port = free_port()
    env = {"BATON_PUBLIC_URL": f"http://127.0.0.1:{port}", "BATON_LEDGER": "memory:", "BATON_CONNECT_STORE": "memory:"}
    return start_server(target, port=port, log=log, env=env)


def serve_once(
    cwd: Path, target: str, *args: str, messages: Sequence[dict[str, Any]] = (), env: Mapping[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run `baton serve TARGET *ARGS` in `cwd` with `messages` as its stdin lines (then EOF), `env` over this
    process's environment, until it exits; its output as text."""
    return processes.run(
        [BATON, "serve", target, *args],
        cwd=cwd,
        input="".join(json.dumps(m) + "\n" for m in messages),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )
