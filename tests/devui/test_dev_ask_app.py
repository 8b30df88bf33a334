"""The app rung (protocol.md P213-P215) in real headless Chromium: `baton dev --elicitation none` is a host
that renders MCP Apps but shows no elicitation; a tool declared `when_unasked="app"` on a `baton serve` with a
public URL answers with Baton's ask app, the person fills in the server-rendered form inside the sandboxed
frame and sends it, and the app's own calls (the answer tool, then the tool again) complete the call."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from support.dev import baton_dev
from support.serve import RunningServer, start_with_pages

TARGET = "tests/servers/ask_app.py"


@pytest.fixture
def served(tmp_path: Path) -> Iterator[RunningServer]:
    with start_with_pages(TARGET, tmp_path / "server.log") as server:
        yield server


@pytest.fixture
def page(chromium: Any) -> Iterator[Page]:
    context = chromium.new_context()
    outside: list[str] = []
    context.route(
        re.compile(r"^(?!http://127\.0\.0\.1[:/])"), lambda route: (outside.append(route.request.url), route.abort())
    )
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()
    assert outside == []


def call_tool(page: Page, name: str, **arguments: str) -> None:
    item = page.locator("details.item").filter(has=page.get_by_text(name, exact=True))
    if not item.locator("form").first.is_visible():
        item.locator("summary").first.click()
    for field, value in arguments.items():
        item.get_by_role("textbox", name=re.compile(rf"^{field}\b")).fill(value)
    item.get_by_role("button", name="Call").click()


def calls(page: Page, name: str) -> Any:
    return page.get_by_role("article", name=re.compile(rf"^Call c\d+: tools\/call {re.escape(name)}$"))


def test_a_question_in_the_ask_app_is_answered_and_the_call_completes(served: RunningServer, page: Page) -> None:
    with baton_dev(served.url, "--elicitation", "none") as dev:
        page.goto(dev.address)
        call_tool(page, "paint", room="hall")
        first = calls(page, "paint").first
        expect(first.get_by_role("region", name="Result")).to_contain_text("the form shown with this result asks it")
        app = page.frame_locator("iframe[title='App of paint']")
        expect(app.get_by_text("Which colour for the hall?", exact=True)).to_be_visible()
        app.get_by_role("combobox", name="value").select_option("green")
        app.get_by_role("button", name="Send").click()
        # The app sent the answer through the host, called paint again, and shows the next question.
        expect(app.get_by_text("How many litres?", exact=True)).to_be_visible()
        app.get_by_role("spinbutton", name="value").fill("4")
        app.get_by_role("button", name="Send").click()
        expect(app.get_by_role("status")).to_have_text("Painted the hall green with 4 l, for anonymous.")
        expect(page.get_by_role("article", name=re.compile(r"baton_ask_answer"))).to_have_count(2)
        expect(calls(page, "paint")).to_have_count(3)
        expect(calls(page, "paint").first).to_contain_text(re.compile(r"Called by the app of c\d+"))
        expect(calls(page, "paint").first.get_by_role("region", name="Result")).to_contain_text(
            "Painted the hall green with 4 l, for anonymous."
        )
        notes = page.get_by_role("list", name="App notes").first
        expect(notes).to_contain_text("The app updated the model's context")
        expect(page.locator("iframe")).to_have_count(1)  # the app's own calls open no app of their own


def test_on_stdio_without_a_public_url_the_example_asks_in_the_app(page: Page, tmp_path: Path) -> None:
    """P216: `baton dev` runs examples/ask_app.py as its child on stdio (no public URL, no page); the host
    renders the ask app, so both questions are asked there, bound to the stdio principal (the OS user)."""
    env = {"BATON_DATA_DIR": str(tmp_path), "BATON_LEDGER": "memory:", "BATON_CONNECT_STORE": "memory:"}
    with baton_dev("examples/ask_app.py", "--elicitation", "none", env=env) as dev:
        page.goto(dev.address)
        call_tool(page, "repaint", room="kitchen")
        app = page.frame_locator("iframe[title='App of repaint']")
        app.get_by_role("combobox", name="value").select_option("green")
        app.get_by_role("button", name="Send").click()
        expect(app.get_by_text("Repaint the kitchen green? The old colour is lost.", exact=True)).to_be_visible()
        app.get_by_role("checkbox", name="Confirm").check()
        app.get_by_role("button", name="Send").click()
        expect(app.get_by_role("status")).to_have_text("The kitchen is now green.")


def test_decline_in_the_app_and_a_url_question_takes_the_page(served: RunningServer, page: Page) -> None:
    with baton_dev(served.url, "--elicitation", "none") as dev:
        page.goto(dev.address)
        call_tool(page, "choose", topic="porch")
        app = page.frame_locator("iframe[title='App of choose']")
        app.get_by_role("button", name="Decline").click()
        expect(app.get_by_role("status")).to_have_text("Declined for porch")
        call_tool(page, "key")
        result = calls(page, "key").first.get_by_role("region", name="Result")
        expect(result).to_contain_text(re.compile(rf"{re.escape(served.url.removesuffix('/mcp'))}/connect/[\w-]{{32}}"))
        frame = page.frame_locator("iframe[title='App of key']")
        expect(frame.get_by_role("status")).to_contain_text("waiting for the user")  # no form: the page's link


def test_time_from_result_to_answered_call(
    served: RunningServer, page: Page, capsys: pytest.CaptureFixture[str]
) -> None:
    times = []
    with baton_dev(served.url, "--elicitation", "none") as dev:
        page.goto(dev.address)
        for n in range(6):
            call_tool(page, "choose", topic=f"room {n}")
            result = calls(page, "choose").first.get_by_role("region", name="Result")
            expect(result).to_contain_text("is waiting for the user")
            started = time.perf_counter()
            app = page.frame_locator("iframe").first
            app.get_by_role("combobox", name="value").select_option("red")
            app.get_by_role("button", name="Send").click()
            expect(app.get_by_role("status")).to_have_text(f"Accepted red for room {n}")
            if n:
                times.append(time.perf_counter() - started)
            page.evaluate("document.querySelectorAll('section.app').forEach((s) => s.remove())")
    with capsys.disabled():
        median = statistics.median(times) * 1000
        print(f"\n    [ask-app] tool result to answered call in the app, median of 5: {median:.0f} ms")


HOST_WITHOUT_TOOLS = """<!doctype html><body><iframe sandbox="allow-scripts" title="ask" style="width:600px"></iframe>
<script>
const frame = document.querySelector("iframe");
window.opened = [];
window.addEventListener("message", (event) => {
  const m = event.data;
  const reply = (result) => frame.contentWindow.postMessage({ jsonrpc: "2.0", id: m.id, result }, "*");
  if (m.method === "ui/initialize") reply({ protocolVersion: "2026-01-26", hostCapabilities: { openLinks: {} } });
  else if (m.method === "ui/notifications/initialized") frame.contentWindow.postMessage(
    { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: window.result }, "*");
  else if (m.method === "ui/open-link") { window.opened.push(m.params.url); reply({}); }
});
</script></body>"""


def test_a_host_that_relays_no_tool_calls_gets_the_page_link(chromium: Any) -> None:
    """A host of my own that lets apps open links but not call tools (no `serverTools`): the ask app offers
    the server's page (its link, which needs the browser's sign-in) instead of a form it could not send."""
    from baton.server.ask_app import ASK_APP, ASK_META

    result = {
        "content": [{"type": "text", "text": "waiting"}],
        "_meta": {
            ASK_META: {
                "ticket": "t" * 32,
                "message": "Which colour?",
                "form": "<form></form>",
                "page": "http://127.0.0.1:9/connect/abc",
                "tool": "choose",
                "answerTool": "x",
            }
        },
    }
    context = chromium.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(20_000)
        page.set_content(HOST_WITHOUT_TOOLS)
        page.evaluate("(r) => { window.result = r; }", result)
        page.locator("iframe").evaluate("(f, html) => { f.srcdoc = html; }", ASK_APP.page())
        app = page.frame_locator("iframe")
        expect(app.get_by_text("Which colour?", exact=True)).to_be_visible()
        expect(app.locator("form")).to_have_count(0)
        app.get_by_role("button", name="Answer on the server's page").click()
        page.wait_for_function("window.opened.length === 1")
        assert page.evaluate("window.opened") == ["http://127.0.0.1:9/connect/abc"]
    finally:
        context.close()
