"""Interop at MCP 2025-11-25 (the `initialize` handshake, sessions) with real peers, each in its own process.

The matrix, every cell a real process talking over a real transport on loopback:

- peer clients by servers by transports: the `mcp==1.30.0` `ClientSession` (peers/legacy_mcp1_client.py) and
  the `mcp==2.3.0` `Client(mode="legacy")` (peers/legacy_mcp2_client.py) run the scenario of
  peers/legacy_scenario.py (an eliciting tool accepted, declined and cancelled, a plain tool, one session
  throughout) against Baton's server (tests/servers/handshake.py:interop) and, to prove the peers themselves,
  against the `mcp==1.30.0` FastMCP server (peers/legacy_mcp1_server.py), over Streamable HTTP and stdio;
- Baton's client completing the eliciting tool on the `mcp==1.30.0` FastMCP server, over HTTP and stdio,
  probing the era (`protocol="auto"`) or pinned to 2025-11-25; and `baton tools` / `baton call` on it;
- `baton call --protocol 2025-11-25` reaching an `mcp==2.3.0` server that offers 2026-07-28 yet whose tool
  asks with `ctx.elicit`, which that SDK can only send in a 2025-11-25 session (peers/mcp_elicit_server.py);
- the MCP Inspector's command-line mode listing and calling Baton's tools, over stdio and HTTP.

The venvs and the Inspector are made on first use under `.cache/interop/` (tests/support/peer_venvs.py);
a failed install fails the test with its output.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import pytest
from support import processes
from support.paths import BATON, ROOT, SERVERS
from support.peer_venvs import INSTALL_TIMEOUT_S, Inspector, as_text, ensure_inspector, ensure_venv, peer_env
from support.processes import PortOpen, Process, free_port, start

from baton.client import Accepted, Answer, Cancelled, Client, Declined, Question
from baton.forms import BooleanField, NumberField

sys.path.insert(0, str(ROOT / "bench"))
from otlp_sink import OtlpSink
from support.markers import needs

PEERS = ROOT / "peers"
BATON_SERVER = f"{SERVERS / 'handshake.py'}:interop"
HANDSHAKE = "2025-11-25"
CLIENT_TIMEOUT_S = 90.0

# What each call of peers/legacy_scenario.py's CALLS must come back with, in order.
EXPECTED = [
    ("book", "booked: Paris for 3 nights"),
    ("book", "declined: Rome"),
    ("echo", "echo: hi"),
    ("book", "cancelled: Oslo"),
    ("book", "booked: Lima for 1 nights"),
]

# Installing a venv or the Inspector on first use can take minutes; the flows themselves take seconds.
pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)


# -- peers and servers -------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
@needs("process")
def mcp1_python() -> Path:
    return ensure_venv("mcp1")


@pytest.fixture(scope="session")
@needs("process")
def mcp2_python() -> Path:
    return ensure_venv("mcp")


@pytest.fixture(scope="session")
@needs("process")
def inspector() -> Inspector:
    return ensure_inspector()


@dataclass
class HttpServer:
    """A server subprocess on a loopback port; `output()` is what it logged so far."""

    process: Process
    url: str

    def output(self) -> str:
        return self.process.output()


def serve_http(command: list[str], port: int, log: Path, env: dict[str, str]) -> Iterator[HttpServer]:
    with start(command, cwd=ROOT, env=env, log=log, ready=PortOpen(port), timeout=60.0) as process:
        yield HttpServer(process, f"http://127.0.0.1:{port}/mcp")


def baton_env(data_dir: Path) -> dict[str, str]:
    """Baton's environment with a data directory of its own and no state keys from outside."""
    env = {k: v for k, v in os.environ.items() if k != "BATON_STATE_KEYS"}
    env["BATON_DATA_DIR"] = str(data_dir)
    return env


@pytest.fixture(scope="session")
@needs("process")
def baton_http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """`baton serve tests/servers/handshake.py:interop --http 127.0.0.1:PORT`."""
    logs = tmp_path_factory.mktemp("legacy-baton")
    port = free_port()
    command = [BATON, "serve", str(BATON_SERVER), "--http", f"127.0.0.1:{port}"]
    yield from serve_http(command, port, logs / "baton.log", baton_env(logs / "data"))


@pytest.fixture(scope="session")
@needs("process")
def mcp1_http(mcp1_python: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    """The mcp 1.30.0 FastMCP peer, stateful Streamable HTTP."""
    logs = tmp_path_factory.mktemp("legacy-mcp1")
    port = free_port()
    command = [str(mcp1_python), str(PEERS / "legacy_mcp1_server.py"), "--port", str(port)]
    yield from serve_http(command, port, logs / "mcp1.log", peer_env())


def baton_stdio() -> list[str]:
    return [BATON, "serve", str(BATON_SERVER), "--stdio"]


def mcp1_stdio(python: Path) -> list[str]:
    return [str(python), str(PEERS / "legacy_mcp1_server.py"), "--stdio"]


# -- the peers' clients: one scenario, one report ----------------------------------------------------------

CLIENTS = {"mcp1": ("mcp1_python", "legacy_mcp1_client.py"), "mcp2-legacy": ("mcp2_python", "legacy_mcp2_client.py")}


def run_peer_client(python: Path, script: str, target: str | list[str], server_log: str = "") -> dict[str, Any]:
    """Run a legacy client peer against a URL or a stdio command; its report (failing with all output if none)."""
    where = [target] if isinstance(target, str) else ["--", *target]
    command = [str(python), str(PEERS / script), *where]
    try:
        done = processes.run(
            command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, env=peer_env(), cwd=ROOT, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(
            f"{script} did not finish in {CLIENT_TIMEOUT_S:.0f} s\n--- stdout ---\n{as_text(exc.stdout)}\n"
            f"--- stderr ---\n{as_text(exc.stderr)}\n--- server ---\n{server_log}",
            pytrace=False,
        )
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1])
    except (IndexError, ValueError):
        report = None
    if not isinstance(report, dict):
        pytest.fail(
            f"{script} exited with {done.returncode} without a report\n--- stdout ---\n{done.stdout}\n"
            f"--- stderr ---\n{done.stderr}\n--- server ---\n{server_log}",
            pytrace=False,
        )
    report["_stderr"] = done.stderr[-3000:]
    return report


def describe(report: dict[str, Any]) -> str:
    """A report, a line per call and per HTTP exchange, then the tail of the client's stderr."""
    lines = [f"protocol {report['protocol']}, server {report['server']}, error {report['error']}"]
    lines += [f"call {json.dumps(call)}" for call in report["calls"]]
    lines.append(f"sent {report['sent']}")
    lines += [f"http {json.dumps(exchange)}" for exchange in report["http"]]
    return "\n--- report ---\n" + "\n".join(lines) + f"\n--- client stderr (tail) ---\n{report['_stderr']}"


def check_scenario(report: dict[str, Any], where: str) -> None:
    """Every call returned what it should, each book call asked exactly one form, all in one session."""
    context = f"{describe(report)}\n{where}"
    assert report["error"] is None, f"the client raised: {report['error']}{context}"
    assert report["protocol"] == HANDSHAKE, context
    got = [(call["tool"], call["text"]) for call in report["calls"]]
    assert got == EXPECTED, context
    assert not any(call["is_error"] for call in report["calls"]), context
    for call in report["calls"]:
        if call["tool"] == "echo":
            assert call["questions"] == [], context
            continue
        assert len(call["questions"]) == 1, context
        (question,) = call["questions"]
        assert question.get("mode", "form") == "form", context
        properties = question["requestedSchema"]["properties"]
        assert properties["nights"]["type"] == "integer", context
        assert properties["confirm"]["type"] == "boolean", context
    sent = report["sent"]
    assert sent.count("initialize") == 1, f"expected one initialize, the client sent {sent}{context}"
    assert sent.count("response") == 4, f"expected one answer per form, the client sent {sent}{context}"


def check_http_session(report: dict[str, Any], where: str) -> None:
    """Over HTTP: one `initialize`, whose response named the session, then that `Mcp-Session-Id` on everything."""
    exchanges = report["http"]
    context = f"{describe(report)}\n{where}"
    opening = [i for i, x in enumerate(exchanges) if "initialize" in x["rpc"]]
    assert len(opening) == 1, context
    first = exchanges[opening[0]]
    session = first["set_session"]
    assert first["session"] is None and session, context
    later = exchanges[opening[0] + 1 :]
    assert [x for x in later if x["session"] != session] == [], context
    assert all(x["status"] is not None and x["status"] < 400 for x in exchanges), context
    assert sum("tools/call" in x["rpc"] for x in later) == len(EXPECTED), context
    assert any(x["method"] == "DELETE" for x in later), context


@pytest.fixture(params=sorted(CLIENTS))
def peer_client(request: pytest.FixtureRequest) -> tuple[Path, str]:
    fixture, script = CLIENTS[request.param]
    return request.getfixturevalue(fixture), script


def test_peer_client_over_http_against_baton(peer_client: tuple[Path, str], baton_http: HttpServer) -> None:
    python, script = peer_client
    report = run_peer_client(python, script, baton_http.url, baton_http.output())
    where = f"--- Baton server output ---\n{baton_http.output()}"
    check_scenario(report, where)
    check_http_session(report, where)


@pytest.fixture
@needs("process")
def traced_http(tmp_path: Path) -> Iterator[tuple[HttpServer, OtlpSink]]:
    """Baton's interop server with telemetry on, exporting to an OTLP receiver in this process."""
    with OtlpSink() as sink:
        port = free_port()
        command = [BATON, "serve", str(BATON_SERVER), "--http", f"127.0.0.1:{port}"]
        env = {k: v for k, v in baton_env(tmp_path / "data").items() if not k.startswith("OTEL_")}
        env.update(OTEL_EXPORTER_OTLP_ENDPOINT=sink.endpoint, OTEL_BSP_SCHEDULE_DELAY="50")
        for server in serve_http(command, port, tmp_path / "baton.log", env):
            yield server, sink


def test_peer_client_over_http_against_traced_baton(
    peer_client: tuple[Path, str], traced_http: tuple[HttpServer, OtlpSink]
) -> None:
    """With telemetry on, each question Baton asks in a session carries its span's context in `_meta`
    (protocol.md P63): the peers' clients still answer every one, and each is a CLIENT span under its call's."""
    python, script = peer_client
    server, sink = traced_http
    report = run_peer_client(python, script, server.url, server.output())
    where = f"--- Baton server output ---\n{server.output()}"
    check_scenario(report, where)
    deadline = time.monotonic() + 15
    while True:
        spans = sink.spans()
        asks = [s for s in spans if s["name"] == "elicitation/create"]
        if len(asks) >= 4 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    by_id = {s["span_id"]: s for s in spans}
    assert len(asks) == 4, [s["name"] for s in spans]
    assert all(by_id[s["parent"]]["name"] == "tools/call book" for s in asks)
    # What the peer received: each question's `_meta` names its ask's span, and carries nothing else of ours.
    questions = [q for call in report["calls"] for q in call["questions"]]
    carried = sorted(tuple(q["_meta"]["traceparent"].split("-")[1:3]) for q in questions)
    assert carried == sorted((s["trace_id"], s["span_id"]) for s in asks), questions
    assert all(set(q["_meta"]) <= {"traceparent", "tracestate"} for q in questions), questions


def test_peer_client_over_stdio_against_baton(peer_client: tuple[Path, str]) -> None:
    python, script = peer_client
    report = run_peer_client(python, script, baton_stdio())
    check_scenario(report, "(the Baton server's stderr is in the client's stderr)")


def test_peer_client_over_http_against_mcp1_server(peer_client: tuple[Path, str], mcp1_http: HttpServer) -> None:
    """The control cell: the same client against the SDK's own server shows the peer client itself works."""
    python, script = peer_client
    report = run_peer_client(python, script, mcp1_http.url, mcp1_http.output())
    where = f"--- mcp 1.30.0 server output ---\n{mcp1_http.output()}"
    check_scenario(report, where)
    check_http_session(report, where)


def test_peer_client_over_stdio_against_mcp1_server(peer_client: tuple[Path, str], mcp1_python: Path) -> None:
    python, script = peer_client
    report = run_peer_client(python, script, mcp1_stdio(mcp1_python))
    check_scenario(report, "(the server's stderr is in the client's stderr)")


# -- Baton's client against the mcp 1.30.0 FastMCP server --------------------------------------------------

Era = Literal["auto", "2025-11-25"]

BATON_ANSWERS: list[Answer[Any]] = [
    Accepted({"nights": 3, "confirm": True}),
    Declined(),
    Cancelled(),
    Accepted({"nights": 2, "confirm": False}),
]


async def baton_session(target: str | list[str], protocol: Era) -> tuple[list[str], list[Question]]:
    """One Baton client: `session`, four `book` calls answered as BATON_ANSWERS, `echo`, `session` again.

    With `protocol="auto"` the client must find out from its `server/discover` probe that the server
    speaks only 2025-11-25; pinned, it opens the session at once."""
    answers = iter(BATON_ANSWERS)
    seen: list[Question] = []

    async def on_form(question: Question) -> Answer[Any]:
        seen.append(question)
        return next(answers)

    texts: list[str] = []
    async with Client(target, on_form=on_form, deadline_s=CLIENT_TIMEOUT_S, protocol=protocol) as client:
        calls = [("session", {}), *[("book", {"city": c}) for c in ("Paris", "Rome", "Oslo", "Lima")]]
        for tool, arguments in [*calls, ("echo", {"text": "hi"}), ("session", {})]:
            result = await client.call_tool(tool, arguments)
            assert not result.is_error, (tool, result)
            texts.append(result.text)
        assert client.era == HANDSHAKE, client.era
    return texts, seen


def check_baton_client(target: str | list[str], protocol: Era, server_output: str) -> None:
    try:
        texts, seen = asyncio.run(baton_session(target, protocol))
    except BaseException as exc:
        raise AssertionError(f"{exc!r}\n--- peer server output ---\n{server_output}") from exc
    context = f"{texts}\n--- peer server output ---\n{server_output}"
    assert texts[1:-2] == ["booked: Paris for 3 nights", "declined: Rome", "cancelled: Oslo", "not confirmed: Lima"], (
        context
    )
    assert texts[-2] == "echo: hi", context
    assert texts[0].startswith("session ") and texts[-1] == texts[0], f"the client changed sessions: {context}"
    assert len(seen) == 4, seen
    for question in seen:
        assert question.mode == "form" and question.form is not None, question
        fields = {f.name: f for f in question.form.fields}
        assert isinstance(fields.get("nights"), NumberField) and fields["nights"].integer, question.form.fields
        assert isinstance(fields.get("confirm"), BooleanField), question.form.fields


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_baton_client_over_http_against_mcp1_server(protocol: Era, mcp1_http: HttpServer) -> None:
    check_baton_client(mcp1_http.url, protocol, mcp1_http.output())


@pytest.mark.parametrize("protocol", ["auto", "2025-11-25"])
def test_baton_client_over_stdio_against_mcp1_server(protocol: Era, mcp1_python: Path) -> None:
    check_baton_client(mcp1_stdio(mcp1_python), protocol, "(its stderr is this test's stderr)")


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_baton_cli_against_mcp1_server(transport: str, request: pytest.FixtureRequest, mcp1_python: Path) -> None:
    """`baton tools` and `baton call` probe the era, so they work on a 2025-11-25-only server too."""
    server: HttpServer | None = request.getfixturevalue("mcp1_http") if transport == "http" else None
    for args, expected in (["tools"], "echo(text: string)"), (["call", "echo", "text=hi"], "echo: hi"):
        if server is not None:  # baton tools URL | baton call URL TOOL ARGS
            command = [BATON, args[0], server.url, *args[1:]]
        else:  # baton tools -- COMMAND | baton call TOOL ARGS -- COMMAND
            command = [BATON, *args, "--", *mcp1_stdio(mcp1_python)]
        done = processes.run(command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, cwd=ROOT, check=False)
        shown = server.output() if server is not None else "(the server's stderr is the CLI's)"
        context = f"{command}: exit {done.returncode}\n{done.stdout}\n{done.stderr[-3000:]}\n{shown}"
        assert done.returncode == 0, context
        assert expected in done.stdout.splitlines(), context


def test_baton_call_pinned_to_2025_reaches_an_mcp2_ctx_elicit_tool(mcp2_python: Path) -> None:
    """mcp 2.3 offers 2026-07-28, so `baton call` (auto) speaks it, and there `ctx.elicit` has no back channel:
    the call fails. `--protocol 2025-11-25` opens a session, where the question comes during the call."""
    server = ["--", str(mcp2_python), str(PEERS / "mcp_elicit_server.py"), "--stdio"]
    answer = ["--answer", '*={"nights": 2, "confirm": true}']

    def call(*options: str) -> subprocess.CompletedProcess[str]:
        command = [BATON, "call", *options, "book", "city=Paris", *answer, *server]
        return processes.run(command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, cwd=ROOT, check=False)

    pinned = call("--protocol", HANDSHAKE)
    assert (pinned.returncode, pinned.stdout.strip()) == (0, "booked: Paris for 2 nights"), pinned.stderr
    probed = call()  # auto: 2026-07-28, where this SDK cannot send elicitation/create
    assert probed.returncode == 1 and "no back-channel" in probed.stderr, probed.stdout + probed.stderr


# -- the MCP Inspector's command-line mode against Baton's server ------------------------------------------


def run_inspector(inspector: Inspector, target: list[str], *args: str, tmp_path: Path) -> tuple[int, str, str]:
    """`inspector --cli TARGET... ARGS...`: exit status, stdout, stderr. Its catalog file stays in tmp_path."""
    env = {k: v for k, v in peer_env().items() if k != "NODE_OPTIONS"}
    env["MCP_CATALOG_PATH"] = str(tmp_path / "inspector-catalog.json")
    command = inspector.argv("--cli", *target, *args)
    try:
        done = processes.run(
            command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, env=env, cwd=tmp_path, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the Inspector did not finish in {CLIENT_TIMEOUT_S:.0f} s:\n{as_text(exc.stderr)}", pytrace=False)
    return done.returncode, done.stdout, done.stderr


def check_inspector(inspector: Inspector, target: list[str], tmp_path: Path, server_output: Callable[[], str]) -> None:
    """List Baton's tools, call `echo`, and call `book`, which must be refused: the Inspector cannot answer forms."""

    def run(*args: str) -> tuple[int, str, str, str]:
        code, out, err = run_inspector(inspector, target, *args, tmp_path=tmp_path)
        return code, out, err, f"\nexit {code}\n--- stdout ---\n{out}\n--- stderr ---\n{err}\n{server_output()}"

    code, out, _, context = run("--method", "tools/list")
    assert code == 0, context
    tools = {tool["name"]: tool for tool in json.loads(out)["tools"]}
    assert set(tools) == {"book", "echo"}, context
    assert tools["book"]["inputSchema"]["properties"]["city"]["type"] == "string", context

    code, out, _, context = run("--method", "tools/call", "--tool-name", "echo", "--tool-arg", "text=hi")
    assert code == 0, context
    result = json.loads(out)
    assert result.get("isError") is not True, context
    assert [block.get("text") for block in result["content"]] == ["echo: hi"], context

    # The Inspector declares no elicitation capability, so Baton must not ask it and must say why, in a tool
    # result the model can pass on (protocol.md P96); the Inspector exits non-zero for an isError result.
    code, out, _, context = run("--method", "tools/call", "--tool-name", "book", "--tool-arg", "city=Paris")
    assert code != 0, context
    assert "booked" not in out and "cancelled" not in out, context
    assert "needs the user to fill in a form, and this client cannot show one" in out, context


def test_inspector_cli_over_stdio_against_baton(inspector: Inspector, tmp_path: Path) -> None:
    # `-e` (the server's environment) before the command, or the Inspector would take it for the server's.
    target = ["-e", f"BATON_DATA_DIR={tmp_path / 'data'}", BATON, "serve", str(BATON_SERVER), "--stdio"]
    check_inspector(inspector, target, tmp_path, lambda: "(the server's stderr is the Inspector's)")


def test_inspector_cli_over_http_against_baton(inspector: Inspector, baton_http: HttpServer, tmp_path: Path) -> None:
    check_inspector(
        inspector, [baton_http.url], tmp_path, lambda: f"--- Baton server output ---\n{baton_http.output()}"
    )
