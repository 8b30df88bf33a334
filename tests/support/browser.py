"""Debian's headless Chromium for the tests, driven by Playwright (no browser download)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from playwright.sync_api import expect, sync_playwright

CHROMIUM = "/usr/bin/chromium"
EXPECT_TIMEOUT_MS = 20_000
# Without the background-networking flags Chromium's own connections are refused by the closed network.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def launched_chromium() -> Iterator[Any]:
    """A running headless Chromium; fails (never skips) when the binary is missing."""
    if not os.path.exists(CHROMIUM):
        pytest.fail(f"{CHROMIUM} is missing: install it with `apt-get install -y chromium`")
    # Under the parallel suite a peer's first start (its venv compiling bytecode) can take well over
    # Playwright's default five seconds; every assertion waits as long as the pages' own timeout.
    expect.set_options(timeout=EXPECT_TIMEOUT_MS)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
