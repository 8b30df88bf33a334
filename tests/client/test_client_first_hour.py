"""The client items of issue 13 besides the CLI and the results: step mode, and URL re-asks.

- Step mode declares capabilities without handlers (`declare=`), and docs/client.md's step-mode
  snippet, complete as printed, runs against a real server.
- A programmatic `on_url` that accepts at once no longer spends every round before the connect flow
  can finish: the client pauses before a URL it accepted is asked again (protocol.md P22, P23), over
  the real connect kit (MRTR) and for a 2025-11-25 server's -32042 (protocol.md P34).
"""

from __future__ import annotations

import asyncio
import html
import re
import sys
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from servers.mock_mcp import Err, MockMcp, Raw
from support import processes
from support.paths import ROOT
from support.processes import free_port
from support.serve import RunningServer, start_server

from baton.client import Accepted, Answer, Client, ClientError, Question, Round
from baton.protocol.errors import McpError

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

Serve = Callable[..., RunningServer]
T = TypeVar("T")
DOCS = ROOT / "docs" / "client.md"
DOCS_URL = "http://127.0.0.1:8000/mcp"


def run(coro: Coroutine[Any, Any, T], timeout: float = 60) -> T:
    return asyncio.run(asyncio.wait_for(coro, timeout))


# -- step mode -------------------------------------------------------------------------------------------------


def step_mode_snippet() -> str:
    """The Python block of docs/client.md's step-mode section."""
    section = DOCS.read_text().split("## Step mode", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) == 1, blocks
    return str(blocks[0])


def test_the_step_mode_snippet_runs_as_printed(serve: Serve) -> None:
    snippet = step_mode_snippet()
    assert "from baton.client import" in snippet and "Client(" in snippet and DOCS_URL in snippet
    server = serve("examples/projects.py")
    done = processes.run(
        [sys.executable, "-c", snippet.replace(DOCS_URL, server.url)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "the server asks: Delete project apollo? This cannot be undone.\nDeleted apollo.\n"


def test_step_mode_declares_without_handlers(serve: Serve) -> None:
    server = serve("examples/projects.py")
    arguments = {"name": "delete_project", "arguments": {"project_id": "gemini"}}

    async def undeclared() -> Any:
        async with Client(server.url) as client:
            return await client.start("tools/call", arguments)

    async def declared() -> tuple[dict[str, Any], Round, dict[str, Any]]:
        async with Client(server.url, declare=["form", "url"]) as client:
            step = await client.start("tools/call", arguments)
            assert isinstance(step, Round)
            saved = Round.from_json(step.to_json())
            done = await client.advance(saved, {q.key: Accepted({"confirm": True}) for q in saved.questions()})
            assert not isinstance(done, Round)
            return client.capabilities, step, done

    with pytest.raises(McpError) as refused:  # without a declared mode the server may not ask
        run(undeclared())
    assert "elicitation" in refused.value.message
    capabilities, step, done = run(declared())
    assert capabilities == {"elicitation": {"form": {}, "url": {}}}
    (question,) = step.questions()
    assert question.message.startswith("Delete project gemini?")
    assert done["content"][0]["text"] == "Deleted gemini."
    with pytest.raises(ValueError, match="declare takes elicitation modes"):
        Client(server.url, declare=["sampling"])  # type: ignore[list-item]


def test_a_declared_mode_without_handler_is_answered_cancel_by_call_tool(serve: Serve) -> None:
    server = serve("examples/projects.py")

    async def flow() -> str:
        async with Client(server.url, declare=("form",)) as client:
            return (await client.call_tool("delete_project", {"project_id": "apollo"})).text

    assert run(flow()) == "Deletion was not confirmed."


# -- URL re-asks -------------------------------------------------------------------------------------------------


@pytest.fixture
def connect_server(tmp_path: Path) -> Iterator[RunningServer]:
    """The demo server: `deploy_project` asks for an API key on the connect kit's page (development login)."""
    port = free_port()
    env = {"BATON_PUBLIC_URL": f"http://127.0.0.1:{port}", "BATON_CONNECT_STORE": "memory:"}
    with start_server("examples/demo.py:demo_server", port=port, env=env, log=tmp_path / "demo.log") as server:
        yield server


async def finish_in_the_browser(url: str, after_s: float) -> None:
    """What a person does on the connect page, `after_s` late: sign in as suggested, paste a key, save."""
    await asyncio.sleep(after_s)
    async with httpx.AsyncClient(timeout=10, follow_redirects=True) as web:
        login = await web.get(url)  # no session: the development login
        who = re.search(r"name='principal' value='([^']*)'", login.text)
        assert who is not None, login.text
        await web.post(str(login.url), data={"principal": html.unescape(who[1])})
        form = await web.get(url)
        csrf = re.search(r"name='csrf' value='([^']*)'", form.text)
        assert csrf is not None, form.text
        saved = await web.post(url, data={"secret": "sk-test-1234", "csrf": html.unescape(csrf[1])})
        assert "Connected" in saved.text, saved.text


class EagerHost:
    """An `on_url` that accepts at once, every time it is asked; the first time it starts finishing the
    connect page in the background, `finish_after_s` late (None: nothing to finish)."""

    def __init__(self, finish_after_s: float | None) -> None:
        self.finish_after_s = finish_after_s
        self.asked: list[float] = []
        self.flow: asyncio.Task[None] | None = None

    async def __call__(self, question: Question) -> Answer[Any]:
        self.asked.append(time.monotonic())
        if self.flow is None and self.finish_after_s is not None:
            assert question.url is not None
            self.flow = asyncio.create_task(finish_in_the_browser(question.url, self.finish_after_s))
        return Accepted(None)

    def gaps(self) -> list[float]:
        return [round(b - a, 2) for a, b in zip(self.asked, self.asked[1:], strict=False)]


def test_an_eager_on_url_gives_the_connect_flow_time(connect_server: RunningServer) -> None:
    host = EagerHost(finish_after_s=1.0)

    async def flow() -> str:
        async with Client(connect_server.url, on_url=host) as client:
            text = (await client.call_tool("deploy_project", {"project_id": "gemini"})).text
            assert host.flow is not None
            await host.flow
            return text

    assert run(flow()).startswith("Deployed gemini to Acme Cloud")
    gaps = host.gaps()
    assert 2 <= len(gaps) <= 5, gaps  # re-asked while the page was not done, not ten times
    assert gaps[0] >= 0.25 and gaps[1] >= 0.5, gaps  # 0.25 s, then doubling


def test_without_the_pause_the_eager_on_url_spends_every_round(connect_server: RunningServer) -> None:
    """What the pause fixes: with it turned off, ten rounds pass long before the page is done."""
    host = EagerHost(finish_after_s=1.0)

    async def flow() -> None:
        async with Client(connect_server.url, on_url=host, url_backoff_s=(0, 0)) as client:
            try:
                await client.call_tool("deploy_project", {"project_id": "gemini"})
            finally:
                if host.flow is not None:
                    await host.flow

    started = time.monotonic()
    with pytest.raises(ClientError, match="still asked after 10 rounds"):
        run(flow())
    assert host.asked[-1] - started < 1.0 and len(host.asked) == 10


def test_a_url_named_again_by_32042_is_paced() -> None:
    """A 2025-11-25 server answering -32042 until the flow is done: the retries wait 0.25, 0.5, 1 s."""
    mock = MockMcp()
    mock.on("initialize", {"protocolVersion": "2025-11-25", "capabilities": {"tools": {}}, "serverInfo": {"name": "m"}})
    mock.on("notifications/initialized", Raw(202))
    ask = {"mode": "url", "elicitationId": "e1", "url": "https://example.com/connect", "message": "Connect"}
    needs_url = Err(-32042, "URL elicitation required", {"elicitations": [ask]}, status=200)
    mock.on("tools/call", needs_url, needs_url, needs_url, needs_url, {"content": [{"type": "text", "text": "ok"}]})
    mock.start(free_port())
    host = EagerHost(finish_after_s=None)  # the mock decides when it is done

    async def flow() -> str:
        async with Client(mock.url, on_url=host, protocol="2025-11-25") as client:
            return (await client.call_tool("t")).text

    try:
        assert run(flow()) == "ok"
    finally:
        mock.stop()
    calls = [seen.at for seen in mock.requests("tools/call")]
    assert len(calls) == 5
    assert [g >= p for g, p in zip(host.gaps(), [0.25, 0.5, 1.0], strict=True)] == [True, True, True], host.gaps()
    assert calls[-1] - calls[0] >= 1.75
