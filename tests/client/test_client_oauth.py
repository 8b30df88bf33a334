"""Baton's client logging in (`baton.client.oauth`) over real loopback HTTP: the real Authlib test
authorization server (`tests/servers/oauth_as.py`) and a real `baton serve` protected by it
(`tests/servers/oauth_protected.py`), in both eras.

The "person at the browser" is the AS's `login_hint` shortcut, reached with a real GET; the browser
itself is driven in tests/auth/test_auth_e2e.py. Covered: the 401 → discovery → registration → PKCE login
→ retry path, every later request reusing the token (2026 POSTs; a session's POSTs, GET and DELETE),
step-up with the union of scopes, refresh before a new login, the user-only file store, pre-registered
clients bound to their issuer, a tampered redirect refused before any code exchange, the server moving
to another authorization server, the loopback redirect listener, and `baton call` and `baton dev` logging
in through `$BROWSER`.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest
from playwright.sync_api import expect
from support import processes
from support.dev import baton_dev
from support.markers import needs
from support.oauth import AuthServer, start_as, start_protected
from support.paths import BATON
from support.processes import free_port
from support.serve import RunningServer, start_server

from baton.client import Client, ClientError
from baton.client.oauth import AuthError, FileStore, LoopbackRedirect, MemoryStore, OAuth

REDIRECT = "http://127.0.0.1:9/callback"  # never contacted: the consent below reads the redirect itself
ERAS = ["2026-07-28", "2025-11-25"]


class Consent:
    """The person at the authorization server, without a browser: `login_hint` consents at once as `user`.
    Records every authorization URL it was given; `tamper` may rewrite the redirect before it is returned."""

    def __init__(self, user: str = "alice", tamper: Callable[[str], str] | None = None) -> None:
        self.user = user
        self.tamper = tamper
        self.urls: list[str] = []

    async def __call__(self, url: str) -> str:
        self.urls.append(url)
        async with httpx.AsyncClient(timeout=10) as http:
            resp = await http.get(url + "&" + urlencode({"login_hint": self.user}), follow_redirects=False)
        assert resp.status_code == 302, resp.text
        location = resp.headers["location"]
        return self.tamper(location) if self.tamper else location

    def asked(self, index: int = -1) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(urlsplit(self.urls[index]).query).items()}

    def scopes(self, index: int = -1) -> set[str]:
        return set(self.asked(index).get("scope", "").split())


@pytest.fixture(scope="module")
@needs("process")
def auth_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AuthServer]:
    with start_as(tmp_path_factory.mktemp("as") / "as.log") as running:
        yield running


@pytest.fixture(scope="module")
@needs("process")
def server(auth_server: AuthServer, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_protected(auth_server, tmp_path_factory.mktemp("baton") / "baton.log") as running:
        yield running


def oauth(consent: Consent, store: Any = None, **kw: Any) -> OAuth:
    return OAuth(redirect_uri=REDIRECT, open_browser=consent, store=store or MemoryStore(), **kw)


# -- the login itself ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("era", ERAS)
def test_a_401_leads_to_one_login_and_every_later_request_carries_the_token(
    auth_server: AuthServer, server: RunningServer, era: str
) -> None:
    consent = Consent("alice")
    store = MemoryStore()

    async def main() -> tuple[str, str, list[str], str | None]:
        async with Client(server.url, protocol=era, auth=oauth(consent, store)) as client:  # type: ignore[arg-type]
            first = (await client.call_tool("whoami")).text
            tools = [t.name for t in await client.list_tools()]
            second = (await client.call_tool("whoami")).text
            return first, second, tools, client.era

    first, second, tools, used = asyncio.run(main())
    assert used == era
    assert first == second and first.startswith(f"{auth_server.issuer}|alice")
    assert "whoami" in tools and "write_file" in tools
    assert len(consent.urls) == 1  # one login for everything: probe, handshake, lists, calls, GET, DELETE
    asked = consent.asked()
    assert asked["resource"] == server.url  # exactly the PRM's resource
    assert asked["code_challenge_method"] == "S256" and asked["code_challenge"]
    assert consent.scopes() == {"mcp:read", "offline_access"}  # the challenge's scope, plus offline_access
    assert asked["client_id"] != "public-client"  # no client given: dynamic registration


@pytest.mark.parametrize("era", ERAS)
def test_insufficient_scope_steps_up_with_the_union_of_scopes(
    auth_server: AuthServer, server: RunningServer, era: str
) -> None:
    consent = Consent("bob")

    async def main() -> tuple[str, str]:
        async with Client(server.url, protocol=era, auth=oauth(consent)) as client:  # type: ignore[arg-type]
            before = (await client.call_tool("whoami")).text
            wrote = (await client.call_tool("write_file", {"name": "notes"})).text
            return before, wrote

    before, wrote = asyncio.run(main())
    assert "files:write" not in before
    assert wrote == "wrote notes"
    assert len(consent.urls) == 2
    assert consent.scopes(0) == {"mcp:read", "offline_access"}
    assert consent.scopes(1) == {"mcp:read", "offline_access", "files:write"}  # previous plus challenged


@pytest.mark.process
def test_a_token_that_expired_is_refreshed_without_a_new_login(tmp_path: Path) -> None:
    with (
        start_as(tmp_path / "as.log", "--token-ttl", "2") as short,
        start_protected(short, tmp_path / "baton.log") as srv,
    ):
        consent = Consent("carol")

        async def main() -> list[str]:
            async with Client(srv.url, auth=oauth(consent)) as client:
                texts = [(await client.call_tool("whoami")).text]
                await asyncio.sleep(3)  # the access token has expired; the refresh token has not
                texts.append((await client.call_tool("whoami")).text)
                return texts

        tokens_before = short.stats()["tokens"]
        texts = asyncio.run(main())
        assert all(t.startswith(f"{short.issuer}|carol") for t in texts)
        assert len(consent.urls) == 1
        assert short.stats()["tokens"] == tokens_before + 2  # the code exchange, then the refresh


def test_the_file_store_is_user_only_and_a_later_client_logs_in_without_the_browser(
    auth_server: AuthServer, server: RunningServer, tmp_path: Path
) -> None:
    path = tmp_path / "data" / "client" / "oauth.json"
    first, again = Consent("dave"), Consent("dave")

    async def whoami(consent: Consent) -> str:
        async with Client(server.url, auth=oauth(consent, FileStore(path))) as client:
            return (await client.call_tool("whoami")).text

    assert asyncio.run(whoami(first)).startswith(f"{auth_server.issuer}|dave")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    stored = json.loads(path.read_text())
    assert set(stored) == {f"token {server.url}", f"client {auth_server.issuer}"}
    assert asyncio.run(whoami(again)).startswith(f"{auth_server.issuer}|dave")
    assert again.urls == []  # the stored token was used
    path.chmod(0o644)
    with pytest.raises(AuthError, match="may be read by other users"):
        asyncio.run(whoami(Consent("dave")))


@pytest.mark.parametrize(
    ("client_id", "secret", "method"),
    [("conf-basic", "conf-basic-secret", None), ("conf-post", "conf-post-secret", "client_secret_post")],
)
def test_a_pre_registered_client_authenticates_as_it_was_registered(
    auth_server: AuthServer, server: RunningServer, client_id: str, secret: str, method: str | None
) -> None:
    consent = Consent("erin")

    async def main() -> str:
        auth = oauth(
            consent, client_id=client_id, client_secret=secret, client_auth_method=method, issuer=auth_server.issuer
        )
        async with Client(server.url, auth=auth) as client:
            return (await client.call_tool("whoami")).text

    assert asyncio.run(main()).startswith(f"{auth_server.issuer}|erin")
    assert consent.asked()["client_id"] == client_id


def test_a_pre_registered_client_of_another_authorization_server_is_not_shown_to_this_one(
    auth_server: AuthServer, server: RunningServer
) -> None:
    consent = Consent()

    async def main() -> None:
        auth = oauth(consent, client_id="conf-basic", client_secret="x", issuer="https://elsewhere.example")
        async with Client(server.url, auth=auth) as client:
            await client.call_tool("whoami")

    with pytest.raises(AuthError, match=r"belongs to the authorization server https://elsewhere\.example"):
        asyncio.run(main())
    assert consent.urls == []


@pytest.mark.parametrize(
    ("tamper", "why"),
    [
        (lambda url: url.replace("state=", "state=x"), "state"),
        (lambda url: url.replace("iss=", "iss=https%3A%2F%2Fevil.example&ignored="), "issuer"),
        (lambda url: url.replace("&iss=", "&was_iss="), "iss"),  # this AS says it always sends iss
        (lambda url: url.replace("http://127.0.0.1:9/", "http://127.0.0.1:10/"), "redirect URI"),
    ],
)
def test_a_tampered_redirect_is_refused_before_the_code_is_exchanged(
    auth_server: AuthServer, server: RunningServer, tamper: Callable[[str], str], why: str
) -> None:
    consent = Consent("mallory", tamper=tamper)

    async def main() -> None:
        async with Client(server.url, auth=oauth(consent)) as client:
            await client.call_tool("whoami")

    tokens = auth_server.stats()["tokens"]
    with pytest.raises(AuthError, match=why):
        asyncio.run(main())
    assert auth_server.stats()["tokens"] == tokens  # the code never reached the token endpoint
    assert len(consent.urls) == 1


@pytest.mark.process
def test_a_server_that_moves_to_another_authorization_server_gets_a_new_registration_and_login(
    tmp_path: Path,
) -> None:
    store = MemoryStore()
    consent = Consent("frank")
    port = free_port()

    async def whoami() -> str:
        async with Client(f"http://127.0.0.1:{port}/mcp", auth=oauth(consent, store)) as client:
            return (await client.call_tool("whoami")).text

    with start_as(tmp_path / "as1.log") as first, start_as(tmp_path / "as2.log") as second:
        with start_protected(first, tmp_path / "baton1.log", port):
            assert asyncio.run(whoami()).startswith(f"{first.issuer}|frank")
        with start_protected(second, tmp_path / "baton2.log", port):
            assert asyncio.run(whoami()).startswith(f"{second.issuer}|frank")
    assert [urlsplit(u).netloc for u in consent.urls] == [urlsplit(first.issuer).netloc, urlsplit(second.issuer).netloc]
    old_client, new_client = consent.asked(0)["client_id"], consent.asked(1)["client_id"]
    assert old_client != new_client  # registered again, the first server's client never shown to the second
    assert asyncio.run(store.get(f"client {second.issuer}"))["client_id"] == new_client  # type: ignore[index]


@pytest.mark.process
def test_auth_is_refused_where_it_cannot_apply() -> None:
    consent = Consent()
    with pytest.raises(ValueError, match="stdio"):
        Client([sys.executable, "-c", "pass"], auth=oauth(consent))
    with pytest.raises(ValueError, match="no Authorization header"):
        Client("http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer x"}, auth=oauth(consent))
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuth(redirect_uri="http://example.com/callback", open_browser=consent)
    with pytest.raises(ValueError, match="client_metadata_url"):
        OAuth(redirect_uri=REDIRECT, open_browser=consent, client_metadata_url="http://example.com/c.json")


@pytest.mark.process
def test_a_server_without_auth_never_calls_the_browser(tmp_path: Path) -> None:
    consent = Consent()

    async def main() -> list[str]:
        with start_server("examples/projects.py", log=tmp_path / "plain.log") as plain:
            async with Client(plain.url, auth=oauth(consent)) as client:
                return [t.name for t in await client.list_tools()]

    assert asyncio.run(main())
    assert consent.urls == []


def test_a_login_that_fails_is_a_client_error_naming_the_cause(auth_server: AuthServer, server: RunningServer) -> None:
    async def refuse(url: str) -> str:
        raise RuntimeError("the person closed the window")

    async def main() -> None:
        auth = OAuth(redirect_uri=REDIRECT, open_browser=refuse)
        async with Client(server.url, auth=auth) as client:
            await client.call_tool("whoami")

    with pytest.raises(ClientError, match="not completed: the person closed the window"):
        asyncio.run(main())


# -- the loopback redirect listener ---------------------------------------------------------------------------


@pytest.mark.process  # the listener is Baton's own, on a real loopback socket
def test_the_loopback_listener_returns_the_redirect_and_serves_nothing_else() -> None:
    shown: list[str] = []

    def browse(url: str) -> None:
        # another program (or a page in the browser) gets to the listener first, with a forged callback
        for forged in ("?code=x&state=forged", "?code=x", "?code=x&state=s1&state=s2"):
            assert httpx.get(listener.redirect_uri + forged, timeout=5).status_code == 400
        # what a browser does after the person consents: the authorization server redirects it here
        target = f"{listener.redirect_uri}?code=abc&state=s1"
        assert httpx.get(f"http://127.0.0.1:{listener.port}/other", timeout=5).status_code == 404
        page = httpx.get(target, timeout=5)
        assert page.status_code == 200 and "close this tab" in page.text
        assert page.headers["cache-control"] == "no-store"
        # a page's security headers (baton.web), with a policy that loads nothing
        assert page.headers["content-security-policy"] == "default-src 'none'"
        assert page.headers["referrer-policy"] == "no-referrer"
        assert (page.headers["x-frame-options"], page.headers["x-content-type-options"]) == ("DENY", "nosniff")
        assert "abc" not in page.text  # nothing of the request is echoed back

    listener = LoopbackRedirect(show=shown.append, opener=browse)

    async def main() -> str:
        try:
            return await listener("https://as.example/authorize?x=1&state=s1")
        finally:
            await listener.aclose()

    assert asyncio.run(main()) == f"{listener.redirect_uri}?code=abc&state=s1"
    assert shown == ["https://as.example/authorize?x=1&state=s1"]
    assert listener.redirect_uri.startswith("http://127.0.0.1:")


# -- the command line -------------------------------------------------------------------------------------------

BROWSER_SCRIPT = """\
import sys, httpx
open(sys.argv[2], "a").write("opened\\n")
resp = httpx.get(sys.argv[1] + "&login_hint=gina", follow_redirects=False, timeout=10)
httpx.get(resp.headers["location"], timeout=10)
"""


def test_baton_call_logs_in_through_the_browser_and_keeps_the_token_for_the_next_command(
    auth_server: AuthServer, server: RunningServer, tmp_path: Path
) -> None:
    script, opened = tmp_path / "browser.py", tmp_path / "opened.txt"
    script.write_text(BROWSER_SCRIPT)
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data"), "BROWSER": f"{sys.executable} {script} %s {opened}"}

    def baton(*args: str) -> subprocess.CompletedProcess[str]:
        return processes.run([BATON, *args], env=env, capture_output=True, text=True, timeout=60, check=False)

    done = baton("call", server.url, "whoami")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"{auth_server.issuer}|gina")
    assert "Address: http://127.0.0.1" in done.stderr and "/authorize?" in done.stderr  # shown before it opened
    assert opened.read_text().count("opened") == 1
    store = tmp_path / "data" / "client" / "oauth.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    assert json.loads(store.read_text())[f"token {server.url}"]["access_token"] not in done.stderr + done.stdout

    again = baton("tools", server.url)
    assert again.returncode == 0 and "whoami" in again.stdout
    assert opened.read_text().count("opened") == 1  # the stored token: no browser

    memory_only = baton("call", "--no-token-store", server.url, "whoami")
    assert memory_only.returncode == 0, memory_only.stderr
    assert opened.read_text().count("opened") == 2


def test_ctrl_c_while_waiting_for_the_login_exits_130_without_a_traceback(
    server: RunningServer, tmp_path: Path
) -> None:
    """A browser that never comes back: Ctrl-C ends the wait at once, no KeyboardInterrupt traceback (issue 24)."""
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data"), "BROWSER": "true %s"}
    proc = processes.popen(
        [BATON, "call", "--timeout", "2", server.url, "whoami"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    seen = ""
    while "Waiting for the sign-in" not in seen:
        line = proc.stderr.readline()
        assert line, f"the command ended before the login: {seen}"
        seen += line
    time.sleep(3)  # past --timeout: the person's time at the browser is not the server's
    assert proc.poll() is None, "the deadline counted the login"
    proc.send_signal(signal.SIGINT)
    _, rest = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in rest and "KeyboardInterrupt" not in rest


def test_the_login_snippet_of_client_md_runs_as_printed(
    auth_server: AuthServer, server: RunningServer, tmp_path: Path
) -> None:
    section = (Path(__file__).parents[2] / "docs" / "client.md").read_text().split("## Logging in (OAuth)", 1)[1]
    snippet = re.findall(r"```python\n(.*?)```", section.split("\n## ", 1)[0], re.S)[0]  # the browser login's
    program = tmp_path / "snippet.py"
    program.write_text(snippet.replace("https://mcp.example.com/mcp", server.url))
    script, opened = tmp_path / "browser.py", tmp_path / "opened.txt"
    script.write_text(BROWSER_SCRIPT)
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data"), "BROWSER": f"{sys.executable} {script} %s {opened}"}
    done = processes.run(
        [sys.executable, str(program)], env=env, capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "Signing in at http://127.0.0.1:" in done.stdout
    assert f"{auth_server.issuer}|gina" in done.stdout
    assert (tmp_path / "data" / "client" / "oauth.json").exists()


@pytest.mark.parametrize(
    ("content", "mode", "why"), [("{}", 0o644, "may be read by other users"), ("{", 0o600, "not JSON")]
)
def test_a_broken_token_store_breaks_only_the_logins_of_the_command_line(
    auth_server: AuthServer, server: RunningServer, tmp_path: Path, content: str, mode: int, why: str
) -> None:
    store = tmp_path / "data" / "client" / "oauth.json"
    store.parent.mkdir(parents=True, mode=0o700)
    store.write_text(content)
    store.chmod(mode)
    script, opened = tmp_path / "browser.py", tmp_path / "opened.txt"
    script.write_text(BROWSER_SCRIPT)
    env = {**os.environ, "BATON_DATA_DIR": str(tmp_path / "data"), "BROWSER": f"{sys.executable} {script} %s {opened}"}

    def baton(*args: str) -> subprocess.CompletedProcess[str]:
        return processes.run([BATON, *args], env=env, capture_output=True, text=True, timeout=60, check=False)

    with start_server("examples/projects.py", log=tmp_path / "plain.log") as plain:
        unprotected = baton("tools", plain.url)
    assert unprotected.returncode == 0, unprotected.stderr  # a server that needs no login works
    assert why in unprotected.stderr  # with a warning
    protected_run = baton("call", server.url, "whoami")
    assert protected_run.returncode == 1
    assert why in protected_run.stderr
    assert not opened.exists()  # refused before the browser: the login could not be kept


def test_baton_dev_logs_in_as_baton_tools_does(
    auth_server: AuthServer, server: RunningServer, tmp_path: Path, chromium: Any
) -> None:
    """`baton dev URL` on a protected server: the same browser login and token store as `baton tools`."""
    script, opened = tmp_path / "browser.py", tmp_path / "opened.txt"
    script.write_text(BROWSER_SCRIPT)
    env = {"BATON_DATA_DIR": str(tmp_path / "data"), "BROWSER": f"{sys.executable} {script} %s {opened}"}
    context = chromium.new_context()
    try:
        with baton_dev(server.url, env=env) as dev:
            page = context.new_page()
            page.goto(dev.address)
            expect(page.get_by_role("region", name="Tools")).to_contain_text("whoami", timeout=30_000)
            page.locator("details.item", has=page.get_by_text("whoami", exact=True)).locator("summary").first.click()
            page.get_by_role("button", name="Call").first.click()
            expect(page.get_by_role("region", name="Result")).to_contain_text(f"{auth_server.issuer}|gina")
            page.get_by_text("Raw exchange").click()
            token = json.loads((tmp_path / "data" / "client" / "oauth.json").read_text())[f"token {server.url}"]
            expect(page.get_by_label("Messages")).to_contain_text('"method": "tools/call"')
            assert token["access_token"] not in page.content()
    finally:
        context.close()
    assert opened.read_text().count("opened") == 1
