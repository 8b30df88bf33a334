"""The server's own page (the ask ladder's page rung, protocol.md P145-P147), end to end with real parts.

A `baton serve` subprocess on loopback; hosts that cannot show the question: Baton's `Client` with no
elicitation declared (both protocol versions), or with form only, and `mcp` 1.30 with no elicitation
callback; a person in headless Chromium who opens the link, answers by role and label, and the next
identical call completes with those answers. Also: the link is bound to its principal, single use and
expiring; two instances behind nginx share what waits through Redis.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import threading
import time
from collections.abc import Callable, Coroutine, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
from scaleout import Cluster, running_cluster
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT, SERVERS
from support.peer_venvs import ensure_venv, peer_env
from support.processes import free_port
from support.serve import RunningServer, start_server, start_with_pages
from test_connect import log_in

from baton import Accepted
from baton.client import Client

T = TypeVar("T")
SESSION, STATELESS = "2025-11-25", "2026-07-28"
DEMO = str(ROOT / "examples" / "demo.py") + ":demo_server"
PAGE_ASKS = str(SERVERS / "page_asks.py")
PEERS = ROOT / "peers"
LINK = re.compile(r"http://127\.0\.0\.1:\d+/connect/[A-Za-z0-9_-]{32}")


class Host:
    """A host (Baton's `Client`) on an event loop of its own thread, so Playwright's sync API keeps this one."""

    def __init__(self, url: str, protocol: str, who: str | None = None, **options: Any) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()
        headers = {"Authorization": f"Bearer {who}"} if who else None
        self.client = Client(url, protocol=protocol, headers=headers, **options)  # type: ignore[arg-type]
        self._run(self.client.__aenter__())

    def _run(self, coro: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(60)

    def call(self, tool: str, **arguments: Any) -> str:
        result = self._run(self.client.call_tool(tool, arguments))
        assert not result.is_error, result.text
        return str(result.text)

    def close(self) -> None:
        self._run(self.client.__aexit__(None, None, None))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(5)
        self._loop.close()


def link_in(text: str) -> str:
    found = LINK.findall(text)
    assert len(found) == 1, f"one link expected in the result: {text}"
    return str(found[0])


def open_page(page: Any, url: str, who: str) -> Any:
    """Open a page link as `who` (signing in on the development login when sent there); the final response."""
    response = page.goto(url)
    if "/connect/login" in page.url:
        log_in(page, who)
        response = page.goto(url)
    return response


def press(page: Any, button: str) -> str:
    with page.expect_navigation():
        page.get_by_role("button", name=button).click()
    return str(page.locator("body").inner_text())


@pytest.fixture
@needs("process")
def demo(tmp_path: Path) -> Iterator[RunningServer]:
    with start_with_pages(DEMO, tmp_path / "server.log") as running:
        yield running


def asks_server(tmp_path: Path, **env: str) -> Any:
    port = free_port()
    env = {"BATON_TEST_PUBLIC_URL": f"http://127.0.0.1:{port}", **env}
    return start_server(PAGE_ASKS, port=port, log=tmp_path / "server.log", env=env)


@pytest.fixture
@needs("process")
def asks(tmp_path: Path) -> Iterator[RunningServer]:
    with asks_server(tmp_path, BATON_LEDGER="memory:") as running:
        yield running


@pytest.fixture
def people(chromium: Any) -> Iterator[Callable[[], Any]]:
    """A fresh browser context (its own cookie jar) per person; its page."""
    contexts: list[Any] = []

    def new() -> Any:
        contexts.append(chromium.new_context())
        return contexts[-1].new_page()

    yield new
    for context in contexts:
        context.close()


@pytest.fixture
def hosts() -> Iterator[Callable[..., Host]]:
    made: list[Host] = []

    def new(url: str, protocol: str = STATELESS, who: str | None = None, **options: Any) -> Host:
        made.append(Host(url, protocol, who, **options))
        return made[-1]

    yield new
    for host in made:
        host.close()


# -- the example tools, in both protocol versions --------------------------------------------------


@pytest.mark.parametrize("protocol", [STATELESS, SESSION])
def test_create_project_on_the_page(
    demo: RunningServer, hosts: Callable[..., Host], people: Callable[[], Any], protocol: str
) -> None:
    host = hosts(demo.url, protocol)
    assert not host.client.declared  # no elicitation declared: a host that cannot show the question
    first = host.call("create_project", name="atlas")
    url = link_in(first)
    assert "How should atlas-" in first and "call create_project again with exactly the same arguments" in first
    assert link_in(host.call("create_project", name="atlas")) == url  # before the answer: the same link
    page = people()
    open_page(page, url, "anonymous")
    page.get_by_label("Template").select_option("data")
    refused = press(page, "Send")  # no region: the browser lets it through, the server's check does not
    assert "Regions" in page.get_by_role("alert").inner_text() and "recorded" not in refused
    page.get_by_label("Template").select_option("data")
    page.get_by_role("checkbox", name="eu").check()
    page.get_by_role("checkbox", name="ap").check()
    assert "Your answer was recorded" in press(page, "Send")
    second = host.call("create_project", name="atlas")  # goes on: the next question, on its own page
    assert "cost $40 a month" in second
    cost = link_in(second)
    assert cost != url
    open_page(page, cost, "anonymous")
    page.get_by_role("checkbox", name="Confirm").check()
    press(page, "Send")
    done = host.call("create_project", name="atlas")
    assert re.fullmatch(r"Created atlas-[0-9a-f]{4} \(data in eu, ap\), \$40/month\.", done), done
    assert page.goto(cost).status == 410  # the link was used
    # The flow is finished: the same call again starts a new one, with a new question.
    again = host.call("create_project", name="atlas")
    assert link_in(again) not in (url, cost) and "How should atlas-" in again


@pytest.mark.parametrize("protocol", [STATELESS, SESSION])
def test_delete_project_yes_and_decline(
    demo: RunningServer, hosts: Callable[..., Host], people: Callable[[], Any], protocol: str
) -> None:
    host = hosts(demo.url, protocol)
    page = people()
    open_page(page, link_in(host.call("delete_project", project_id="gemini")), "anonymous")
    assert "Delete project gemini? This cannot be undone." in page.locator("body").inner_text()
    press(page, "Decline")
    assert host.call("delete_project", project_id="gemini") == "Deletion was not confirmed."
    open_page(page, link_in(host.call("delete_project", project_id="apollo")), "anonymous")
    page.get_by_role("checkbox", name="Confirm").check()
    press(page, "Send")
    assert host.call("delete_project", project_id="apollo") == "Deleted apollo."


def test_a_host_that_can_show_the_waiting_question_is_asked_it_there(
    demo: RunningServer, hosts: Callable[..., Host]
) -> None:
    """The same caller, the same call, from a host that shows forms: asked natively, not sent to the page; the
    flow then completes, so the page host's next identical call is a new flow, not the old link."""
    asked: list[str] = []

    async def yes(question: Any) -> Any:
        asked.append(question.message)
        return Accepted({"confirm": True})

    waiting = link_in(hosts(demo.url).call("delete_project", project_id="apollo"))
    assert hosts(demo.url, on_form=yes).call("delete_project", project_id="apollo") == "Deleted apollo."
    assert asked == ["Delete project apollo? This cannot be undone."]
    after = hosts(demo.url).call("delete_project", project_id="apollo")
    assert after == "There is no project 'apollo'." and waiting not in after


def test_decline_and_cancel_reach_the_tool(
    asks: RunningServer, hosts: Callable[..., Host], people: Callable[[], Any]
) -> None:
    host = hosts(asks.url, who="alice")
    page = people()
    for button, topic, outcome in (("Decline", "walls", "Declined"), ("Cancel", "doors", "Cancelled")):
        open_page(page, link_in(host.call("choose", topic=topic)), "alice")
        press(page, button)
        assert host.call("choose", topic=topic) == f"{outcome} for {topic}, asked by alice"
    open_page(page, link_in(host.call("choose", topic="roof")), "alice")
    page.get_by_role("combobox", name="value").select_option("green")
    press(page, "Send")
    assert host.call("choose", topic="roof") == "Accepted green for roof, asked by alice"


@pytest.mark.parametrize("protocol", [STATELESS, SESSION])
@pytest.mark.parametrize("declare", [("form",), ()], ids=["form-only", "none"])
def test_a_url_question_gives_the_connect_link(
    demo: RunningServer, hosts: Callable[..., Host], people: Callable[[], Any], protocol: str, declare: tuple[str, ...]
) -> None:
    """Forms only (as Claude Code declares `elicitation: {}`) or nothing: the connect page is the link."""
    host = hosts(demo.url, protocol, declare=declare)
    first = host.call("deploy_project", project_id="gemini")
    url = link_in(first)
    assert "Connect your Acme Cloud account" in first
    assert "sk-" not in first
    page = people()
    open_page(page, url, "anonymous")
    page.fill("input[name=secret]", "sk-page-test-1234")
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert "Connected" in page.content()
    done = host.call("deploy_project", project_id="gemini")
    assert done.startswith("Deployed gemini to Acme Cloud for anonymous"), done
    assert "sk-page-test-1234" not in demo.log.read_text()


# -- who may answer, and for how long --------------------------------------------------------------


def test_the_link_is_bound_to_its_principal_and_single_use(
    asks: RunningServer, hosts: Callable[..., Host], people: Callable[[], Any]
) -> None:
    alice, bob = hosts(asks.url, who="alice"), hosts(asks.url, who="bob")
    url = link_in(alice.call("choose", topic="hall"))
    # Bob's identical call is another flow: another link, and it never finds Alice's answer.
    bobs = link_in(bob.call("choose", topic="hall"))
    assert bobs != url
    mallory = people()
    refused = open_page(mallory, url, "bob")
    assert refused.status == 403 and "another account" in mallory.content()
    page = people()
    open_page(page, url, "alice")
    page.get_by_role("combobox", name="value").select_option("red")
    press(page, "Send")
    assert page.goto(url).status == 410  # used
    assert alice.call("choose", topic="hall") == "Accepted red for hall, asked by alice"
    assert link_in(bob.call("choose", topic="hall")) == bobs  # still waiting for Bob himself


def test_an_expired_link_says_so(tmp_path: Path, hosts: Callable[..., Host], people: Callable[[], Any]) -> None:
    with asks_server(tmp_path, BATON_TEST_PAGE_TTL_S="2", BATON_LEDGER="memory:") as server:
        alice = hosts(server.url, who="alice")
        page = people()
        open_page(page, link_in(alice.call("choose", topic="cellar")), "alice")  # signed in
        # The page link lives BATON_TEST_PAGE_TTL_S (2 s here): after that, it says so.
        late = link_in(alice.call("choose", topic="attic"))
        time.sleep(2.5)
        expired = page.goto(late)
        assert expired.status == 404 and "has expired" in page.content()
        # And the call, no longer waiting on that link, asks again with a fresh one.
        assert link_in(alice.call("choose", topic="attic")) != late


@pytest.mark.process
@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_on_stdio_there_is_no_page_and_the_error_rung_answers(protocol: str) -> None:
    """Over stdio no HTTP serves a page: a page tool's question ends the call as "error" does: -32021 in
    2026-07-28, a tool error in a 2025-11-25 session. The version is pinned: on a loaded machine the probe
    may give up before a slow server answers, and the era is not what this test is about."""
    done = processes.run(
        [BATON, "call", "--protocol", protocol, "--elicitation", "none", "delete_project", "project_id=apollo",
         "--", BATON, "serve", str(ROOT / "examples" / "projects.py"), "--stdio"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 1, (done.stdout, done.stderr)
    said = done.stderr if protocol == "2026-07-28" else done.stdout
    assert ("-32021" in said) == (protocol == "2026-07-28") and "cannot show one" in said, (done.stdout, done.stderr)
    assert "/connect/" not in done.stdout + done.stderr


# -- mcp 1.30 as the host ----------------------------------------------------------------------------


def mcp1_call(url: str, tool: str, arguments: dict[str, Any]) -> dict[str, Any]:
    python = ensure_venv("mcp1")
    done = processes.run(
        [str(python), str(PEERS / "page_mcp1_host.py"), url, tool, json.dumps(arguments)],
        capture_output=True,
        text=True,
        timeout=60,
        env=peer_env(),
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return dict(json.loads(done.stdout.splitlines()[-1]))


def test_mcp1_host_without_elicitation(demo: RunningServer, people: Callable[[], Any]) -> None:
    first = mcp1_call(demo.url, "delete_project", {"project_id": "apollo"})
    assert first["is_error"] is False and first["elicitation"] is False
    page = people()
    open_page(page, link_in(first["text"]), "anonymous")
    page.get_by_role("checkbox", name="Confirm").check()
    press(page, "Send")
    assert mcp1_call(demo.url, "delete_project", {"project_id": "apollo"})["text"] == "Deleted apollo."


# -- two instances behind nginx, sharing Redis -----------------------------------------------------


@pytest.fixture
@needs("nginx", "redis")
def pair(tmp_path: Path) -> Iterator[Cluster]:
    yield from running_cluster(tmp_path, count=2, round_robin=True, target=PAGE_ASKS, public_url=True)


def test_two_instances_share_what_waits(pair: Cluster, hosts: Callable[..., Host], people: Callable[[], Any]) -> None:
    host = hosts(pair.url, who="carol")
    texts = [host.call("choose", topic="porch") for _ in range(4)]  # round-robin: both instances answer
    assert len({link_in(t) for t in texts}) == 1  # each finds the link the other made
    page = people()
    open_page(page, link_in(texts[0]), "carol")
    page.get_by_role("combobox", name="value").select_option("green")
    press(page, "Send")
    done = [host.call("choose", topic="porch") for _ in range(2)]  # one of them on the other instance
    assert done[0] == "Accepted green for porch, asked by carol"
    assert "Which colour for porch?" in done[1]  # finished: the same call starts a new flow
    assert pair.nginx is not None and len(pair.nginx.logged_instances()) == 2


# -- the figure for the closing note -----------------------------------------------------------------


def test_time_from_link_to_completed_call(
    asks: RunningServer, hosts: Callable[..., Host], people: Callable[[], Any], capsys: pytest.CaptureFixture[str]
) -> None:
    host = hosts(asks.url, who="dana")
    page = people()
    times = []
    for n in range(6):
        url = link_in(host.call("choose", topic=f"room {n}"))
        started = time.perf_counter()
        open_page(page, url, "dana")  # the first signs in
        page.get_by_role("combobox", name="value").select_option("red")
        press(page, "Send")
        assert host.call("choose", topic=f"room {n}").startswith("Accepted red")
        if n:
            times.append(time.perf_counter() - started)
    with capsys.disabled():
        median = statistics.median(times) * 1000
        print(f"\n    [ask-page] link to completed call, median of 5 (signed in): {median:.0f} ms")
