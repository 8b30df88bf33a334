"""`baton dev` as an MCP Apps host, in real headless Chromium (protocol.md P188, P189): a tool's app page is
rendered in a sandboxed frame under its own policy, receives the call's input and result, calls its tool
through the page; a hostile page reaches neither the page's token, its parent, nor an origin it did not
declare. Driven by visible text and ARIA roles, against `baton dev` subprocesses (tests/support/dev.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from support.app_example import ensure_app_example
from support.dev import baton_dev


@pytest.fixture
def opened(chromium: Any) -> Iterator[tuple[Page, list[str]]]:
    """A page whose requests beyond loopback are answered by a stub and listed (nothing leaves the machine)."""
    context = chromium.new_context()
    seen: list[str] = []

    def outside(route: Any) -> None:
        seen.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>a stub</p>")

    context.route(re.compile(r"^(?!http://127\.0\.0\.1[:/])"), outside)
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page, seen
    context.close()


def call_tool(page: Page, name: str) -> None:
    item = page.locator("details.item").filter(has=page.get_by_text(name, exact=True))
    item.locator("summary").first.click()
    item.get_by_role("button", name="Call").click()


def calls(page: Page, name: str) -> Any:
    return page.get_by_role("article", name=re.compile(rf"^Call c\d+: tools\/call {re.escape(name)}$"))


def test_the_example_app_shows_its_result_and_calls_its_tool_through_the_page(opened: tuple[Page, list[str]]) -> None:
    page, outside = opened
    with baton_dev("examples/dice_app.py") as dev:
        page.goto(dev.address)
        call_tool(page, "roll_dice")
        first = calls(page, "roll_dice").first
        frame = page.frame_locator("iframe[title='App of roll_dice']")
        expect(frame.get_by_text("Rolling 2 dice of 6 sides")).to_be_visible()  # ui/notifications/tool-input
        said = first.get_by_role("region", name="Result").locator("pre").first
        expect(said).to_contain_text(re.compile(r"Rolled \d, \d: total \d+\."))
        expect(frame.get_by_role("status")).to_have_text(said.inner_text())  # ui/notifications/tool-result
        expect(frame.get_by_role("listitem")).to_have_count(2)
        notes = first.get_by_role("list", name="App notes")
        expect(notes).to_contain_text("The app is initialized")
        expect(notes).to_contain_text(re.compile(r"The result went to the app [\d.]+ ms after it came"))

        frame.get_by_role("button", name="Roll again").click()  # the page's tools/call, relayed
        expect(calls(page, "roll_dice")).to_have_count(2)
        again = calls(page, "roll_dice").first
        expect(again).to_contain_text(re.compile(r"Called by the app of c\d+"))
        second = again.get_by_role("region", name="Result").locator("pre").first
        expect(second).to_contain_text("total")
        expect(frame.get_by_role("status")).to_have_text(second.inner_text())
        expect(page.locator("iframe")).to_have_count(1)  # the app's own call opens no second app
        height = page.locator("iframe").evaluate("frame => frame.getBoundingClientRect().height")
        assert 40 < height < 400, height  # ui/notifications/size-changed followed, not the default 150 px
    assert outside == []


def test_an_inline_page_of_the_everything_server(opened: tuple[Page, list[str]]) -> None:
    page, _ = opened
    with baton_dev("examples/everything.py") as dev:
        page.goto(dev.address)
        call_tool(page, "app_greeting")
        frame = page.frame_locator("iframe[title='App of app_greeting']")
        expect(frame.get_by_role("status")).to_have_text("Hello, world!")


def test_a_hostile_app_reaches_neither_the_token_nor_its_parent_nor_undeclared_origins(
    opened: tuple[Page, list[str]],
) -> None:
    page, outside = opened
    with baton_dev("tests/servers/hostile_app.py") as dev:
        page.goto(dev.address)
        call_tool(page, "probe")
        consent = page.get_by_role("group", name="The app asks to open a link")
        expect(consent).to_contain_text("The app asks to open https://phish.example/login")
        consent.get_by_role("button", name="Refuse").click()
        findings = page.frame_locator("iframe[title='App of probe']").get_by_role("list", name="Findings")
        expect(findings).to_contain_text("probe finished")
        expect(findings).to_contain_text("policy blocked https://other.example/steal")
        expect(findings).to_contain_text("policy blocked http://127.0.0.1")  # the dev API, by the policy
        text = findings.inner_text()
        for line in [
            "origin: null",
            "parent document: blocked",
            "parent address: blocked",
            "top address: blocked",
            "cookies: blocked",
            "storage: blocked",
            "popup: blocked",
            "referrer: blocked",
            "dev API: failed",
            "other.example: failed",
            "allowed.example: reached",  # the one origin it declared
            "model-only tool: refused",
            "open-link: refused",
            "navigate top: blocked",
        ]:
            assert line in text.splitlines(), f"{line!r} not in:\n{text}"
        assert dev.token not in text
        article = calls(page, "probe").first
        expect(article.get_by_role("list", name="App notes")).to_contain_text(
            "Refused the app's tools/call: model_only is not for apps to call"
        )
        expect(page.get_by_role("article", name=re.compile("model_only"))).to_have_count(0)
        expect(page).to_have_url(dev.address)  # the page was not navigated away
    assert outside == ["https://allowed.example/data"], outside


def test_the_official_example_app_from_npm(opened: tuple[Page, list[str]]) -> None:
    """`@modelcontextprotocol/server-basic-vanillajs`: a page built on the official ext-apps `App` class
    initializes with baton dev, shows the result, calls its tool, sends a message and a log, asks for a link."""
    page, outside = opened
    with baton_dev("--", *ensure_app_example(), timeout=60.0) as dev:
        page.goto(dev.address)
        call_tool(page, "get-time")
        first = calls(page, "get-time").first
        said = first.get_by_role("region", name="Result").locator("pre").first
        expect(said).to_contain_text(re.compile(r"^\d{4}-\d\d-\d\dT"))
        frame = page.frame_locator("iframe[title='App of get-time']")
        shown = frame.locator("#server-time")
        expect(shown).to_have_text(said.inner_text())
        frame.get_by_role("button", name="Get Server Time").click()
        expect(calls(page, "get-time")).to_have_count(2)
        again = calls(page, "get-time").first
        expect(again).to_contain_text(re.compile(r"Called by the app of c\d+"))
        expect(shown).to_have_text(again.get_by_role("region", name="Result").locator("pre").first.inner_text())
        notes = page.get_by_role("region", name="App ui://get-time/mcp-app.html").get_by_role("list", name="App notes")
        frame.get_by_role("button", name="Send Message").click()
        expect(notes).to_contain_text("The app sent a message")
        frame.get_by_role("button", name="Send Log").click()
        expect(notes).to_contain_text("App log")
        frame.get_by_role("button", name="Open Link").click()
        consent = page.get_by_role("group", name="The app asks to open a link")
        expect(consent).to_contain_text(re.compile(r"The app asks to open https?://"))
        consent.get_by_role("button", name="Refuse").click()
        expect(notes).to_contain_text("Refused to open")
    assert outside == []
