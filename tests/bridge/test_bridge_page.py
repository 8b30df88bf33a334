"""`baton bridge`'s own page (protocol.md P160), in real headless Chromium: a host that cannot show a question.

The hosts: `mcp==1.30.0` with no elicitation callback (2025-11-25, `peers/bridge_mcp1_host.py mute`), and
Baton's client over stdio (2026-07-28) with no form handler, or with a form handler only (a URL question
then goes to the page). The bridge runs with `--no-browser`: its stderr line gives the page's address,
which the test opens in Chromium and answers by role and label.
"""

from __future__ import annotations

import asyncio
import json
import queue
import re
import subprocess
import threading
import urllib.request
from collections.abc import Callable, Iterator
from typing import IO, Any

import pytest
from playwright.sync_api import Page, expect
from support import processes
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, ensure_venv, peer_env
from support.serve import RunningServer

from baton.client import Accepted, Client, Question
from baton.client.stdio_transport import StdioTransport

EVERYTHING = str(ROOT / "examples" / "everything.py")
FLOWS = str(ROOT / "tests" / "servers" / "dev_flows.py")
MIXED = str(ROOT / "tests" / "servers" / "mixed_round.py")
TWO_ROUNDS = "test_input_required_result_multi_round"
ADDRESS = re.compile(r"answer it at (http://127\.0\.0\.1:\d+/#token=\S+)")

pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)  # the mcp1 venv may be installed on first use


@pytest.fixture
def page(chromium: Any) -> Iterator[Page]:
    context = chromium.new_context()
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def _lines(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def _address(lines: queue.Queue[str], timeout: float = 60.0) -> str:
    """The page's address from the bridge's next stderr line announcing a question."""
    while True:
        line = lines.get(timeout=timeout)
        found = ADDRESS.search(line)
        if found:
            return found.group(1)


def _answer_two_rounds(page: Page, address: str, lines: queue.Queue[str], name: str, color: str) -> None:
    page.goto(address)
    first = page.get_by_role("region", name="Question: What is your name?")
    first.get_by_role("textbox", name="name (required)").fill(name)
    first.get_by_role("button", name="Submit").click()
    expect(first).to_contain_text("Answered (accept)")
    _address(lines)  # the second question is announced too; the open page shows it by itself
    second = page.get_by_role("region", name="Question: What is your favorite color?")
    second.get_by_role("textbox", name="color (required)").fill(color)
    second.get_by_role("button", name="Submit").click()


def test_an_mcp1_host_without_elicitation_gets_its_question_asked_on_the_page(
    serve: Callable[..., RunningServer], page: Page
) -> None:
    server = serve(EVERYTHING)
    python = ensure_venv("mcp1")
    command = [str(python), str(ROOT / "peers" / "bridge_mcp1_host.py"), "mute", "--", BATON, "bridge"]
    host = processes.popen(
        [*command, "--no-browser", server.url],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
        env=peer_env(),
    )
    lines: queue.Queue[str] = queue.Queue()
    assert host.stderr is not None
    threading.Thread(target=_lines, args=(host.stderr, lines), daemon=True).start()
    try:
        _answer_two_rounds(page, _address(lines), lines, "Ada", "teal")
        out, _ = host.communicate(timeout=60)
    finally:
        if host.poll() is None:
            host.kill()
            host.wait()
    report = json.loads(next(line for line in out.splitlines() if line.startswith("{")))
    assert report == {"result": "Ada likes teal", "server": "baton-everything", "version": "2025-11-25"}


def _baton_host(
    argv: list[str], tool: str, arguments: dict[str, Any], **handlers: Any
) -> tuple[threading.Thread, queue.Queue[str], dict[str, Any]]:
    """Baton's client over stdio on the bridge, calling `tool` in a thread; its stderr lines and its outcome."""
    lines: queue.Queue[str] = queue.Queue()
    outcome: dict[str, Any] = {}

    async def flow() -> None:
        transport = StdioTransport(argv, on_stderr=lambda line: lines.put(line.decode()))
        # The 2026 host pins its era: under load the bridge answers the host's probe after the client gave up on
        # it, and the client then rightly opens a 2025-11-25 session, which is not the path tested here.
        async with Client(transport, **{"protocol": "2026-07-28", **handlers}) as host:
            outcome["text"] = (await host.call_tool(tool, arguments)).text
            outcome["era"] = host.era

    def run() -> None:
        try:
            asyncio.run(asyncio.wait_for(flow(), 90))
        except Exception as exc:
            outcome["failed"] = repr(exc)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread, lines, outcome


def test_a_2026_host_without_elicitation_of_a_2025_server_answers_on_the_page(
    serve: Callable[..., RunningServer], page: Page
) -> None:
    # The bridge holds the 2025-11-25 server's call (P135); the host declared nothing, so the page asks.
    server = serve(EVERYTHING)
    argv = [BATON, "bridge", "--no-browser", "--protocol", "2025-11-25", server.url]
    thread, lines, outcome = _baton_host(argv, TWO_ROUNDS, {})
    _answer_two_rounds(page, _address(lines), lines, "Lin", "red")
    thread.join(60)
    assert outcome == {"text": "Lin likes red", "era": "2026-07-28"}


def test_a_url_question_the_host_cannot_show_goes_to_the_page(serve: Callable[..., RunningServer], page: Page) -> None:
    # The host shows forms but not URLs: the form reaches the host, the URL step the page (Done).
    server = serve(FLOWS)
    forms: list[str] = []

    async def on_form(question: Question) -> Accepted[Any]:
        forms.append(question.message)
        return Accepted({"email": "a@example.com", "seats": 2, "plan": "pro", "newsletter": False})

    argv = [BATON, "bridge", "--no-browser", server.url]
    thread, lines, outcome = _baton_host(argv, "sign_up", {"team": "blue"}, on_form=on_form)
    address = _address(lines)
    page.goto(address)
    asked = page.get_by_role("region", name="Question: Set up billing in your browser")
    expect(asked.get_by_role("link", name="https://billing.example.com/setup")).to_be_visible()
    asked.get_by_role("button", name="Done").click()
    thread.join(60)
    assert forms == ["Sign up team blue"]
    assert outcome["text"] == "blue: a@example.com, 2 seats, pro; billing opened"


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_a_round_split_between_the_host_and_the_page(serve: Callable[..., RunningServer], page: Page, era: str) -> None:
    # One round, a form and a URL question; the host shows forms only: the form goes to the host, the URL to the
    # page, and both answers go back together, with the server's sealed requestState (P201).
    server = serve(MIXED)
    forms: list[str] = []

    async def on_form(question: Question) -> Accepted[Any]:
        forms.append(question.message)
        return Accepted({"value": "Ada"})

    argv = [BATON, "bridge", "--no-browser", server.url]
    thread, lines, outcome = _baton_host(argv, "both", {}, on_form=on_form, protocol=era)
    page.goto(_address(lines))
    asked = page.get_by_role("region", name="Question: Open the billing page")
    expect(asked.get_by_role("link", name="https://billing.example.com/setup")).to_be_visible()
    asked.get_by_role("button", name="Done").click()
    thread.join(60)
    assert outcome == {"text": "Ada; billing opened", "era": era}
    assert forms == ["What is your name?"]


def test_a_question_nobody_answers_is_cancelled_and_the_page_is_guarded(serve: Callable[..., RunningServer]) -> None:
    server = serve(EVERYTHING)
    argv = [BATON, "bridge", "--no-browser", "--ask-timeout", "1", server.url]
    thread, lines, outcome = _baton_host(argv, TWO_ROUNDS, {})
    address = _address(lines)
    origin = address.split("/#")[0]
    refused = []
    for headers in ({}, {"X-Baton-Dev-Token": "wrong"}, {"Origin": "http://evil.example"}):
        try:
            urllib.request.urlopen(urllib.request.Request(f"{origin}/api/questions", headers=headers), timeout=10)
        except urllib.error.HTTPError as exc:
            refused.append(exc.code)
    assert refused == [401, 401, 403]
    thread.join(60)
    # A 2026 host and server: the rounds the host cannot show are asked on the page; both time out (cancel).
    assert "nobody answered question 'step1' in 1 s: cancelled" in "".join(list(lines.queue))
    assert outcome == {"text": "stranger likes no colour", "era": "2026-07-28"}
