"""`baton dev` in real headless Chromium, driven by visible text and ARIA roles, against real servers.

Each test starts `baton dev` as a subprocess (tests/support/dev.py) on a target: a server file (run as
its child over stdio), a URL of a `baton serve` on loopback, or `-- COMMAND` for the `mcp` 1.30 peer.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect
from support.dev import baton_dev
from support.paths import ROOT
from support.peer_venvs import ensure_venv, peer_env
from support.processes import free_port
from support.serve import start_server

EVERYTHING = "examples/everything.py"
FLOWS = "tests/servers/dev_flows.py"


@pytest.fixture
def page(chromium: Any) -> Iterator[Page]:
    context = chromium.new_context()
    opened: list[str] = []

    def outside(route: Any) -> None:  # nothing leaves this machine: a page the person opens is a stub
        opened.append(route.request.url)
        route.fulfill(status=200, content_type="text/html", body="<p>a stub of the page the server named</p>")

    context.route(re.compile(r"^(?!http://127\.0\.0\.1[:/])"), outside)
    page = context.new_page()
    page.set_default_timeout(20_000)
    yield page
    context.close()


def tool(page: Page, name: str) -> Any:
    """The tool's entry, opened."""
    item = page.locator("details.item").filter(has=page.get_by_text(name, exact=True))
    item.locator("summary").first.click()
    return item


def call(page: Page, name: str) -> Any:
    """The newest call's article."""
    escaped = re.escape(name).replace("/", "\\/")  # Playwright's selector reads a regex between slashes
    return page.get_by_role("article", name=re.compile(rf"^Call c\d+: \S+ {escaped}$")).first


def first_round(page: Page) -> tuple[Any, Any]:
    """Call the two-round flow and answer its first question: its tool entry and its call."""
    item = tool(page, "test_input_required_result_multi_round")
    item.get_by_role("button", name="Call").click()
    flow = call(page, "test_input_required_result_multi_round")
    first = flow.get_by_role("region", name="Question: What is your name?")
    first.get_by_role("textbox", name="name (required)").fill("Alice")
    first.get_by_role("button", name="Send").click()
    return item, flow


def test_a_two_round_form_flow_shows_each_round(page: Page) -> None:
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("status").first).to_contain_text("protocol version 2026-07-28")
        _, flow = first_round(page)
        second = flow.get_by_role("region", name="Question: What is your favorite color?")
        second.get_by_role("textbox", name="color (required)").fill("blue")
        second.get_by_role("button", name="Send").click()
        expect(flow.get_by_role("region", name="Result")).to_contain_text("Alice likes blue")
        timeline = flow.get_by_role("list", name="Timeline")
        expect(timeline).to_contain_text(
            re.compile(r"Round 1: input_required \(1 ask: form \"What is your name\?\"\), requestState \d+ bytes")
        )
        expect(timeline).to_contain_text(re.compile(r"Round 3: complete, [\d.]+ ms"))
        expect(flow).to_contain_text("Finished in")
        flow.get_by_text("Raw exchange").click()
        messages = flow.get_by_label("Messages")
        expect(messages).to_contain_text('"inputResponses"')
        expect(messages).to_contain_text('"requestState"')


def test_an_invalid_value_is_refused_in_the_page(page: Page) -> None:
    with baton_dev(FLOWS) as dev:
        page.goto(dev.address)
        item = tool(page, "sign_up")
        item.get_by_role("textbox", name="team (required)").fill("Ops")
        item.get_by_role("button", name="Call").click()
        ask = call(page, "sign_up").get_by_role("region", name="Question: Sign up team Ops")
        ask.get_by_role("textbox", name="Email (required)").fill("not an address")
        ask.get_by_role("spinbutton", name="Seats (required)").fill("9")
        ask.get_by_role("button", name="Send").click()
        expect(ask.get_by_role("alert")).to_contain_text(re.compile(r"Email \(required\): .+ Seats \(required\): "))
        expect(ask).to_be_visible()  # still asking: nothing was sent
        expect(call(page, "sign_up").get_by_role("list", name="Timeline")).not_to_contain_text("Sent")
        ask.get_by_role("textbox", name="Email (required)").fill("ops@example.com")
        ask.get_by_role("button", name="Send").click()
        expect(ask.get_by_role("alert")).not_to_contain_text("Email")
        expect(ask.get_by_role("alert")).to_contain_text("Seats")
        ask.get_by_role("spinbutton", name="Seats (required)").fill("2")
        ask.get_by_role("combobox", name="Plan").select_option(label="pro")
        ask.get_by_role("button", name="Send").click()
        link = call(page, "sign_up").get_by_role("region", name="Question: Set up billing in your browser")
        expect(link).to_contain_text("Address: https://billing.example.com/setup")
        expect(link).to_contain_text("Site: example.com")
        expect(link.get_by_role("list", name="URL check")).to_contain_text("found nothing wrong")
        expect(link.get_by_role("button", name="Done")).to_be_hidden()  # nothing opens before the click
        with page.context.expect_page() as opened:
            link.get_by_role("button", name="Open").click()
        expect(opened.value.get_by_text("a stub of the page the server named")).to_be_visible()
        assert opened.value.url == "https://billing.example.com/setup"
        link.get_by_role("button", name="Done").click()
        result = call(page, "sign_up").get_by_role("region", name="Result")
        expect(result).to_contain_text("Ops: ops@example.com, 2 seats, pro; billing opened")


def test_decline_and_cancel(page: Page) -> None:
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        item = tool(page, "perform")
        for button in ("Decline", "Cancel"):
            item.get_by_role("textbox", name="action (required)").fill(f"deploy-{button}")
            item.get_by_role("button", name="Call").click()
            flow = call(page, "perform")
            ask = flow.get_by_role("region", name=f"Question: Really perform 'deploy-{button}'?")
            ask.get_by_role("button", name=button).click()
            expect(flow.get_by_role("region", name="Result")).to_contain_text(f"not confirmed: deploy-{button}")
            said = {"Decline": "Declined", "Cancel": "Cancelled"}[button]
            expect(flow.get_by_role("list", name="Timeline")).to_contain_text(f'{said}: "Really perform')


def test_progress_logs_structured_and_error_results(page: Page) -> None:
    with baton_dev(FLOWS) as dev:
        page.goto(dev.address)
        tool(page, "slow_count").get_by_role("button", name="Call").click()
        flow = call(page, "slow_count")
        expect(flow.get_by_role("progressbar", name="Progress")).to_be_visible()
        expect(flow.get_by_role("region", name="Result")).to_contain_text("counted to 3")
        expect(flow).to_contain_text("3 of 3 step 3")
        expect(flow.get_by_role("list", name="Timeline")).to_contain_text("Log info")
        tool(page, "count").get_by_role("button", name="Call").click()
        expect(call(page, "count").get_by_role("region", name="Result")).to_contain_text(
            "structuredContent matches the outputSchema."
        )
        tool(page, "fails").get_by_role("button", name="Call").click()
        failed = call(page, "fails").get_by_role("region", name="Result")
        expect(failed.get_by_role("alert")).to_contain_text("The tool reported an error (isError).")


def test_a_server_over_http(page: Page, serve: Any) -> None:
    server = serve(EVERYTHING)
    with baton_dev(f"http://127.0.0.1:{server.port}/mcp") as dev:
        page.goto(dev.address)
        expect(page.get_by_role("status").first).to_contain_text("protocol version 2026-07-28")
        page.get_by_role("region", name="Resources").get_by_text("static-text", exact=True).click()
        page.get_by_role("region", name="Resources").get_by_role("button", name="Read").first.click()
        expect(call(page, "test://static-text").get_by_role("region", name="Result")).to_contain_text(
            "This is the content"
        )


def test_reload_after_an_edit(page: Page, tmp_path: Path) -> None:
    source = editable(tmp_path, "before")
    with baton_dev(str(source), cwd=tmp_path) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("region", name="Tools")).to_contain_text("before")
        source.write_text(_EDITABLE.format(name="after"))
        expect(page.get_by_role("region", name="Tools")).to_contain_text("after", timeout=30_000)
        expect(page.get_by_role("region", name="Tools")).not_to_contain_text("before")
        tool(page, "after").get_by_role("button", name="Call").click()
        expect(call(page, "after").get_by_role("region", name="Result")).to_contain_text("after")


def editable(folder: Path, name: str) -> Path:
    """A server file in `folder` with one tool, `name`: the file `baton dev` runs and the test edits."""
    source = folder / "editable.py"
    source.write_text(_EDITABLE.format(name=name))
    return source


_EDITABLE = """
from baton import Server

server = Server("editable")


@server.tool()
def {name}() -> str:
    return "{name}"
"""


def test_a_2025_11_25_server_started_with_a_command(page: Page) -> None:
    python = ensure_venv("mcp1")
    with baton_dev("--", str(python), str(ROOT / "peers" / "legacy_mcp1_server.py"), "--stdio", env=peer_env()) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("status").first).to_contain_text("protocol version 2025-11-25")
        expect(page.get_by_role("region", name="Server")).to_contain_text("legacy-mcp1-peer")
        item = tool(page, "book")
        item.get_by_role("textbox", name="city (required)").fill("Oslo")
        item.get_by_role("button", name="Call").click()
        flow = call(page, "book")
        ask = flow.get_by_role("region", name="Question: Book a stay in Oslo?")
        ask.get_by_role("spinbutton", name=re.compile("^Nights")).fill("3")
        ask.get_by_role("checkbox", name=re.compile("^Confirm")).check()
        ask.get_by_role("button", name="Send").click()
        expect(flow.get_by_role("region", name="Result")).to_contain_text("booked: Oslo for 3 nights")
        timeline = flow.get_by_role("list", name="Timeline")
        expect(timeline).to_contain_text('The server asked: form "Book a stay in Oslo?"')
        flow.get_by_text("Raw exchange").click()
        expect(flow.get_by_label("Messages")).to_contain_text('"method": "elicitation/create"')


def test_list_changes_refresh_the_lists_and_prompts_offer_completions(page: Page) -> None:
    with baton_dev(FLOWS) as dev:
        page.goto(dev.address)
        tools = page.get_by_role("region", name="Tools")
        expect(tools).to_contain_text("grow")
        tool(page, "grow").get_by_role("button", name="Call").click()
        expect(call(page, "grow").get_by_role("region", name="Result")).to_contain_text("added a tool")
        expect(tools.get_by_text("grown", exact=True)).to_be_visible()
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        prompt = tool(page, "test_prompt_with_arguments")
        first = prompt.get_by_role("combobox", name=re.compile("^arg1"))  # a text box with suggestions
        first.fill("g")
        expect(page.locator(f"datalist#{first.get_attribute('id')}-completions option")).to_have_attribute(
            "value", "gamma"
        )
        first.fill("gamma")
        prompt.get_by_role("combobox", name=re.compile("^arg2")).fill("b")
        prompt.get_by_role("button", name="Get").click()
        expect(call(page, "test_prompt_with_arguments").get_by_role("region", name="Result")).to_contain_text(
            "Prompt with arguments: arg1='gamma', arg2='b'"
        )


def test_the_screenshot_in_the_docs(page: Page, tmp_path: Path) -> None:
    """The picture README and the tutorial show: a two-round flow waiting for its second answer.

    Written to docs/images/baton-dev.png when BATON_UPDATE_SCREENSHOTS=1, else to a temporary file."""
    target = (
        ROOT / "docs" / "images" / "baton-dev.png"
        if os.environ.get("BATON_UPDATE_SCREENSHOTS")
        else tmp_path / "shot.png"
    )
    page.set_viewport_size({"width": 1280, "height": 860})
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        item, flow = first_round(page)
        expect(flow.get_by_role("region", name="Question: What is your favorite color?")).to_be_visible()
        item.locator("summary").first.click()  # closed again, so that the calls fill the picture
        page.screenshot(path=str(target))
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert target.stat().st_size > 10_000


def test_deprecated_sampling_is_shown_as_such(page: Page) -> None:
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        tool(page, "test_input_required_result_sampling").get_by_role("button", name="Call").click()
        flow = call(page, "test_input_required_result_sampling")
        expect(flow.get_by_role("list", name="Timeline")).to_contain_text("sampling/createMessage (deprecated)")
        model = flow.get_by_role("region", name="Question: sampling")
        expect(model).to_contain_text("deprecated: sampling")
        expect(model).to_contain_text("What is the capital of France?")
        model.get_by_role("textbox", name="Reply as the model").fill("Paris")
        model.get_by_role("button", name="Send").click()
        expect(flow.get_by_role("region", name="Result")).to_contain_text("The model answered: Paris")
        expect(flow.get_by_role("list", name="Timeline")).to_contain_text('Sent: reply = "Paris"')


def test_the_page_declares_no_roots_so_nothing_warns_of_them(page: Page) -> None:
    """The page has no roots to give: its client does not declare them, so the server never warns that a
    client declared deprecated roots, and a tool that asks for them fails saying so."""
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("status").first).to_contain_text("protocol version 2026-07-28")  # where it warns
        tool(page, "test_input_required_result_list_roots").get_by_role("button", name="Call").click()
        flow = call(page, "test_input_required_result_list_roots")
        expect(flow.get_by_role("alert").first).to_contain_text("-32021")
        expect(flow).to_contain_text("needs the client's roots (MCP roots), which this client does not share")
        _, err = dev.interrupt()
    assert "serving 'baton-everything' on stdio" in err, err  # the server's stderr did reach this one
    assert "'roots' capability" not in err, err


def test_the_timeline_shows_the_answers_sent_with_secrets_masked(page: Page) -> None:
    with baton_dev(FLOWS) as dev:
        page.goto(dev.address)
        tool(page, "deploy").get_by_role("button", name="Call").click()
        flow = call(page, "deploy")
        ask = flow.get_by_role("region", name="Question: Where to deploy?")
        ask.get_by_role("textbox", name="Target (required)").fill("staging")
        ask.get_by_label("API key (required)").fill("sk-live-123")
        ask.get_by_role("button", name="Send").click()
        expect(flow.get_by_role("region", name="Result")).to_contain_text("deployed to staging")
        expect(flow.get_by_role("list", name="Timeline")).to_contain_text(
            'Sent: target = "staging", api_key = "••••••" (answering "Where to deploy?")'
        )
        expect(flow).not_to_contain_text("sk-live-123")


def test_a_handlers_traceback_is_shown_with_its_call(page: Page) -> None:
    with baton_dev(FLOWS) as dev:
        page.goto(dev.address)
        tool(page, "fails").get_by_role("button", name="Call").click()
        output = call(page, "fails").get_by_label("Server output")
        expect(output).to_contain_text("Traceback (most recent call last)")
        expect(output).to_contain_text("RuntimeError: the tool failed on purpose")


def test_a_file_that_does_not_load_shows_why_in_the_page(page: Page, tmp_path: Path) -> None:
    source = tmp_path / "broken.py"
    source.write_text("this is not Python (\n")
    with baton_dev(str(source), cwd=tmp_path) as dev:
        page.goto(dev.address)
        why = page.get_by_role("region", name="Why the server did not start")
        expect(why).to_contain_text("broken.py cannot be loaded; the error is in its code")
        expect(why).to_contain_text("SyntaxError: '(' was never closed")
        source.write_text(_EDITABLE.format(name="mended"))
        expect(page.get_by_role("region", name="Tools")).to_contain_text("mended", timeout=30_000)
        expect(why).to_be_hidden()


def test_the_page_has_an_icon_and_no_request_of_it_is_refused(page: Page) -> None:
    """The icon the page names and the one a browser asks for unprompted (`/favicon.ico`) both load, without
    the token: a refused favicon is a console error on every load."""
    refused: list[str] = []
    page.on("response", lambda r: refused.append(f"{r.status} {r.url}") if r.status >= 400 else None)
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("status").first).to_contain_text("Connected to")
        named = page.locator("link[rel=icon]").evaluate("link => link.href")
        for address in (named, f"{dev.origin}/favicon.ico"):
            icon = page.request.get(address)
            assert (icon.status, icon.headers["content-type"]) == (200, "image/svg+xml"), address
    assert refused == []


def test_empty_lists_read_the_same_for_baton_and_other_servers(page: Page, tmp_path: Path) -> None:
    source = editable(tmp_path, "only_a_tool")
    with baton_dev(str(source), cwd=tmp_path) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("region", name="Tools")).to_contain_text("only_a_tool")
        for region, said in (
            ("Prompts", "prompts"),
            ("Resources", "resources"),
            ("Resource templates", "resource templates"),
        ):
            expect(page.get_by_role("region", name=region)).to_contain_text(f"This server offers no {said}.")
    python = ensure_venv("mcp1")
    with baton_dev("--", str(python), str(ROOT / "peers" / "legacy_mcp1_server.py"), "--stdio", env=peer_env()) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("region", name="Tools")).to_contain_text("book")
        expect(page.get_by_role("region", name="Prompts")).to_contain_text("This server offers no prompts.")


def test_a_broken_edit_is_reported_and_the_next_save_recovers(page: Page, tmp_path: Path) -> None:
    source = editable(tmp_path, "first")
    with baton_dev(str(source), cwd=tmp_path) as dev:
        page.goto(dev.address)
        expect(page.get_by_role("region", name="Tools")).to_contain_text("first")
        source.write_text("this is not Python\n")
        status = page.get_by_role("status").first
        expect(status).to_contain_text("cannot connect to", timeout=30_000)
        expect(status).to_contain_text("save a change to the file to try again")
        source.write_text(_EDITABLE.format(name="second"))
        expect(status).to_contain_text("Connected to editable", timeout=30_000)
        expect(page.get_by_role("region", name="Tools")).to_contain_text("second")


def test_results_show_text_images_audio_and_embedded_resources(page: Page) -> None:
    with baton_dev(EVERYTHING) as dev:
        page.goto(dev.address)
        tool(page, "test_multiple_content_types").get_by_role("button", name="Call").click()
        result = call(page, "test_multiple_content_types").get_by_role("region", name="Result")
        expect(result).to_contain_text("Multiple content types test:")
        image = result.get_by_role("img", name=re.compile(r"^image \(image\/png, about \d+ bytes\)$"))
        expect(image).to_be_visible()
        assert image.evaluate("img => img.complete && img.naturalWidth") == 1  # the 1x1 PNG, decoded
        expect(result).to_contain_text("Embedded resource: test://mixed-content-resource")
        expect(result).to_contain_text('{"test": "data", "value": 123}')
        tool(page, "test_audio_content").get_by_role("button", name="Call").click()
        audio = call(page, "test_audio_content").get_by_role("region", name="Result").locator("audio")
        expect(audio).to_have_attribute("aria-label", re.compile(r"^audio \(audio\/wav, about \d+ bytes\)$"))
        page.get_by_role("region", name="Resources").get_by_text("static-binary", exact=True).click()
        page.locator("details.item", has=page.get_by_text("static-binary", exact=True)).get_by_role(
            "button", name="Read"
        ).click()
        expect(call(page, "test://static-binary").get_by_role("img")).to_be_visible()


@pytest.mark.parametrize("elicitation", ["none", "form"])
def test_dev_acts_as_a_host_without_elicitation(page: Page, tmp_path: Path, elicitation: str) -> None:
    """`baton dev --elicitation none|form` declares only those modes (P148): the demo's page-rung tools answer
    with the link to the server's own page, as they would in such a host."""
    port = free_port()
    env = {"BATON_PUBLIC_URL": f"http://127.0.0.1:{port}", "BATON_LEDGER": "memory:", "BATON_CONNECT_STORE": "memory:"}
    demo = str(ROOT / "examples" / "demo.py") + ":demo_server"
    tool_name, argument = ("delete_project", "apollo") if elicitation == "none" else ("deploy_project", "gemini")
    with (
        start_server(demo, port=port, log=tmp_path / "server.log", env=env) as server,
        baton_dev(server.url, "--elicitation", elicitation) as dev,
    ):
        page.goto(dev.address)
        item = tool(page, tool_name)
        item.get_by_role("textbox", name="project_id (required)").fill(argument)
        item.get_by_role("button", name="Call").click()
        result = call(page, tool_name).get_by_role("region", name="Result")
        expect(result).to_contain_text(f"Tool {tool_name} is waiting for the user")
        expect(result).to_contain_text(re.compile(rf"http://127\.0\.0\.1:{port}/connect/[A-Za-z0-9_-]{{32}}"))
