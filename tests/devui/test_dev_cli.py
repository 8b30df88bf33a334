"""`baton dev` without a browser: who the page admits (Host, Origin, token), its command line, and Ctrl-C.

The page drives a server with the user's credentials, so every refusal of `baton.devui.page_access` is tried
against a real `baton dev` over a real socket; then the command's own errors and its clean stop.
"""

from __future__ import annotations

import asyncio
import http.client
import os
import signal
import socket
import time
from collections.abc import MutableMapping
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import processes
from support.dev import BATON, baton_dev
from support.paths import ROOT

from baton.devui.app import DevApp
from baton.devui.dev_target import DevTarget
from baton.devui.live import DevSession
from baton.devui.page_access import DevGuard

EVERYTHING = "examples/everything.py"


def ask(port: int, method: str, path: str, headers: dict[str, str], body: bytes | None = None) -> tuple[int, bytes]:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        for name, value in headers.items():
            conn.putheader(name, value)
        if body is not None:
            conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        response = conn.getresponse()
        return response.status, response.read() if path != "/api/events" or response.status != 200 else b""
    finally:
        conn.close()


@pytest.mark.process
def test_every_refusal_of_the_guard_against_a_running_page() -> None:
    with baton_dev(EVERYTHING) as dev:
        host = f"127.0.0.1:{dev.port}"
        token = {"X-Baton-Dev-Token": dev.token}
        # the page itself needs no token (it holds none); everything else does
        assert ask(dev.port, "GET", "/", {"Host": host})[0] == 200
        assert ask(dev.port, "GET", "/static/app.js", {"Host": host})[0] == 200
        # DNS rebinding: another name for this address
        for other in ("evil.example", f"evil.example:{dev.port}", f"localhost:{dev.port}", "127.0.0.1"):
            status, body = ask(dev.port, "GET", "/", {"Host": other})
            assert status == 421, other
            assert b"only at http://127.0.0.1:" in body
        assert ask(dev.port, "GET", "/api/exchange?call=c1", {**token, "Host": "evil.example"})[0] == 421
        # another site's script
        for origin in ("http://evil.example", f"http://localhost:{dev.port}", "null"):
            status, body = ask(dev.port, "POST", "/api/refresh", {"Host": host, "Origin": origin, **token}, b"{}")
            assert status == 403, origin
        assert ask(dev.port, "GET", "/", {"Host": host, "Origin": "http://evil.example"})[0] == 403
        # no token, or a wrong one
        for given in ({}, {"X-Baton-Dev-Token": "guess"}, {"X-Baton-Dev-Token": dev.token[:-1]}):
            status, body = ask(dev.port, "GET", "/api/exchange?call=c1", {"Host": host, **given})
            assert status == 401
            assert b"open the address baton dev printed" in body
        status, _ = ask(
            dev.port, "POST", "/api/call", {"Host": host, "Content-Type": "application/json"}, b'{"kind":"tool"}'
        )
        assert status == 401
        # admitted: same origin, with the token
        json = {"Host": host, "Origin": dev.origin, "Content-Type": "application/json", **token}
        assert ask(dev.port, "POST", "/api/refresh", json, b"{}")[0] == 200
        # bad input is a clear 4xx and the page keeps running
        status, body = ask(dev.port, "POST", "/api/call", json, b"not json")
        assert status == 400 and b"not JSON" in body
        status, body = ask(dev.port, "POST", "/api/call", {**json, "Content-Type": "text/plain"}, b"{}")
        assert status == 415
        status, body = ask(dev.port, "POST", "/api/answer", json, b'{"call": "c9", "key": "k", "action": "accept"}')
        assert status == 422 and orjson.loads(body) == {"error": "no call 'c9'"}
        assert ask(dev.port, "GET", "/", {"Host": host})[0] == 200


@pytest.mark.process
def test_the_page_is_served_with_a_strict_content_security_policy() -> None:
    with baton_dev(EVERYTHING) as dev:
        conn = http.client.HTTPConnection("127.0.0.1", dev.port, timeout=10)
        conn.request("GET", "/")
        response = conn.getresponse()
        policy = response.getheader("Content-Security-Policy") or ""
        conn.close()
        assert "script-src 'self'" in policy and "unsafe-inline" not in policy
        assert "frame-ancestors 'none'" in policy


def test_the_guard_compares_the_whole_token() -> None:
    guard = DevGuard(4242, token="t0ken")
    ok = {"host": "127.0.0.1:4242", "x-baton-dev-token": "t0ken"}
    assert guard.check(ok, static=False) is None
    assert guard.check({**ok, "x-baton-dev-token": "t0ke"}, static=False) is not None
    assert guard.check({**ok, "x-baton-dev-token": "t0kenn"}, static=False) is not None
    assert guard.address == "http://127.0.0.1:4242/#token=t0ken"
    assert DevGuard(1).token != DevGuard(1).token


def _children(pid: int) -> list[int]:
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        found += [int(p) for p in (task / "children").read_text().split()]
    return found


def _gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status").read_text() if Path(f"/proc/{pid}/status").exists() else ""
    return "State:\tZ" in status


@pytest.mark.process
@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 0)])
def test_ctrl_c_stops_the_page_and_its_server_without_a_traceback(signum: int, code: int) -> None:
    with baton_dev(EVERYTHING) as dev:
        deadline = time.monotonic() + 20
        while not (children := _children(dev.proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert children, "baton dev started no server process"
        dev.proc.send_signal(signum)
        _, err = dev.proc.communicate(timeout=20)
        assert dev.proc.returncode == code
        assert "Traceback" not in err.decode()
        deadline = time.monotonic() + 10
        while not all(_gone(pid) for pid in children) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(pid) for pid in children), "the server process outlived baton dev"
        with pytest.raises(OSError):
            socket.create_connection(("127.0.0.1", dev.port), timeout=1).close()


@pytest.mark.process
def test_ctrl_c_in_a_terminal_stops_dev_and_its_server_and_nothing_prints_a_traceback() -> None:
    """A terminal sends Ctrl-C to the whole foreground group. The stdio server is in a group of its own (P133), so
    only `baton dev` gets it and closes the server the MCP way; a server still importing its code prints no
    traceback (before P133 it raised KeyboardInterrupt mid-import when the machine was slow)."""
    with baton_dev(EVERYTHING) as dev:
        deadline = time.monotonic() + 20
        while not _children(dev.proc.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(1)  # the server is up and has been listed
        os.killpg(dev.proc.pid, signal.SIGINT)
        _, err = dev.proc.communicate(timeout=20)
        assert dev.proc.returncode == 130
        assert "Traceback" not in err.decode() and "KeyboardInterrupt" not in err.decode(), err.decode()


@pytest.mark.process
def test_ctrl_c_while_the_server_is_still_starting_python_prints_no_traceback(tmp_path: Path) -> None:
    """The case a slow machine hit now and then, made certain: every Python started here spends seconds in its
    start-up (a `sitecustomize` that sleeps), before the server has any code of its own to catch Ctrl-C (P133)."""
    (tmp_path / "sitecustomize.py").write_text("import time\n\ntime.sleep(3)\n")
    with baton_dev(EVERYTHING, env={"PYTHONPATH": str(tmp_path)}) as dev:
        deadline = time.monotonic() + 20
        while not (children := _children(dev.proc.pid)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert children, "baton dev started no server"
        time.sleep(1)  # the server's Python is inside its start-up sleep
        os.killpg(dev.proc.pid, signal.SIGINT)
        _, err = dev.proc.communicate(timeout=30)
        text = err.decode()
        assert dev.proc.returncode == 130, text
        assert "Traceback" not in text and "KeyboardInterrupt" not in text, text
        assert not any(Path(f"/proc/{pid}").exists() for pid in children), "the server outlived baton dev"


@pytest.mark.process
@pytest.mark.parametrize(
    ("args", "said"),
    [
        (["nosuch.py"], "baton dev: no such file: nosuch.py"),
        (["ftp://example.com/mcp"], "a server URL starts with http:// or https://"),
        (["node"], "for a command, put `--` before it: baton dev -- node ..."),
        ([], "name a server: baton dev FILE.py[:ATTR] | baton dev URL | baton dev -- COMMAND ..."),
        (["--port", "70000", EVERYTHING], "--port takes 0 to 65535"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(args: list[str], said: str) -> None:
    done = processes.run([BATON, "dev", "--no-browser", *args], cwd=ROOT, capture_output=True, timeout=30, check=False)
    err = done.stderr.decode()
    assert done.returncode == 2
    assert said in err
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


@pytest.mark.process
def test_a_taken_port_is_one_line_and_exit_2() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = processes.run(
            [BATON, "dev", "--no-browser", "--port", str(port), EVERYTHING],
            cwd=ROOT,
            capture_output=True,
            timeout=30,
            check=False,
        )
    assert done.returncode == 2
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr.decode()
    assert "--port 0" in done.stderr.decode()


def test_the_event_stream_survives_its_keep_alives() -> None:
    """An idle page gets `{}` lines, and the next event after them still arrives (nothing was cut mid-wait)."""

    async def main() -> list[bytes]:
        session = DevSession(DevTarget("nothing", url="http://127.0.0.1:9/mcp"))
        guard = DevGuard(4242, token="t")
        app = DevApp(session, guard, keepalive_s=0.05)
        sent: list[bytes] = []
        leave = asyncio.Event()

        async def receive() -> dict[str, object]:
            await leave.wait()
            return {"type": "http.disconnect"}

        async def send(message: MutableMapping[str, Any]) -> None:
            sent.append(message.get("body", b""))

        scope = {
            "type": "http",
            "method": "GET",
            "path": "/api/events",
            "headers": [(b"host", b"127.0.0.1:4242"), (b"x-baton-dev-token", b"t")],
        }
        serving = asyncio.ensure_future(app(scope, receive, send))
        await asyncio.sleep(0.3)
        session.publish({"type": "notice", "text": "after the keep-alives"})
        await asyncio.sleep(0.1)
        leave.set()
        await serving
        return sent

    sent = asyncio.run(main())
    assert sent.count(b"{}\n") >= 3
    assert any(b"after the keep-alives" in body for body in sent)


WRITES_BESIDE = """
import sqlite3
from pathlib import Path

from baton import Server

here = Path(__file__).parent
(here / "state.json").write_text("{{}}")
with (here / "server.log").open("a") as log:
    log.write("started\\n")
with sqlite3.connect(here / "data.sqlite") as db:
    db.execute("create table if not exists t (x)")
(here / "cache").mkdir(exist_ok=True)
(here / "cache" / "page.html").write_text("<p>cached</p>")

server = Server("writes-beside")


@server.tool()
def {name}() -> str:
    return "{name}"
"""


def events_until(dev: Any, wanted: Any, timeout: float = 30.0) -> list[dict[str, Any]]:
    """The page's events, read from /api/events until one is `wanted` (or the time is up: AssertionError)."""
    conn = http.client.HTTPConnection("127.0.0.1", dev.port, timeout=timeout)
    conn.putrequest("GET", "/api/events", skip_host=True)
    conn.putheader("Host", f"127.0.0.1:{dev.port}")
    conn.putheader("X-Baton-Dev-Token", dev.token)
    conn.endheaders()
    response = conn.getresponse()
    seen: list[dict[str, Any]] = []
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            event = orjson.loads(response.readline())
            seen.append(event)
            if wanted(event):
                return seen
    finally:
        conn.close()
    raise AssertionError(f"not seen in {timeout} s; events: {seen}")


@pytest.mark.process
def test_data_files_written_beside_the_server_restart_nothing(tmp_path: Path) -> None:
    """A server writing JSON, SQLite, a log and a subfolder beside itself at import is started once; an edit
    to its Python file still restarts it (once)."""
    source = tmp_path / "server.py"
    source.write_text(WRITES_BESIDE.format(name="before"))
    with baton_dev(str(source), cwd=tmp_path) as dev:
        events_until(dev, lambda e: e.get("type") == "lists")
        source.write_text(WRITES_BESIDE.format(name="after"))
        seen = events_until(dev, lambda e: e.get("type") == "lists" and e["tools"][0]["name"] == "after")
    restarts = [e["text"] for e in seen if e.get("state") == "restarting"]
    assert restarts == ["server.py changed: restarting the server"]
    assert (tmp_path / "server.log").read_text() == "started\n" * 2
