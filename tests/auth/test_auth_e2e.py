"""The acceptance test of logging in: Baton's client logs in through the real Authlib authorization server
(`tests/servers/oauth_as.py`) in real headless Chromium, to a Baton server protected by that server
(`tests/servers/oauth_connect.py`), and completes a tool that asks the user that needs a connect-kit API key
(URL mode) and one that asks the user (a form, after a step-up login for the scope it needs), in
both eras.

The client runs in its own thread with its own event loop; Playwright's sync API stays on the test's
thread, which does the browser work the client's callbacks hand it: the OAuth login (the browser goes
to the authorization URL, the person types a name and presses Allow, the authorization server
redirects to the client's `LoopbackRedirect` on 127.0.0.1) and the connect page (the kit's
development login as the OAuth principal, then the API key form).
"""

from __future__ import annotations

import asyncio
import hashlib
import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from support.oauth import start_as
from support.paths import SERVERS
from support.processes import free_port
from support.serve import start_server

from baton.client import Accepted, Answer, Client, Question
from baton.client.oauth import LoopbackRedirect, MemoryStore, OAuth

API_KEY = "wk-e2e-7d1f0c8a9b"
BROWSER_WAIT_S = 60


class BrowserDesk:
    """Browser work asked for by the client's thread, done on the test's thread (Playwright's)."""

    def __init__(self, page: Any) -> None:
        self.page = page
        self.jobs: queue.Queue[tuple[Callable[[Any], Any], dict[str, Any], threading.Event] | None] = queue.Queue()

    def do(self, work: Callable[[Any], Any]) -> Any:
        """From the client's thread: run `work(page)` on the test's thread and wait for it."""
        box: dict[str, Any] = {}
        done = threading.Event()
        self.jobs.put((work, box, done))
        if not done.wait(BROWSER_WAIT_S):
            raise TimeoutError("the browser work did not finish")
        if "error" in box:
            raise box["error"]
        return box.get("value")

    def serve(self, client: threading.Thread) -> None:
        """On the test's thread: do the jobs until the client's thread is finished."""
        while True:
            job = self.jobs.get(timeout=BROWSER_WAIT_S * 3)
            if job is None:
                return
            work, box, done = job
            try:
                box["value"] = work(self.page)
            except BaseException as exc:
                box["error"] = exc
            finally:
                done.set()


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_the_client_logs_in_in_chromium_and_completes_a_form_and_a_connect_kit_key(
    chromium: Any, tmp_path: Path, era: str
) -> None:
    port = free_port()
    with start_as(tmp_path / "as.log") as auth_server:
        env = {
            "BATON_TEST_ISSUER": auth_server.issuer,
            "BATON_TEST_RESOURCE": f"http://127.0.0.1:{port}/mcp",
            "BATON_TEST_PUBLIC_URL": f"http://127.0.0.1:{port}",
        }
        with start_server(str(SERVERS / "oauth_connect.py"), port=port, log=tmp_path / "baton.log", env=env) as srv:
            context = chromium.new_context()
            desk = BrowserDesk(context.new_page())
            principal = f"{auth_server.issuer}|alice"
            shown: list[str] = []
            forms: list[str] = []
            outcome: dict[str, Any] = {}

            def sign_in(page: Any, url: str) -> None:
                """The person at the authorization server's page: types a name and presses Allow."""
                page.goto(url)
                page.fill("#username", "alice")
                with page.expect_navigation(url=f"{loopback.redirect_uri}**"):
                    page.click("#allow")
                assert "close this tab" in page.content()

            def connect(page: Any, url: str) -> None:
                """The person on the connect kit's page: signs in (development login), gives the API key."""
                page.goto(url)
                if "/connect/login" in page.url:
                    page.fill("input[name=principal]", principal)
                    with page.expect_navigation():
                        page.click("button[type=submit]")
                page.fill("input[name=secret]", API_KEY)
                with page.expect_navigation():
                    page.click("button[type=submit]")
                assert "Connected" in page.content()

            loopback = LoopbackRedirect(show=shown.append, opener=lambda url: desk.do(lambda page: sign_in(page, url)))

            async def on_form(question: Question) -> Answer:
                forms.append(question.message)
                return Accepted({"confirm": True})

            async def on_url(question: Question) -> Answer:
                assert question.url is not None
                url = question.url
                await asyncio.to_thread(desk.do, lambda page: connect(page, url))
                return Accepted(None)

            async def client_main() -> None:
                auth = OAuth(redirect_uri=loopback.redirect_uri, open_browser=loopback, store=MemoryStore())
                try:
                    async with Client(srv.url, protocol=era, auth=auth, on_form=on_form, on_url=on_url) as client:  # type: ignore[arg-type]
                        outcome["weather"] = (await client.call_tool("weather", {"city": "Oslo"})).text
                        outcome["order"] = (await client.call_tool("order", {"item": "a book"})).text
                        outcome["era"] = client.era
                finally:
                    await loopback.aclose()

            def run_client() -> None:
                try:
                    asyncio.run(client_main())
                except BaseException as exc:
                    outcome["error"] = exc
                finally:
                    desk.jobs.put(None)

            thread = threading.Thread(target=run_client, name="baton-client")
            thread.start()
            try:
                desk.serve(thread)
            finally:
                thread.join(timeout=30)
                context.close()
            if "error" in outcome:
                raise outcome["error"]

            assert outcome["era"] == era
            assert outcome["order"] == f"ordered a book for {principal}"
            assert forms == ["Order a book?"]
            digest = hashlib.sha256(API_KEY.encode()).hexdigest()[:16]
            assert outcome["weather"] == f"weather in Oslo for {principal}, key digest {digest}"
            # Two logins in Chromium: the first for what the 401 asked (mcp:read), then a step-up for files:write.
            scopes = [set(parse_qs(urlsplit(url).query)["scope"][0].split()) for url in shown]
            assert scopes == [{"mcp:read", "offline_access"}, {"mcp:read", "offline_access", "files:write"}]
            assert API_KEY not in srv.log.read_text()
