"""`baton serve --reload`: an edited tool is served without a restart by hand, on the same port; a broken
edit is one message (no traceback) and the next good one serves again. And where it does not apply."""

from __future__ import annotations

import asyncio
import http.client
import time
from pathlib import Path

import orjson
import pytest
from support import processes
from support.paths import BATON
from support.processes import PortOpen, free_port, start

from baton.client import Client

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

SOURCE = """
from baton import Server

server = Server("reloading")


@server.tool()
def version() -> str:
    return "{text}"
"""


def called(url: str) -> str:
    async def call() -> str:
        async with Client(url) as client:
            return (await client.call_tool("version")).text

    return asyncio.run(call())


def until(url: str, expected: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    seen = None
    while time.monotonic() < deadline:
        try:
            seen = called(url)
        except Exception as exc:  # restarting: not listening for a moment
            seen = repr(exc)
        if seen == expected:
            return
        time.sleep(0.3)
    raise AssertionError(f"still {seen!r}, not {expected!r}")


def test_an_edit_is_served_without_a_restart_by_hand(tmp_path: Path) -> None:
    source = tmp_path / "server.py"
    source.write_text(SOURCE.format(text="first"))
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    argv = [BATON, "serve", str(source), "--http", f"127.0.0.1:{port}", "--reload"]
    with start(argv, cwd=tmp_path, ready=PortOpen(port), log=tmp_path / "serve.log", name="reload") as process:
        assert called(url) == "first"
        time.sleep(1.5)  # uvicorn starts watching once the first process is up: a person edits later than that
        source.write_text(SOURCE.format(text="second"))
        until(url, "second")
        source.write_text("this is not Python (\n")
        deadline = time.monotonic() + 30
        while "cannot be loaded" not in process.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        source.write_text(SOURCE.format(text="third"))
        until(url, "third")
        output = process.output()
    assert f"restarted when a file under {tmp_path} changes" in output
    assert "server.py cannot be loaded; the error is in its code" in output
    assert "Traceback" not in output.split("the error is in its code")[0]
    assert "baton/" not in output.split("the error is in its code", 1)[1].split("WatchFiles", 1)[0]


def test_reload_is_for_one_http_process(tmp_path: Path) -> None:
    source = tmp_path / "server.py"
    source.write_text(SOURCE.format(text="x"))
    for extra, said in (
        (["--stdio"], "--reload is for HTTP: over stdio the host starts and owns the server process"),
        (["--http", f"127.0.0.1:{free_port()}", "--workers", "2"], "cannot be used with --workers"),
    ):
        done = processes.run(
            [BATON, "serve", str(source), "--reload", *extra], capture_output=True, text=True, timeout=30, check=False
        )
        assert done.returncode == 2 and said in done.stderr, done.stderr
    helped = processes.run([BATON, "serve", "--help"], capture_output=True, text=True, timeout=30, check=False)
    assert "--reload" in helped.stdout and "host owns the process" in helped.stdout.replace("\n", " ")


def test_a_file_that_does_not_load_is_answered_at_once(tmp_path: Path) -> None:
    """While the edited file does not load, every request gets 503 and where to look, not a wait."""
    source = tmp_path / "server.py"
    source.write_text(SOURCE.format(text="first"))
    port = free_port()
    argv = [BATON, "serve", str(source), "--http", f"127.0.0.1:{port}", "--reload"]
    with start(argv, cwd=tmp_path, ready=PortOpen(port), log=tmp_path / "serve.log", name="reload") as process:
        time.sleep(1.5)  # uvicorn starts watching once the first process is up: a person edits later than that
        source.write_text("this is not Python (\n")
        deadline = time.monotonic() + 30
        while "cannot be loaded" not in process.output() and time.monotonic() < deadline:
            time.sleep(0.2)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("POST", "/mcp", b"{}", {"Content-Type": "application/json"})
            response = conn.getresponse()
            status, body = response.status, orjson.loads(response.read())
        finally:
            conn.close()
    assert status == 503
    assert body["error"]["message"] == "the server file does not load: see the terminal"
