"""`baton bridge --serve-http PORT -- COMMAND`: a stdio server served over Streamable HTTP (protocol.md P155-P158).

The stdio server is `baton serve examples/everything.py --stdio` (found on 2026-07-28, or pinned to
2025-11-25 with `--protocol`), or the `mcp` 1.30 SDK's FastMCP (2025-11-25 only); the HTTP client is
Baton's, speaking either version.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv

from baton.cli import main
from baton.client import Accepted, Client, Declined, Question
from baton.protocol.constants import META_LOG_LEVEL
from baton.protocol.errors import McpError

EVERYTHING = [BATON, "serve", str(ROOT / "examples" / "everything.py"), "--stdio"]
TWO_ROUNDS = "test_input_required_result_multi_round"
START_S = 60.0


class Bridge:
    """`baton bridge --serve-http 0 ... -- COMMAND` as a subprocess: its URL, its stderr, its child."""

    def __init__(self, command: list[str], *options: str, log: Path) -> None:
        self.log = log
        with log.open("wb") as err:  # the child keeps its own descriptor; this one is closed, not leaked
            self.proc = processes.popen(
                [BATON, "bridge", "--serve-http", "0", *options, "--", *command],
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=ROOT,
            )
        assert self.proc.stdout is not None
        ready, _, _ = select.select([self.proc.stdout], [], [], START_S)
        line = self.proc.stdout.readline().decode().strip() if ready else ""
        assert line.startswith("http://127.0.0.1:"), f"no URL on stdout: {line!r}\n{self.stderr}"
        self.url = line

    @property
    def stderr(self) -> str:
        return self.log.read_text()

    def child(self) -> int:
        """The pid of the stdio server the bridge runs now."""
        children = Path(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children").read_text().split()
        assert len(children) == 1, children
        return int(children[0])

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


@pytest.fixture
@needs("process")
def bridge(tmp_path: Path) -> Iterator[Any]:
    started: list[Bridge] = []

    def start(command: list[str], *options: str) -> Bridge:
        started.append(Bridge(command, *options, log=tmp_path / f"bridge{len(started)}.log"))
        return started[-1]

    yield start
    for b in started:
        b.stop()


async def _flows(url: str, era: str) -> dict[str, Any]:
    asked: list[str] = []

    async def answer(question: Question) -> Accepted[Any]:
        asked.append(question.message)
        return Accepted({"name": "Lin"} if "name" in question.message else {"color": "red"})

    heard: list[Any] = []

    async def hear(message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        heard.append(params.get("progress") if message["method"] == "notifications/progress" else params.get("data"))

    report: dict[str, Any] = {}
    async with Client(url, on_form=answer, protocol=era) as client:  # type: ignore[arg-type]
        report["tools"] = [tool["name"] for tool in await client.list_tools()]
        report["era"] = client.era
        report["simple"] = (await client.call_tool("test_simple_text")).text
        report["two_rounds"] = (await client.call_tool(TWO_ROUNDS)).text
        report["asked"] = asked
        report["progress_result"] = (await client.call_tool("test_tool_with_progress", progress=hear)).text
        report["progress"], heard[:] = list(heard), []
        # A 2026 client asks for log messages in `_meta`; a 2025-11-25 session gets every level until setLevel.
        call = {"name": "test_tool_with_logging", "arguments": {}, "_meta": {META_LOG_LEVEL: "info"}}
        await client.request("tools/call", call, progress=hear)
        report["logs"] = heard
        report["read"] = [c.get("text") for c in (await client.read_resource("test://static-text"))["contents"]]
        report["prompt"] = (await client.get_prompt("test_simple_prompt"))["messages"][0]["content"]["text"]
    return report


@pytest.mark.parametrize("client_era", ["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("server_era", ["auto", "2025-11-25"])
def test_a_stdio_server_serves_both_versions_over_http(bridge: Any, client_era: str, server_era: str) -> None:
    b = bridge(EVERYTHING, "--protocol", server_era)
    report = asyncio.run(asyncio.wait_for(_flows(b.url, client_era), 60))
    assert report["era"] == client_era
    assert TWO_ROUNDS in report["tools"] and "test_simple_text" in report["tools"]
    assert report["simple"] == "This is a simple text response for testing."
    # Two rounds: input_required for a 2026 client, elicitation/create on the SSE stream for a session,
    # whichever way the stdio server asks (rounds, or elicitation/create during the call: P155).
    assert report["two_rounds"] == "Lin likes red"
    assert report["asked"] == ["What is your name?", "What is your favorite color?"]
    assert report["progress_result"] == "Progress test completed" and report["progress"] == [0, 50, 100]
    assert report["logs"] == ["Tool execution started", "Tool processing data", "Tool execution completed"]
    assert report["read"] == ["This is the content of the static text resource."]
    assert report["prompt"] == "This is a simple prompt for testing."
    assert "Traceback" not in b.stderr


@pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)  # the mcp1 venv may be installed on first use
def test_an_mcp_sdk_stdio_server_asks_a_2026_client(bridge: Any) -> None:
    python = ensure_venv("mcp1")
    b = bridge([str(python), str(ROOT / "peers" / "legacy_mcp1_server.py"), "--stdio"])
    asked: list[str] = []

    async def answer(question: Question) -> Accepted[Any]:
        asked.append(question.message)
        return Accepted({"nights": 3, "confirm": True})

    async def flow() -> tuple[str | None, str, str]:
        async with Client(b.url, on_form=answer, protocol="2026-07-28") as client:
            echo = (await client.call_tool("echo", {"text": "hi"})).text
            booked = (await client.call_tool("book", {"city": "Oslo"})).text
            return client.era, echo, booked

    # FastMCP asks with ctx.elicit during the call; the 2026 client gets it as an input_required round.
    assert asyncio.run(asyncio.wait_for(flow(), 60)) == ("2026-07-28", "echo: hi", "booked: Oslo for 3 nights")
    assert asked == ["Book a stay in Oslo?"]
    assert "MCP 2025-11-25 over stdio" in b.stderr


def test_a_killed_child_is_a_clear_error_then_started_again(bridge: Any) -> None:
    b = bridge(EVERYTHING)
    first = b.child()

    async def flow() -> tuple[str, str]:
        async def kill(message: dict[str, Any]) -> None:
            os.kill(first, signal.SIGKILL)  # at the first progress notification, the call still running

        async with Client(b.url, protocol="2026-07-28") as client:
            try:
                await client.call_tool("test_tool_with_progress", progress=kill)
                failed = ""
            except McpError as exc:
                failed = exc.message
            return failed, (await client.call_tool("test_simple_text")).text

    failed, after = asyncio.run(asyncio.wait_for(flow(), 60))
    assert failed.startswith("baton bridge: the stdio server exited during this request; it is started again")
    assert after == "This is a simple text response for testing."
    assert b.child() != first
    lines = [line for line in b.stderr.splitlines() if line.startswith("baton bridge: the stdio server")]
    assert lines == ["baton bridge: the stdio server was killed by SIGKILL; it is started again on the next request"]
    assert "Traceback" not in b.stderr


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_signals_end_the_bridge_and_its_child_at_once(bridge: Any, signum: int, status: int) -> None:
    b = bridge(EVERYTHING)
    child = b.child()
    b.proc.send_signal(signum)
    started = time.monotonic()
    assert b.proc.wait(timeout=15) == status
    assert time.monotonic() - started < 8
    assert not Path(f"/proc/{child}").exists() or "Z" in Path(f"/proc/{child}/stat").read_text().split()[2]
    assert "Traceback" not in b.stderr


@pytest.mark.parametrize(
    ("argv", "said"),
    [
        (["--serve-http", "0"], "baton bridge: --serve-http needs the stdio server's command after --"),
        (["--serve-http", "http", "--", "x"], "baton bridge: --serve-http takes a port number"),
        (["--serve-http", "0", "--protocol", "2024", "--", "x"], "baton bridge: --protocol takes"),
        (["--serve-http", "0", "--host", "0.0.0.0", "--", "x"], "baton bridge: --host 0.0.0.0 is not a loopback"),
        (["--serve-http", "0", "--", "/nonexistent/server"], "baton bridge: cannot run '/nonexistent/server'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], argv: list[str], said: str) -> None:
    assert main(["bridge", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(said) and err.count("\n") == 1, err


@pytest.mark.parametrize("server_era", ["auto", "2025-11-25"])
def test_the_stdio_servers_list_changes_reach_a_listen_stream(bridge: Any, server_era: str) -> None:
    b = bridge(EVERYTHING, "--protocol", server_era)

    async def flow() -> list[str]:
        heard: list[str] = []
        changed = asyncio.Event()

        async def hear(message: dict[str, Any]) -> None:
            heard.append(message["method"])
            if message["method"] == "notifications/tools/list_changed":
                changed.set()

        async with Client(b.url, protocol="2026-07-28") as client:
            listen = {"notifications": {"toolsListChanged": True}}
            stream = asyncio.ensure_future(client.request("subscriptions/listen", listen, progress=hear))
            await asyncio.sleep(0.5)  # the stream is open (the acknowledgement came first)
            await client.call_tool("test_trigger_tool_change")
            await asyncio.wait_for(changed.wait(), 20)
            stream.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stream
        return heard

    # A 2026 stdio server's change comes on the bridge's own listen stream to it; a 2025-11-25 one's on its own.
    assert "notifications/tools/list_changed" in asyncio.run(asyncio.wait_for(flow(), 60))


WATCHED = "test://watched-resource"
UPDATED = "notifications/resources/updated"
CHANGED = "notifications/tools/list_changed"


async def _until(heard: list[dict[str, Any]], method: str, client: Client, tool: str) -> list[dict[str, Any]]:
    """Call `tool` until `method` is heard (the bridge's subscription at the stdio server may come a moment after
    the client's); what was heard of it."""
    for _ in range(40):
        if any(m.get("method") == method for m in heard):
            break
        await client.call_tool(tool)
        await asyncio.sleep(0.25)
    return [m for m in heard if m.get("method") == method]


@pytest.mark.parametrize("server_era", ["auto", "2025-11-25"])
def test_resource_updates_reach_a_listen_stream_and_a_session(bridge: Any, server_era: str) -> None:
    # A 2026 client's resourceSubscriptions and a 2025-11-25 client's resources/subscribe are made at the stdio
    # server (its own listen stream, or its session): the updates and list changes come back to each (P199).
    b = bridge(EVERYTHING, "--protocol", server_era)

    async def modern() -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        heard: list[dict[str, Any]] = []

        async def hear(message: dict[str, Any]) -> None:
            heard.append(message)

        async with Client(b.url, protocol="2026-07-28") as client:
            offered = (await client.discover())["capabilities"]["resources"]
            listen = {"notifications": {"toolsListChanged": True, "resourceSubscriptions": [WATCHED]}}
            stream = asyncio.ensure_future(client.request("subscriptions/listen", listen, progress=hear))
            updated = await _until(heard, UPDATED, client, "test_update_watched_resource")
            changed = await _until(heard, CHANGED, client, "test_trigger_tool_change")
            stream.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await stream
        return offered, updated, changed

    async def session() -> tuple[dict[str, Any], list[dict[str, Any]], list[dict[str, Any]]]:
        heard: list[dict[str, Any]] = []

        def tap(direction: str, message: dict[str, Any]) -> None:
            if direction == "received" and "method" in message:
                heard.append(message)

        async with Client(b.url, protocol="2025-11-25", on_message=tap) as client:
            await client.settle_era()
            offered = (client.initialize_result or {})["capabilities"]["resources"]
            assert await client.request("resources/subscribe", {"uri": WATCHED}) == {}
            updated = await _until(heard, UPDATED, client, "test_update_watched_resource")
            changed = await _until(heard, CHANGED, client, "test_trigger_tool_change")
        return offered, updated, changed

    for flow in (modern, session):
        offered, updated, changed = asyncio.run(asyncio.wait_for(flow(), 60))
        assert offered["subscribe"] is True, flow
        assert updated and updated[0]["params"]["uri"] == WATCHED, flow
        assert changed, flow
    assert "Traceback" not in b.stderr


@pytest.mark.process
def test_a_stdio_server_that_does_not_start_is_one_line_and_exit_1() -> None:
    command = [BATON, "bridge", "--serve-http", "0", "--", "sh", "-c", "echo broken >&2; exit 3"]
    done = processes.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr.splitlines() == [
        "broken",  # the server's own stderr
        "baton bridge: the stdio server \"sh -c 'echo broken >&2; exit 3'\" did not start:"
        " it exited before it answered",
    ]


CRASHY = """
import os

from baton import Server

server = Server("crashy")


@server.tool()
def crash() -> str:
    os._exit(3)


@server.tool()
def ok() -> str:
    return "ok"
"""


def test_a_server_that_keeps_exiting_waits_longer_before_each_start(bridge: Any, tmp_path: Path) -> None:
    script = tmp_path / "crashy.py"
    script.write_text(CRASHY)
    b = bridge([BATON, "serve", str(script), "--stdio", "--quiet"])

    async def flow() -> list[str]:
        said: list[str] = []
        async with Client(b.url, protocol="2026-07-28") as client:
            for name in ("crash", "ok", "crash", "ok"):
                try:
                    said.append((await client.call_tool(name)).text)
                except McpError as exc:
                    said.append(exc.message)
            await asyncio.sleep(0.6)  # the pause after a second exit soon after the start
            said.append((await client.call_tool("ok")).text)
        return said

    said = asyncio.run(asyncio.wait_for(flow(), 60))
    assert said[0].startswith("baton bridge: the stdio server exited during this request")
    assert said[1] == "ok"  # started again at once after its first exit
    assert said[2].startswith("baton bridge: the stdio server exited during this request")
    assert said[3].startswith("baton bridge: the stdio server exited with status 3, 2 times in a row soon after")
    assert "it is started again in 0." in said[3]
    assert said[4] == "ok"
    lines = [line for line in b.stderr.splitlines() if line.startswith("baton bridge: the stdio server")]
    assert lines == [
        "baton bridge: the stdio server exited with status 3; it is started again on the next request",
        "baton bridge: the stdio server exited with status 3; it is started again on the next request"
        " in 0.5 s at the earliest",
    ]


def test_a_round_left_unanswered_does_not_hold_up_another_call(bridge: Any) -> None:
    b = bridge(EVERYTHING, "--protocol", "2025-11-25")

    async def answer(question: Question) -> Accepted[Any]:
        return Accepted({"name": "Lin"} if "name" in question.message else {"color": "red"})

    async def flow() -> tuple[str, str]:
        async with Client(b.url, on_form=answer, protocol="2026-07-28") as client:
            first = await client.start("tools/call", {"name": TWO_ROUNDS, "arguments": {}})  # never resumed
            # The stdio server's question for this call reaches its client though the first is still open (P157).
            second = await asyncio.wait_for(client.call_tool(TWO_ROUNDS), 20)
            return type(first).__name__, second.text

    assert asyncio.run(asyncio.wait_for(flow(), 60)) == ("Round", "Lin likes red")


@pytest.mark.parametrize("server_era", ["auto", "2025-11-25"])
def test_baton_skills_through_the_bridge_lists_the_stdio_servers_skills(bridge: Any, server_era: str) -> None:
    # The skills extension's methods are forwarded like the others, not refused with a raw -32601.
    b = bridge(EVERYTHING, "--protocol", server_era)
    done = processes.run([BATON, "skills", b.url], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("baton-tools  skill://baton-tools/SKILL.md")


ASKERS = [BATON, "serve", str(ROOT / "tests" / "servers" / "askers.py"), "--stdio", "--quiet"]


def test_a_2025_servers_questions_never_reach_another_client(bridge: Any) -> None:
    # A's call waits, then asks; B's asks at once, while A's has no question open: on one process the bridge
    # could not tell whose question it was. Each call that may ask has a process of its own (P200).
    b = bridge(ASKERS, "--protocol", "2025-11-25")
    crossed: list[str] = []

    def answers(who: str) -> Any:
        async def answer(question: Question) -> Any:
            if f"for {who}?" not in question.message:
                crossed.append(f"{who} was asked {question.message!r}")
                return Declined()
            return Accepted({"value": who.lower()})

        return answer

    async def call(who: str, era: str, wait_s: float, after_s: float) -> str:
        await asyncio.sleep(after_s)
        async with Client(b.url, on_form=answers(who), protocol=era) as client:  # type: ignore[arg-type]
            return (await client.call_tool("ask", {"who": who, "wait_s": wait_s})).text

    async def both() -> list[str]:
        return list(await asyncio.gather(call("A", "2026-07-28", 2.0, 0.0), call("B", "2025-11-25", 0.0, 0.5)))

    assert asyncio.run(asyncio.wait_for(both(), 60)) == ["A: a", "B: b"]
    assert crossed == []
    assert "Traceback" not in b.stderr


@pytest.mark.parametrize(("signum", "status"), [(signal.SIGTERM, 0), (signal.SIGINT, 130)])
def test_a_question_open_at_a_client_does_not_hold_up_the_end(bridge: Any, signum: int, status: int) -> None:
    b = bridge(EVERYTHING)

    async def flow() -> str:
        asked = asyncio.Event()

        async def never(question: Question) -> Accepted[Any]:
            asked.set()
            await asyncio.sleep(3600)
            raise AssertionError("unreachable")

        async with Client(b.url, on_form=never, protocol="2025-11-25") as client:
            call = asyncio.ensure_future(client.call_tool(TWO_ROUNDS))
            await asyncio.wait_for(asked.wait(), 20)
            b.proc.send_signal(signum)
            try:
                await asyncio.wait_for(call, 20)
                return "answered"
            except Exception as exc:  # the session's stream ended with the bridge
                return type(exc).__name__

    asyncio.run(asyncio.wait_for(flow(), 60))
    assert b.proc.wait(timeout=15) == status
    assert "Traceback" not in b.stderr and "ERROR" not in b.stderr, b.stderr
