"""Interop with the two reference Python libraries, each in its own process and its own venv.

Baton's client completes an MRTR form flow against an `mcp==2.3.0` server and a `fastmcp==4.1.6`
server (peers/*_server.py), and both libraries' clients (peers/*_client.py) complete the
same flow against Baton's server (`examples/everything.py`, tool `perform`). The peer venvs live under
`.cache/interop/` and are created on first use; a failed install fails the test with pip's output.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import processes
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, as_text, ensure_venv, peer_env
from support.processes import PortOpen, Process, free_port, start

from baton.client import Accepted, Answer, Client, Question
from baton.forms import BooleanField

sys.path.insert(0, str(ROOT / "bench"))
from otlp_sink import OtlpSink
from support.markers import needs

PEERS = ROOT / "peers"
CLIENT_TIMEOUT_S = 60.0

# Installing a peer venv on first use can take a minute or two; the flows themselves take well under a second.
pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)


# -- peer venvs (tests/support/peer_venvs.py) ---------------------------------------------------------


@pytest.fixture(scope="session")
@needs("process")
def mcp_python() -> Path:
    return ensure_venv("mcp")


@pytest.fixture(scope="session")
@needs("process")
def fastmcp_python() -> Path:
    return ensure_venv("fastmcp")


# -- servers in their own processes -------------------------------------------------------------------


@dataclass
class Peer:
    """A server subprocess on a loopback port, with its combined output in `log`; leaving `with` stops it."""

    process: Process
    url: str
    log: Path

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def __enter__(self) -> Peer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.process.stop()


def start_peer(command: list[str], port: int, log: Path, env: dict[str, str]) -> Peer:
    process = start(command, cwd=ROOT, env=env, log=log, ready=PortOpen(port), timeout=60.0)
    return Peer(process, f"http://127.0.0.1:{port}/mcp", log)


def peer_server(python: Path, script: str, logs: Path) -> Iterator[Peer]:
    port = free_port()
    command = [str(python), str(PEERS / script), "--port", str(port)]
    with start_peer(command, port, logs / f"{script}.log", peer_env()) as peer:
        yield peer


@pytest.fixture(scope="session")
@needs("process")
def mcp_server(mcp_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    yield from peer_server(mcp_python, "mcp_server.py", tmp_path_factory.mktemp("interop-mcp"))


@pytest.fixture(scope="session")
@needs("process")
def fastmcp_server(fastmcp_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    yield from peer_server(fastmcp_python, "fastmcp_server.py", tmp_path_factory.mktemp("interop-fastmcp"))


@pytest.fixture(scope="session", params=["off", "traced"])
@needs("process")
def baton_server(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Peer]:
    """`baton serve examples/everything.py` with a data directory of its own; once with telemetry off, once traced
    (every request sampled, exported to a real OTLP/HTTP receiver): the peers' clients must not tell."""
    logs = tmp_path_factory.mktemp("interop-baton")
    env = {k: v for k, v in os.environ.items() if k != "BATON_STATE_KEYS" and not k.startswith("OTEL_")}
    env["BATON_DATA_DIR"] = str(tmp_path_factory.mktemp("interop-baton-data"))
    port = free_port()
    command = [BATON, "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"]
    with contextlib.ExitStack() as stack:
        sink = stack.enter_context(OtlpSink(keep=False)) if request.param == "traced" else None
        if sink is not None:
            env.update(OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint, OTEL_BSP_SCHEDULE_DELAY="50")
        with start_peer(command, port, logs / "baton.log", env) as peer:
            yield peer
        if sink is not None:  # the server flushed its spans as it stopped
            assert sink.spans_received > 0, "traced, yet no span reached the receiver: tracing was not on"


# -- Baton's client against the peers' servers --------------------------------------------------------


def baton_flow(url: str) -> tuple[str, list[Question]]:
    """Call `perform` with Baton's client, accepting every form; the result text and the questions seen."""
    seen: list[Question] = []

    async def confirm(question: Question) -> Answer:
        seen.append(question)
        return Accepted({"confirm": True})

    async def run() -> str:
        async with Client(url, on_form=confirm, deadline_s=CLIENT_TIMEOUT_S) as client:
            result = await client.call_tool("perform", {"action": "interop"})
        assert not result.is_error, result
        return result.text

    return asyncio.run(run()), seen


def check_baton_client(server: Peer) -> None:
    try:
        text, seen = baton_flow(server.url)
    except BaseException as exc:
        raise AssertionError(f"{exc!r}\n--- peer server output ---\n{server.output()}") from exc
    assert text == "done: interop", server.output()
    assert len(seen) == 1, seen
    (question,) = seen
    assert question.mode == "form"
    assert question.form is not None
    fields = {f.name: f for f in question.form.fields}
    assert isinstance(fields.get("confirm"), BooleanField), question.form.fields


def test_baton_client_against_mcp_server(mcp_server: Peer) -> None:
    check_baton_client(mcp_server)


def test_baton_client_against_fastmcp_server(fastmcp_server: Peer) -> None:
    check_baton_client(fastmcp_server)


# -- the peers' clients against Baton's server --------------------------------------------------------


def check_peer_client(python: Path, script: str, server: Peer) -> None:
    command = [str(python), str(PEERS / script), server.url]
    try:
        done = processes.run(
            command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, env=peer_env(), check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"{script} did not finish in {CLIENT_TIMEOUT_S:.0f} s:\n{as_text(exc.stderr)}\n{server.output()}")
    report = (
        f"{script} exited with {done.returncode}\n--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"
        f"\n--- Baton server output ---\n{server.output()}"
    )
    assert done.returncode == 0, report
    assert "done: interop" in done.stdout.splitlines(), report


def test_mcp_client_against_baton_server(mcp_python: Path, baton_server: Peer) -> None:
    check_peer_client(mcp_python, "mcp_client.py", baton_server)


def test_fastmcp_client_against_baton_server(fastmcp_python: Path, baton_server: Peer) -> None:
    check_peer_client(fastmcp_python, "fastmcp_client.py", baton_server)
