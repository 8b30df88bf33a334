"""`./dev demo`: examples/demo.py runs the whole mission, forms, confirmations and URL mode.

With `--auto` it answers by itself and completes the connect pages over HTTP (no browser), in well
under a minute. At a real terminal (a pty) a person answers: each confirmation takes one `y`, the API
key step shows the full address with its domain highlighted and opens nothing before consent, and the
"browser" (the `BROWSER` the demo's `webbrowser.open` runs records the address; Debian's Chromium then
does what the person would) signs in as the principal the development login suggests and saves a key.
"""

from __future__ import annotations

import os
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.markers import needs
from support.paths import ROOT
from support.terminal import Terminal

DEMO = str(ROOT / "examples" / "demo.py")
USER_KEY = "sk-typed-by-the-user-8d2e"

pytestmark = [
    pytest.mark.skipif(sys.platform == "win32", reason="needs a POSIX pseudo-terminal"),
    pytest.mark.timeout(120),
]


@pytest.mark.process
def test_auto_demo_completes_every_step_including_url_mode() -> None:
    started = time.monotonic()
    done = processes.run(
        [sys.executable, DEMO, "--auto"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
        check=False,
    )
    elapsed = time.monotonic() - started
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    tools = "list_projects, delete_project, contact_support, create_project, release_project, deploy_project"
    assert f"Tools: {tools}" in out
    assert "Deleted apollo." in out and "Ticket opened for Ada Lovelace" in out and "Created hermes-" in out
    # The URL-mode step: the full address of the server's own connect page, consent, the development
    # login's suggestion taken, the key saved on the page, and the tool finishing with it.
    address = re.search(r"Address: (http://127\.0\.0\.1:\d+/connect/[A-Za-z0-9_-]{32})\n", out)
    assert address is not None, out
    assert "suggests 'anonymous'; signing in as anonymous" in out
    assert "Connected." in out
    assert out.rstrip().endswith(
        "Deployed gemini to Acme Cloud for anonymous, with the API key from the server's vault "
        "(24 characters; it never passed through this client)."
    ), out
    assert elapsed < 60, f"the demo took {elapsed:.1f} s"


@pytest.fixture
@needs("process")
def demo_terminal(tmp_path: Path) -> Iterator[tuple[Terminal, Path]]:
    """The demo at a terminal; its `webbrowser.open` runs a `BROWSER` that writes the address to a file."""
    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser.sh"
    browser.write_text(f'#!/bin/sh\necho "$1" >> {opened}\n')
    browser.chmod(0o755)
    term = Terminal([sys.executable, DEMO], env={"BROWSER": str(browser)}, cwd=str(ROOT))
    yield term, opened
    term.close()


START = "Enter = answer): "
PROMPT = "  > "
REVIEW = "Enter sends; or [e]dit / [d]ecline / [c]ancel: "
CONFIRM = "Confirm? [y]es / [n]o: "


def test_demo_at_a_terminal(demo_terminal: tuple[Terminal, Path], chromium: Any) -> None:
    t, opened = demo_terminal
    # delete_project: a confirmation is one answer.
    assert "Delete project apollo? This cannot be undone." in t.answer(CONFIRM, "y")
    t.expect("Deleted apollo.")
    # contact_support: a real form keeps its flow; the defaults are kept with Enter, Enter sends at the review.
    t.answer(START, "")
    for keys in ("Ada Lovelace", "ada@example.com", "", "", ""):
        t.answer(PROMPT, keys)
    assert "Urgency: This week (normal)" in t.answer(REVIEW, "")
    t.expect("Ticket opened for Ada Lovelace <ada@example.com>, urgency normal.")
    # create_project: a form, then a confirmation.
    t.answer(START, "")
    t.answer(PROMPT, "1")
    t.answer(PROMPT, "eu")
    t.answer(REVIEW, "")
    assert "will cost $20 a month. Create it?" in t.answer(CONFIRM, "y")
    t.expect("Created hermes-")
    # deploy_project: URL mode. The full address, its site highlighted; nothing opened before consent.
    shown = t.expect("[o]pen / [d]ecline / [c]ancel: ")
    found = re.search(r"Address: (http://127\.0\.0\.1:\d+/connect/[A-Za-z0-9_-]{32})\n", shown)
    assert found is not None, shown
    url = found[1]
    assert "Connect your Acme Cloud account" in shown and "Site:    127.0.0.1" in shown
    assert "\x1b[1;4;36m127.0.0.1\x1b[0m" in t.raw.decode(errors="replace"), "the site is not highlighted"
    assert not opened.exists(), "a page was opened before the user agreed"
    t.type("o\r")
    t.expect("When you are done in the browser")
    assert opened.read_text().split() == [url]
    # The person's browser: the development login suggests the right principal; they paste a key.
    page = chromium.new_page()
    page.goto(url)
    assert page.input_value("input[name=principal]") == "anonymous"
    with page.expect_navigation():
        page.click("button[type=submit]")
    page.fill("input[name=secret]", USER_KEY)
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert "Connected" in page.content()
    page.close()
    t.answer("[c]ancel: ", "d")
    t.expect("Deployed gemini to Acme Cloud for anonymous")
    assert t.wait() == 0, t.screen
    assert t.screen.count("[y]es / [n]o") == 2, "each confirmation was asked once"
    assert USER_KEY not in t.screen
