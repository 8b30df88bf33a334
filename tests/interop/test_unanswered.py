"""Questions a host cannot show or never answers (issue 24, items 2 and 3; protocol.md P95, P96).

Real peers, real transports: the `mcp==1.30.0` `ClientSession` of peers/legacy_mcp1_unanswered.py,
without an elicitation callback (it declares no elicitation, like many desktop hosts) or with one that
never returns (a host that drops the question), against `baton serve tests/servers/unanswered.py` over
stdio and Streamable HTTP; a raw 2026-07-28 request without the capability; and a raw 2025-11-25 HTTP
client that closes the stream its question came on, then resumes it (or not) (issue 41 item 1, P111).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT, SERVERS
from support.peer_venvs import INSTALL_TIMEOUT_S, as_text, ensure_venv, peer_env
from support.serve import RunningServer, start_for_module, start_server
from test_http_handshake import Client, message_of, rpc, until
from wire import call

TARGET = str(SERVERS / "unanswered.py")
PEER = ROOT / "peers" / "legacy_mcp1_unanswered.py"
CANNOT = "Tool book needs the user to fill in a form, and this client cannot show one."
FALLBACK = "not booked: nobody answered the question about {city}; ask the user and call again"

pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)  # the peer's venv is made on first use


@pytest.fixture(scope="module")
@needs("process")
def mcp1_python() -> Path:
    return ensure_venv("mcp1")


@pytest.fixture(scope="module")
@needs("process")
def http(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """The server over HTTP, with `--ask-timeout 2`."""
    server = start_for_module(tmp_path_factory, TARGET, "--ask-timeout", "2")  # its own data directory, not ~/.local
    with server.process:
        yield server


def peer(python: Path, mode: str, tool: str, city: str, where: str | list[str]) -> dict[str, Any]:
    """Run the peer once; its report (failing with all its output when it has none or raised)."""
    target = [where] if isinstance(where, str) else ["--", *where]
    command = [str(python), str(PEER), mode, tool, city, *target]
    try:
        done = processes.run(command, capture_output=True, text=True, timeout=90, env=peer_env(), check=False)
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"the peer did not finish:\n{as_text(exc.stdout)}\n{as_text(exc.stderr)}", pytrace=False)
    try:
        report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        pytest.fail(f"no report (exit {done.returncode}):\n{done.stdout}\n{done.stderr}", pytrace=False)
    assert report["error"] is None, done.stderr
    assert report["protocol"] == "2025-11-25"
    return report


def stdio(*options: str) -> list[str]:
    return [BATON, "serve", TARGET, "--stdio", *options]


# -- item 3: a host without the capability ------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_a_host_without_elicitation_gets_a_tool_error_it_can_relay(
    mcp1_python: Path, http: RunningServer, transport: str
) -> None:
    where = stdio() if transport == "stdio" else http.url
    report = peer(mcp1_python, "none", "book", "Paris", where)
    assert report["is_error"] is True and report["text"] == CANNOT
    assert report["seen"] == ["response"]  # nothing was asked on the wire
    # ctx.can_ask lets the author fall back first
    polite = peer(mcp1_python, "none", "polite", "Paris", where)
    assert polite["is_error"] is False and polite["text"].startswith("booked: Paris for 1 night (the default")


def test_a_2026_request_without_the_capability_gets_32021_saying_the_same(http: RunningServer) -> None:
    """2026-07-28 requires -32021 (SEP-2575, checked by the conformance suite): the words go in its message."""
    resp = call(http.url, "book", {"city": "Paris"}, caps={})
    error = resp.json()["error"]
    assert resp.status_code == 400 and error["code"] == -32021 and error["message"].startswith(CANNOT)


# -- item 2: a host that never answers -----------------------------------------------------------------


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_ask_timeout_reads_an_unanswered_question_as_cancelled(
    mcp1_python: Path, http: RunningServer, transport: str
) -> None:
    where = stdio("--ask-timeout", "2") if transport == "stdio" else http.url
    report = peer(mcp1_python, "hang", "book", "Rome", where)
    assert report["is_error"] is False and report["text"] == FALLBACK.format(city="Rome")
    assert 1.9 <= report["seconds"] < 10
    # the question was withdrawn before the answer went out
    assert report["seen"] == ["elicitation/create", "notifications/cancelled", "response"]


def test_a_per_ask_timeout_beats_the_server_default(mcp1_python: Path) -> None:
    report = peer(mcp1_python, "hang", "quick", "Oslo", stdio())  # the default wait is 600 s
    assert report["text"] == "cancelled: Oslo"
    assert 0.9 <= report["seconds"] < 5


def test_a_resumed_stream_replays_the_question_and_the_answer_counts(tmp_path: Path) -> None:
    """Issue 41 item 1: a client whose POST stream dropped resumes it with `Last-Event-ID` (twice: the first
    resumption drops too), sees the question again, answers it, and the tool gets that answer, not
    `Cancelled` (protocol.md P111). Its own server, with a 20-second ask timeout: under the module's 2 seconds, three
    connections and two pauses on a loaded machine outlasted the question once (it was withdrawn, then answered)."""
    with start_server(TARGET, "--ask-timeout", "20", log=tmp_path / "serve.log") as server:
        client = Client(server.url)
        client.initialize()
        msg = rpc("tools/call", {"name": "book", "arguments": {"city": "Lima"}})
        with client.stream(msg) as (_, events):
            priming = next(events)
            until(events, lambda m: m.get("method") == "elicitation/create")
        time.sleep(0.5)  # the connection is gone: nothing ends the question but the window or the ask timeout
        with client.get(**{"Last-Event-ID": priming["id"]}) as (resp, events):
            until(events, lambda m: m.get("method") == "elicitation/create")  # replayed; this connection drops too
        time.sleep(0.5)
        with client.get(**{"Last-Event-ID": priming["id"]}) as (resp, events):
            assert resp.status_code == 200
            _, asked = until(events, lambda m: m.get("method") == "elicitation/create")
            question = message_of(asked)
            assert question is not None
            assert client.answer(question["id"], {"action": "accept", "content": {"nights": 3}}).status_code == 202
            before, final = until(events, lambda m: m.get("id") == msg["id"])
        assert [m.get("method") for m in before] == []  # never withdrawn
        body = message_of(final)
        assert body is not None and body["result"]["content"][0]["text"] == "booked: Lima for 3 nights"


def test_a_stream_not_resumed_within_the_window_ends_its_question(tmp_path: Path) -> None:
    """Without a resume, the question ends after the window (here 1 s, under the 20-second ask timeout) as
    unanswered, is withdrawn, and the result waits for a `GET` with `Last-Event-ID` (protocol.md P32, P111)."""
    args = ("--ask-timeout", "20", "--resume-window", "1")
    with start_server(TARGET, *args, log=tmp_path / "serve.log") as server:
        client = Client(server.url)
        client.initialize()
        msg = rpc("tools/call", {"name": "book", "arguments": {"city": "Quito"}})
        with client.stream(msg) as (_, events):
            _, asked = until(events, lambda m: m.get("method") == "elicitation/create")
        closed = time.monotonic()
        time.sleep(1.5)
        with client.get(**{"Last-Event-ID": asked["id"]}) as (resp, events):
            assert resp.status_code == 200
            withdrawn, final = until(events, lambda m: m.get("id") == msg["id"])
        assert time.monotonic() - closed < 10  # the window ended it, not the ask timeout
    assert [m.get("method") for m in withdrawn] == ["notifications/cancelled"]
    body = message_of(final)
    assert body is not None and body["result"]["content"][0]["text"] == FALLBACK.format(city="Quito")
