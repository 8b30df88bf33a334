"""`baton bridge URL`: a stdio server for the host, forwarding to a Streamable HTTP server (protocol.md P134-P137).

The host is `mcp==1.30.0` (2025-11-25 only, `peers/bridge_mcp1_host.py`), or Baton's own client speaking
2026-07-28 over stdio; the server is `baton serve examples/everything.py` over HTTP, found on 2026-07-28.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.oauth import log_in, start_as, start_protected
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv, peer_env
from support.processes import free_port
from support.serve import RunningServer, start_server

from baton.cli import main
from baton.cli.bridge import headers_of
from baton.cli.client_commands.args import OneLineError
from baton.client import Accepted, CallToolResult, Client, Question, Round
from baton.protocol.errors import McpError

EVERYTHING = str(ROOT / "examples" / "everything.py")
TWO_ROUNDS = "test_input_required_result_multi_round"
HOST_TIMEOUT_S = 90.0

pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)  # the mcp1 venv may be installed on first use


def _host(scenario: str, url: str, *options: str) -> tuple[dict[str, Any], str]:
    """Run the mcp 1.30 host on `baton bridge URL`; its report, and what the bridge wrote on stderr."""
    python = ensure_venv("mcp1")
    command = [str(python), str(ROOT / "peers" / "bridge_mcp1_host.py"), scenario, "--", BATON, "bridge", *options, url]
    done = processes.run(
        command, capture_output=True, text=True, timeout=HOST_TIMEOUT_S, cwd=ROOT, env=peer_env(), check=False
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert lines, f"the host printed no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}"
    return json.loads(lines[0]), done.stderr


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_mcp1_host_reaches_the_server_through_the_bridge(serve: Callable[..., RunningServer], protocol: str) -> None:
    # auto finds 2026-07-28: the rounds become the host's questions; pinned, the server asks in the session.
    server = serve(EVERYTHING)
    report, stderr = _host("flows", server.url, "--protocol", protocol)
    assert "failed" not in report, report
    assert report["version"] == "2025-11-25" and report["server"] == "baton-everything"
    assert TWO_ROUNDS in report["tools"] and "test_simple_text" in report["tools"]
    assert report["simple"] == "This is a simple text response for testing."
    assert "test://static-text" in report["resources"] and report["templates"] == ["test://template/{id}/data"]
    assert report["read"] == ["This is the content of the static text resource."]
    assert "test_prompt_with_arguments" in report["prompts"]
    assert report["prompt"] == ["Prompt with arguments: arg1='a', arg2='b'"]
    assert report["completion"] == ["gamma"]
    # The server's list changes reach the host: a 2026 server's from a listen stream, a 2025-11-25 server's from
    # its session's GET stream (P161).
    assert report["list_changed"] is True
    # Two rounds of input_required, each put to the host as its own elicitation/create (P135).
    assert report["two_rounds"] == "Ada likes teal"
    assert report["asked"] == ["What is your name?", "What is your favorite color?"]
    assert report["declined"] == "stranger likes no colour"
    assert report["progress"] == [0.0, 50.0, 100.0]
    assert report["logs"] == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    # The host cancelled a call whose question it had not answered: the bridge withdrew the question.
    assert report["question_withdrawn"] is True
    assert report["after_cancel"] == "This is a simple text response for testing."
    assert "Traceback" not in stderr


def test_no_ask_declines_what_a_host_cannot_show(serve: Callable[..., RunningServer]) -> None:
    # Without --no-ask the bridge's page asks (tests/bridge/test_bridge_page.py); with it, a silent decline.
    server = serve(EVERYTHING)
    report, stderr = _host("mute", server.url, "--no-ask")
    assert report["result"] == "stranger likes no colour"
    assert stderr == ""


def test_a_2026_host_gets_input_required_through_the_bridge(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)
    asked: list[str] = []

    async def answer(question: Question) -> Accepted[Any]:
        asked.append(question.key)
        return Accepted({"name": "Lin"} if question.key == "step1" else {"color": "red"})

    async def flow() -> tuple[str, str | None]:
        # The host pins its era: under load the bridge can answer the host's probe after the client gave up on it,
        # and the client then rightly opens a 2025-11-25 session instead, which is not what is tested here.
        async with Client([BATON, "bridge", server.url], on_form=answer, protocol="2026-07-28") as host:
            result = await host.call_tool(TWO_ROUNDS)
            return result.text, host.era

    # The rounds reach this 2026 host as input_required, one leg each, requestState as the server sealed it.
    assert asyncio.run(asyncio.wait_for(flow(), 60)) == ("Lin likes red", "2026-07-28")
    assert asked == ["step1", "step2"]


def test_a_2025_servers_questions_reach_a_2026_host_as_rounds(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)
    asked: list[str] = []

    async def answer(question: Question) -> Accepted[Any]:
        asked.append(question.message)
        return Accepted({"name": "Lin"} if question.message == "What is your name?" else {"color": "red"})

    async def flow() -> tuple[str, str | None, int, str]:
        # The bridge speaks 2025-11-25 to the server, which asks during the call; the host speaks 2026.
        bridge = [BATON, "bridge", "--protocol", "2025-11-25", server.url]
        async with Client(bridge, on_form=answer, protocol="2026-07-28") as host:  # pinned, as above
            step = await host.start("tools/call", {"name": TWO_ROUNDS, "arguments": {}})
            rounds = 0
            while isinstance(step, Round):
                rounds += 1
                question = step.questions()[0]
                step = await host.advance(step, {question.key: await answer(question)})
            stale = {"name": TWO_ROUNDS, "arguments": {}, "requestState": "unknown", "inputResponses": {}}
            try:
                await host.request("tools/call", stale)
                refused = ""
            except McpError as exc:
                refused = exc.message
            return CallToolResult(step).text, host.era, rounds, refused

    text, era, rounds, refused = asyncio.run(asyncio.wait_for(flow(), 60))
    assert (text, era, rounds) == ("Lin likes red", "2026-07-28", 2)
    assert asked == ["What is your name?", "What is your favorite color?"]  # one round each
    assert "requestState names no call this bridge holds" in refused


BROWSER_SCRIPT = """\
import sys, httpx
open(sys.argv[2], "a").write("opened\\n")
resp = httpx.get(sys.argv[1] + "&login_hint=gina", follow_redirects=False, timeout=10)
httpx.get(resp.headers["location"], timeout=10)
"""


@pytest.mark.process
def test_the_bridge_logs_in_as_baton_tools_does_or_takes_a_key_from_the_environment(tmp_path: Path) -> None:
    script, opened = tmp_path / "browser.py", tmp_path / "opened.txt"
    script.write_text(BROWSER_SCRIPT)
    env = {"BATON_DATA_DIR": str(tmp_path / "data"), "BROWSER": f"{sys.executable} {script} %s {opened}"}
    seen: list[dict[str, Any]] = []

    async def whoami(url: str) -> str:
        # The login happens inside the host's first request; a host that gave up on it after the usual 3 s stdio
        # probe would ask again and open a second login on a slow machine.
        bridge = Client(
            [BATON, "bridge", url], env=env, on_message=lambda _way, message: seen.append(message), stdio_probe_s=60
        )
        async with bridge:
            return (await bridge.call_tool("whoami")).text

    with start_as(tmp_path / "as.log") as auth_server, start_protected(auth_server, tmp_path / "baton.log") as server:
        assert asyncio.run(asyncio.wait_for(whoami(server.url), 60)).startswith(f"{auth_server.issuer}|gina")
        assert opened.read_text().count("opened") == 1
        assert asyncio.run(asyncio.wait_for(whoami(server.url), 60)).startswith(f"{auth_server.issuer}|gina")
        assert opened.read_text().count("opened") == 1  # the token store of baton tools: no second login
        # A static key instead: --header with its value from the environment, and no login at all.
        key = log_in(auth_server.issuer, user="kim", scope="mcp:read", resource=server.url)["access_token"]
        static = {"BATON_DATA_DIR": str(tmp_path / "other"), "BROWSER": "false %s", "KEY": key}

        async def with_header() -> str:
            argv = [BATON, "bridge", "--header", "Authorization=Bearer $KEY", server.url]
            async with Client(argv, env=static) as bridge:
                return (await bridge.call_tool("whoami")).text

        assert asyncio.run(asyncio.wait_for(with_header(), 60)).startswith(f"{auth_server.issuer}|kim")
        assert not (tmp_path / "other").exists()
    token = json.loads((tmp_path / "data" / "client" / "oauth.json").read_text())[f"token {server.url}"]
    assert token["access_token"] not in json.dumps(seen)  # nothing the host saw carries it


class _Bridge:
    """`baton bridge URL` driven line by line, as a host drives it."""

    def __init__(self, url: str, *options: str) -> None:
        self.proc = processes.popen(
            [BATON, "bridge", *options, url],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=ROOT,
        )
        self.ids = 0
        self.stderr = ""  # the rest of its stderr, read when it stops
        self.seen: list[dict[str, Any]] = []  # every other line the bridge wrote meanwhile
        # Lines are read in a thread: select() on a buffered pipe misses lines already read into its buffer.
        self.lines: queue.Queue[dict[str, Any]] = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(json.loads(line))

    def ask(self, method: str, params: dict[str, Any] | None = None, timeout: float = 30.0) -> dict[str, Any]:
        assert self.proc.stdin is not None
        self.ids += 1
        message = {"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params or {}}
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                reply = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                break
            if reply.get("id") == self.ids:
                return reply
            self.seen.append(reply)
        raise AssertionError(f"no answer to {method} within {timeout:g} s")

    def initialize(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        info = {"name": "t", "version": "1"}
        params = {"protocolVersion": "2025-11-25", "capabilities": capabilities or {}, "clientInfo": info}
        reply = self.ask("initialize", params)
        self.notify("notifications/initialized")
        return reply

    def notify(self, method: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": method}).encode() + b"\n")
        self.proc.stdin.flush()

    def heard(self, method: str, timeout: float = 10.0) -> list[dict[str, Any]]:
        """The notifications named `method` the bridge wrote so far, after waiting up to `timeout` for one."""
        deadline = time.monotonic() + timeout
        while not any(m.get("method") == method for m in self.seen) and time.monotonic() < deadline:
            self.ask("ping", timeout=deadline - time.monotonic())
            time.sleep(0.1)
        return [m for m in self.seen if m.get("method") == method]

    def next_line(self, timeout: float = 30.0) -> dict[str, Any]:
        try:
            return self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"nothing from the bridge within {timeout:g} s") from None

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self._reader.join(10)  # the pipe's end: its writer has exited
        assert self.proc.stderr is not None
        if not self.proc.stderr.closed:
            self.stderr = self.proc.stderr.read().decode()  # what it said that the test did not read: kept
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                pipe.close()


WATCHED = "test://watched-resource"
UPDATED = "notifications/resources/updated"


@pytest.mark.process
@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_a_server_restart_keeps_the_hosts_session(tmp_path: Any, protocol: str) -> None:
    # A 2025-11-25 server's session ends with it: the bridge opens a new one and makes the host's log level and
    # subscriptions again there (P162); the host never knows. A 2026 server has nothing to reopen.
    port = free_port()
    server = start_server(EVERYTHING, port=port, log=tmp_path / "first.log", env=_keys(tmp_path / "first"))
    bridge = _Bridge(server.url, "--protocol", protocol)
    session = protocol == "2025-11-25"
    try:
        caps = bridge.initialize()["result"]["capabilities"]
        assert caps["resources"]["subscribe"] is True  # a 2026 server's on its listen stream (P199)
        call = {"name": "test_simple_text", "arguments": {}}
        assert bridge.ask("tools/call", call)["result"]["content"][0]["text"].startswith("This is a simple")
        assert "result" in bridge.ask("logging/setLevel", {"level": "error"})
        if session:
            assert "result" in bridge.ask("resources/subscribe", {"uri": WATCHED})
        server.stop()
        # New state keys: the old session id does not open (404), as with a server that keeps sessions in memory.
        restarted = start_server(EVERYTHING, port=port, log=tmp_path / "second.log", env=_keys(tmp_path / "second"))
        try:
            assert bridge.ask("tools/call", call)["result"]["content"][0]["text"].startswith("This is a simple")
            bridge.seen.clear()
            logged = bridge.ask("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
            assert "result" in logged
            assert [m for m in bridge.seen if m.get("method") == "notifications/message"] == []  # still "error"
            if session:
                bridge.ask("tools/call", {"name": "test_update_watched_resource", "arguments": {}})
                assert [m["params"] for m in bridge.heard(UPDATED)] == [{"uri": WATCHED}]
        finally:
            restarted.stop()
    finally:
        bridge.stop()
    assert ("opened a new one" in bridge.stderr) is session


def _keys(data: Path) -> dict[str, str]:
    """A server's environment with its own data directory, hence its own state keys."""
    return {"BATON_DATA_DIR": str(data)}


def test_a_2025_servers_updates_and_list_changes_reach_the_host(serve: Callable[..., RunningServer]) -> None:
    # A 2025-11-25 server says them on its session's GET stream (P161): subscribe, unsubscribe, list_changed.
    server = serve(EVERYTHING)
    bridge = _Bridge(server.url, "--protocol", "2025-11-25")
    try:
        caps = bridge.initialize()["result"]["capabilities"]
        assert caps["resources"]["subscribe"] is True and caps["tools"]["listChanged"] is True
        assert "result" in bridge.ask("resources/subscribe", {"uri": WATCHED})
        bridge.ask("tools/call", {"name": "test_update_watched_resource", "arguments": {}})
        assert [m["params"] for m in bridge.heard(UPDATED)] == [{"uri": WATCHED}]
        assert "result" in bridge.ask("resources/unsubscribe", {"uri": WATCHED})
        bridge.seen.clear()
        bridge.ask("tools/call", {"name": "test_trigger_tool_change", "arguments": {}})
        assert bridge.heard("notifications/tools/list_changed")
        bridge.ask("tools/call", {"name": "test_update_watched_resource", "arguments": {}})
        assert bridge.heard(UPDATED, timeout=1) == []
    finally:
        bridge.stop()


def test_a_2026_servers_resource_updates_reach_an_mcp1_host(serve: Callable[..., RunningServer]) -> None:
    # The host's resources/subscribe becomes resourceSubscriptions on the bridge's listen stream (P199).
    server = serve(EVERYTHING)
    report, stderr = _host("subscribe", server.url)
    assert report["version"] == "2025-11-25" and report["offered"] is True, report
    assert report["updated"] == [WATCHED]
    assert "Traceback" not in stderr


def test_a_2026_servers_resource_updates_reach_a_2026_hosts_listen_stream(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)

    async def flow() -> list[dict[str, Any]]:
        heard: list[dict[str, Any]] = []
        updated = asyncio.Event()

        async def hear(message: dict[str, Any]) -> None:
            heard.append(message)
            if message["method"] == UPDATED:
                updated.set()

        async with Client([BATON, "bridge", server.url], protocol="2026-07-28") as host:
            listen = {"notifications": {"toolsListChanged": True, "resourceSubscriptions": [WATCHED]}}
            stream = asyncio.ensure_future(host.request("subscriptions/listen", listen, progress=hear))
            while not updated.is_set():  # until the stream is open: the acknowledgement comes first
                await host.call_tool("test_update_watched_resource")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(updated.wait(), 0.5)
            stream.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stream
        return heard

    heard = asyncio.run(asyncio.wait_for(flow(), 60))
    acknowledged = heard[0]["params"]
    assert heard[0]["method"] == "notifications/subscriptions/acknowledged"
    assert acknowledged["notifications"] == {"toolsListChanged": True, "resourceSubscriptions": [WATCHED]}
    assert next(m["params"]["uri"] for m in heard if m["method"] == UPDATED) == WATCHED


def test_a_2025_servers_notices_reach_a_2026_hosts_listen_stream(serve: Callable[..., RunningServer]) -> None:
    # The bridge keeps the 2026 host's listen itself over the server's 2025-11-25 session (P202): it subscribes
    # the resource in the session, relays what it asked for with the host's listen id, and unsubscribes at the end.
    server = serve(EVERYTHING)

    async def flow() -> tuple[list[dict[str, Any]], dict[str, Any]]:
        heard: list[dict[str, Any]] = []
        updated, changed = asyncio.Event(), asyncio.Event()

        async def hear(message: dict[str, Any]) -> None:
            heard.append(message)
            (updated if message["method"] == UPDATED else changed).set()

        bridge = [BATON, "bridge", "--protocol", "2025-11-25", server.url]
        async with Client(bridge, protocol="2026-07-28") as host:
            discovered = await host.request("server/discover", {})
            wanted = {"toolsListChanged": True, "promptsListChanged": True, "resourceSubscriptions": [WATCHED]}
            listen = host.request("subscriptions/listen", {"notifications": wanted}, progress=hear)
            stream = asyncio.ensure_future(listen)
            while not updated.is_set():  # until the stream is open: the acknowledgement comes first
                await host.call_tool("test_update_watched_resource")
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(updated.wait(), 0.5)
            changed.clear()
            await host.call_tool("test_trigger_tool_change")
            await asyncio.wait_for(changed.wait(), 10)
            stream.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stream
        return heard, discovered

    heard, discovered = asyncio.run(asyncio.wait_for(flow(), 60))
    assert discovered["capabilities"]["resources"]["subscribe"] is True
    assert discovered["capabilities"]["tools"]["listChanged"] is True
    assert heard[0]["method"] == "notifications/subscriptions/acknowledged"
    granted = heard[0]["params"]["notifications"]
    assert granted["toolsListChanged"] is True and granted["resourceSubscriptions"] == [WATCHED], granted
    ids = {m["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] for m in heard}
    assert len(ids) == 1, heard  # every notice names the one listen
    methods = [m["method"] for m in heard[1:]]
    assert UPDATED in methods and "notifications/tools/list_changed" in methods, methods
    assert next(m["params"]["uri"] for m in heard if m["method"] == UPDATED) == WATCHED


def test_a_listen_stream_outlives_the_bridges_timeout(serve: Callable[..., RunningServer]) -> None:
    # --timeout bounds a request's wait for the server; a listen stream waits by design (P199).
    server = serve(EVERYTHING)

    async def flow() -> tuple[bool, list[str]]:
        heard: list[str] = []
        updated = asyncio.Event()

        async def hear(message: dict[str, Any]) -> None:
            heard.append(message["method"])
            if message["method"] == UPDATED:
                updated.set()

        async with Client([BATON, "bridge", "--timeout", "1", server.url], protocol="2026-07-28") as host:
            listen = {"notifications": {"resourceSubscriptions": [WATCHED]}}
            stream = asyncio.ensure_future(host.request("subscriptions/listen", listen, progress=hear))
            await asyncio.sleep(2.5)
            await host.call_tool("test_update_watched_resource")
            await asyncio.wait_for(updated.wait(), 10)
            open_still = not stream.done()
            stream.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stream
        return open_still, heard

    open_still, heard = asyncio.run(asyncio.wait_for(flow(), 60))
    assert open_still and heard == ["notifications/subscriptions/acknowledged", UPDATED]


@pytest.mark.process
def test_an_unreachable_server_is_one_line_and_an_error_for_the_host() -> None:
    bridge = _Bridge(f"http://127.0.0.1:{free_port()}/mcp")
    try:
        reply = bridge.initialize()
        assert "cannot reach the server" in reply["error"]["message"]
        assert bridge.proc.stdin is not None
        bridge.proc.stdin.close()
        assert bridge.proc.wait(timeout=10) == 0
        assert bridge.proc.stderr is not None
        lines = bridge.proc.stderr.read().decode().splitlines()
        assert len(lines) == 1 and lines[0].startswith("baton bridge: initialize failed: cannot reach the server")
    finally:
        bridge.stop()


@pytest.mark.parametrize(("how", "status"), [("eof", 0), (signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_eof_and_signals_end_the_bridge_at_once(serve: Callable[..., RunningServer], how: Any, status: int) -> None:
    server = serve(EVERYTHING)
    bridge = _Bridge(server.url)
    try:
        bridge.initialize({"elicitation": {}})
        assert bridge.proc.stdin is not None
        # A call in flight, its question open at the host: it ends with the bridge, nothing more is said.
        call = {"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": TWO_ROUNDS, "arguments": {}}}
        bridge.proc.stdin.write(json.dumps(call).encode() + b"\n")
        bridge.proc.stdin.flush()
        assert bridge.next_line()["method"] == "elicitation/create"
        if how == "eof":
            bridge.proc.stdin.close()
        else:
            bridge.proc.send_signal(how)
        started = time.monotonic()
        assert bridge.proc.wait(timeout=10) == status
        assert time.monotonic() - started < 5
        assert bridge.proc.stderr is not None
        assert bridge.proc.stderr.read() == b""
    finally:
        bridge.stop()


def test_headers_read_their_values_from_the_environment() -> None:
    env = {"KEY": "s3cret", "TEAM": "blue"}
    assert headers_of(["X-Api-Key=$KEY", "X-Team=team-${TEAM}"], env) == {"X-Api-Key": "s3cret", "X-Team": "team-blue"}
    with pytest.raises(OneLineError, match=r"\$MISSING is not set") as caught:
        headers_of(["Authorization=Bearer $MISSING"], env)
    assert "Bearer" not in str(caught.value)
    with pytest.raises(OneLineError, match="NAME=VALUE"):
        headers_of(["novalue"], env)


def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bridge", "ftp://example.com/mcp"]) == 2
    assert (
        capsys.readouterr().err
        == "baton bridge: URL is the server's http(s) MCP endpoint, not 'ftp://example.com/mcp'\n"
    )
    assert main(["bridge", "--protocol", "2024", "http://127.0.0.1:9/mcp"]) == 2
    assert "--protocol takes" in capsys.readouterr().err
    os.environ.pop("BATON_TEST_UNSET", None)
    assert main(["bridge", "--header", "K=$BATON_TEST_UNSET", "http://127.0.0.1:9/mcp"]) == 2
    assert capsys.readouterr().err == "baton bridge: --header K: $BATON_TEST_UNSET is not set in the environment\n"
