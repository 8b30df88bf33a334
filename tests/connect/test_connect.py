"""The connect kit (design.md §6): `ctx.secret` over a real `baton serve`, driven in real headless Chromium.

Alice's key reaches the tool only through her own browser session; Bob, a forwarded link, a reused or
tampered ticket, a POST without the session or without the CSRF token all fail; the key never appears
in an MCP message or in the server log. Unit tests cover the stores, the vault and the cookies.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.util
import os
import sys
from collections.abc import Coroutine, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.markers import needs
from support.paths import ROOT, SERVERS
from support.processes import PortOpen, free_port, start
from support.serve import RunningServer, start_server
from wire import call

from baton import KeyRing
from baton.connect import MemoryTickets, MemoryVaultStore, Sessions, SqliteTickets, SqliteVaultStore, Vault, VaultError
from baton.connect.tickets import mint, well_formed

URL_CAPS = {"elicitation": {"url": {}}}
ALICE_KEY = "sk-alice-7f3e9c2b1d0a4e5f8a6b"
BOB_KEY = "sk-bob-0a1b2c3d4e5f60718293"


def run_async(coro: Coroutine[Any, Any, None]) -> None:
    """asyncio.run on its own thread: Playwright's sync API keeps a loop running on this one."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(asyncio.run, coro).result()


def digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()[:16]


# -- fixtures ---------------------------------------------------------------------------------------


class Mcp:
    """Tool calls over the wire, every request and response body kept for inspection."""

    def __init__(self, server: RunningServer, tool: str = "weather", arguments: dict[str, Any] | None = None) -> None:
        self.server = server
        self.tool = tool
        self.arguments = {"city": "Oslo"} if arguments is None else arguments
        self.bodies: list[str] = []

    def call(self, who: str, state: str | None = None, responses: dict[str, Any] | None = None) -> dict[str, Any]:
        resp = call(
            self.server.url,
            self.tool,
            self.arguments,
            caps=URL_CAPS,
            state=state,
            responses=responses,
            Authorization=f"Bearer {who}",
        )
        self.bodies += [resp.request.content.decode(), resp.text]
        assert resp.status_code == 200, resp.text
        result: dict[str, Any] = resp.json()["result"]
        return result

    def first(self, who: str) -> tuple[dict[str, Any], str, str]:
        """Round 1: returns (result, ask key, connect URL)."""
        result = self.call(who)
        assert result["resultType"] == "input_required"
        ((key, ask),) = result["inputRequests"].items()
        params = ask["params"]
        assert ask["method"] == "elicitation/create" and params["mode"] == "url"
        return result, key, params["url"]

    def accept(self, who: str, result: dict[str, Any], key: str) -> dict[str, Any]:
        return self.call(who, state=result["requestState"], responses={key: {"action": "accept"}})


@pytest.fixture
@needs("process")
def server(tmp_path: Path) -> Iterator[RunningServer]:
    port = free_port()
    env = {"BATON_TEST_PUBLIC_URL": f"http://127.0.0.1:{port}", "BATON_TEST_HOLD_S": "0.5"}
    target = str(SERVERS / "connect_secret.py")
    with start_server(target, "--log-level", "debug", port=port, log=tmp_path / "server.log", env=env) as running:
        yield running


@pytest.fixture
def mcp(server: RunningServer) -> Mcp:
    return Mcp(server)


@pytest.fixture
def browsers(chromium: Any) -> Iterator[Any]:
    """A fresh browser context (its own cookie jar) per user."""
    contexts: list[Any] = []

    def new() -> Any:
        ctx = chromium.new_context()
        contexts.append(ctx)
        return ctx.new_page()

    yield new
    for ctx in contexts:
        ctx.close()


def log_in(page: Any, who: str) -> None:
    """Sign in on the development login page the browser was sent to."""
    assert "/connect/login" in page.url
    assert "Development login" in page.content()
    page.fill("input[name=principal]", who)
    with page.expect_navigation():
        page.click("button[type=submit]")


def open_as(page: Any, url: str, who: str) -> Any:
    """Open a connect URL, signing in as `who` when sent to the login page; returns the final response."""
    response = page.goto(url)
    if "/connect/login" in page.url:
        log_in(page, who)
        response = page.goto(url)  # the login sent the browser back; load it again to see the status
    return response


def submit_key(page: Any, key: str) -> Any:
    page.fill("input[name=secret]", key)
    with page.expect_navigation() as nav:
        page.click("button[type=submit]")
    return nav.value


def assert_key_hidden(mcp: Mcp, server: RunningServer, *keys: str) -> None:
    assert mcp.bodies, "no MCP traffic was captured"
    for key in keys:
        for body in mcp.bodies:
            assert key not in body, "a secret appeared in an MCP message"
        assert key not in server.log.read_text(), "a secret appeared in the server log"


def session_cookie(page: Any) -> dict[str, Any]:
    (cookie,) = [c for c in page.context.cookies() if c["name"] == "baton_connect"]
    return dict(cookie)


# -- end to end in Chromium -------------------------------------------------------------------------


def test_alice_connects_and_her_flow_completes(mcp: Mcp, server: RunningServer, browsers: Any) -> None:
    r1, key, url = mcp.first("alice")
    assert url.startswith(f"http://127.0.0.1:{server.port}/connect/")
    assert well_formed(url.rsplit("/", 1)[1])
    page = browsers()
    page.goto(url)
    log_in(page, "alice")
    assert page.url == url, "the login sends the user back to the connect page"
    assert "weather_api_key" in page.content()
    cookie = session_cookie(page)
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax" and cookie["path"] == "/connect"
    assert not cookie["secure"], "plain http on loopback is development: no Secure flag"
    done = submit_key(page, ALICE_KEY)
    assert done.status == 200 and "Connected" in page.content()
    result = mcp.accept("alice", r1, key)
    assert result["resultType"] == "complete", result
    text = result["content"][0]["text"]
    assert "for alice" in text and digest(ALICE_KEY) in text
    # A later flow finds the key in the vault and never asks.
    again = mcp.call("alice")
    assert again["resultType"] == "complete" and digest(ALICE_KEY) in again["content"][0]["text"]
    assert_key_hidden(mcp, server, ALICE_KEY)


def test_bob_cannot_use_alices_link(mcp: Mcp, server: RunningServer, browsers: Any) -> None:
    r1, key, url = mcp.first("alice")
    bob = browsers()
    response = open_as(bob, url, "bob")
    assert response is not None and response.status == 403
    assert "another account" in bob.content()
    assert bob.locator("input[name=secret]").count() == 0
    # Bob forges a POST with his own session: refused too (no CSRF token can be had, and not his ticket).
    cookie = session_cookie(bob)
    resp = httpx.post(url, data={"secret": BOB_KEY, "csrf": "x"}, cookies={cookie["name"]: cookie["value"]})
    assert resp.status_code == 403
    # Alice "accepted" (she would open it), but nothing was completed: asked again, not run.
    again = mcp.accept("alice", r1, key)
    assert again["resultType"] == "input_required"
    assert next(iter(again["inputRequests"].values()))["params"]["url"] == url
    assert "for alice" not in str(again)
    # Her own browser still can finish the very same link afterwards.
    alice = browsers()
    open_as(alice, url, "alice")
    submit_key(alice, ALICE_KEY)
    (key2,) = again["inputRequests"]
    final = mcp.accept("alice", again, key2)
    assert final["resultType"] == "complete" and digest(ALICE_KEY) in final["content"][0]["text"]
    assert_key_hidden(mcp, server, ALICE_KEY, BOB_KEY)


def test_reused_ticket_is_refused(mcp: Mcp, server: RunningServer, browsers: Any) -> None:
    r1, key, url = mcp.first("alice")
    page = browsers()
    open_as(page, url, "alice")
    csrf = page.get_attribute("input[name=csrf]", "value")
    submit_key(page, ALICE_KEY)
    response = page.goto(url)
    assert response is not None and response.status == 410
    # Replaying the form post with a valid session and CSRF token: still refused, the key unchanged.
    cookie = session_cookie(page)
    resp = httpx.post(url, data={"secret": BOB_KEY, "csrf": csrf}, cookies={cookie["name"]: cookie["value"]})
    assert resp.status_code == 410
    result = mcp.accept("alice", r1, key)
    assert digest(ALICE_KEY) in result["content"][0]["text"]
    assert_key_hidden(mcp, server, ALICE_KEY, BOB_KEY)


def test_tampered_ticket_is_refused(mcp: Mcp, server: RunningServer, browsers: Any) -> None:
    r1, key, url = mcp.first("alice")
    base, ticket = url.rsplit("/", 1)
    flipped = ticket[:-1] + ("A" if ticket[-1] != "A" else "B")
    page = browsers()
    for bad in (flipped, ticket[:-1], ticket + "A", "..%2F" + ticket[3:]):
        response = open_as(page, f"{base}/{bad}", "alice")
        assert response is not None and response.status == 404, bad
        assert page.locator("input[name=secret]").count() == 0
    assert mcp.accept("alice", r1, key)["resultType"] == "input_required"


def test_post_without_session_or_csrf_is_refused(mcp: Mcp, server: RunningServer, browsers: Any) -> None:
    r1, key, url = mcp.first("alice")
    page = browsers()
    open_as(page, url, "alice")
    csrf = page.get_attribute("input[name=csrf]", "value")
    cookie = session_cookie(page)
    jar = {cookie["name"]: cookie["value"]}
    no_session = httpx.post(url, data={"secret": BOB_KEY, "csrf": csrf})
    assert no_session.status_code == 403
    forged = httpx.post(url, data={"secret": BOB_KEY, "csrf": "forged"}, cookies=jar)
    assert forged.status_code == 403
    cross_site = httpx.post(
        url, data={"secret": BOB_KEY, "csrf": csrf}, cookies=jar, headers={"Origin": "https://evil.example"}
    )
    assert cross_site.status_code == 403
    tampered_cookie = httpx.post(url, data={"secret": BOB_KEY, "csrf": csrf}, cookies={cookie["name"]: "v1.x.y.z"})
    assert tampered_cookie.status_code == 403
    assert mcp.accept("alice", r1, key)["resultType"] == "input_required"
    # The page still works for Alice herself.
    submit_key(page, ALICE_KEY)
    final = mcp.accept("alice", r1, key)
    assert final["resultType"] == "complete" and digest(ALICE_KEY) in final["content"][0]["text"]
    assert_key_hidden(mcp, server, ALICE_KEY, BOB_KEY)


# -- over the wire, without a browser ---------------------------------------------------------------


def test_decline_is_a_tool_error(mcp: Mcp) -> None:
    r1, key, _ = mcp.first("carol")
    result = mcp.call("carol", state=r1["requestState"], responses={key: {"action": "decline"}})
    assert result["resultType"] == "complete" and result["isError"] is True
    assert "not connected" in result["content"][0]["text"]


def test_without_url_capability_nothing_is_asked(server: RunningServer) -> None:
    resp = call(server.url, "weather", {"city": "Oslo"}, caps={"elicitation": {"form": {}}}, Authorization="Bearer dan")
    error = resp.json()["error"]  # 2026-07-28: -32021, its message the sentence a host can pass on (P96)
    assert resp.status_code == 400 and error["code"] == -32021 and "open a link" in error["message"]


def test_connect_pages_check_host_and_login_redirect(server: RunningServer) -> None:
    base = f"http://127.0.0.1:{server.port}"
    assert httpx.get(f"{base}/connect/{'A' * 32}", headers={"Host": "evil.example"}).status_code == 403
    resp = httpx.get(f"{base}/connect/{'A' * 32}")
    assert resp.status_code == 303 and resp.headers["location"].startswith("/connect/login?next=/connect/")
    login = httpx.post(f"{base}/connect/login?next=https://evil.example/", data={"principal": "eve"})
    assert login.status_code == 303 and login.headers["location"] == "/connect/"
    assert "frame-ancestors 'none'" in httpx.get(f"{base}/connect/login").headers["content-security-policy"]


# -- units ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_ticket_store_single_use_and_binding(kind: str, tmp_path: Path) -> None:
    async def run() -> None:
        store = MemoryTickets() if kind == "memory" else SqliteTickets(tmp_path / "t.sqlite3")
        flow = os.urandom(16)
        ticket = mint("alice", flow, "secret:x")
        assert len(ticket.id) == 32 and well_formed(ticket.id)
        await store.put(ticket)
        got = await store.get(ticket.id)
        assert got is not None and got.binds("alice", flow, "secret:x") and not got.binds("bob", flow, "secret:x")
        assert not await store.complete(ticket.id, "bob")
        assert await store.complete(ticket.id, "alice")
        assert not await store.complete(ticket.id, "alice")
        done = await store.get(ticket.id)
        assert done is not None and done.done
        expired = mint("alice", flow, "secret:x", ttl_s=-1)
        await store.put(expired)
        assert await store.get(expired.id) is None and not await store.complete(expired.id, "alice")
        assert await store.get("A" * 32) is None
        await store.close()

    run_async(run())


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_vault_encrypts_at_rest_and_binds_rows(kind: str, tmp_path: Path) -> None:
    async def run() -> None:
        store = MemoryVaultStore() if kind == "memory" else SqliteVaultStore(tmp_path / "v.sqlite3")
        ring = KeyRing.ephemeral_key()
        vault = Vault(ring, store)
        await vault.put("alice", "api", ALICE_KEY)
        raw = await store.read("alice", "api")
        assert raw is not None and ALICE_KEY.encode() not in raw
        handle = vault.handle("alice", "api")
        assert ALICE_KEY not in repr(handle)
        assert await handle.reveal() == ALICE_KEY
        await store.write("bob", "api", raw)  # a record moved to another principal does not open
        with pytest.raises(VaultError):
            await vault.reveal("bob", "api")
        with pytest.raises(VaultError):
            await Vault(KeyRing.ephemeral_key(), store).reveal("alice", "api")
        await handle.forget()
        assert not await vault.has("alice", "api")
        await vault.close()
        if kind == "sqlite":
            assert ALICE_KEY.encode() not in (tmp_path / "v.sqlite3").read_bytes()

    run_async(run())


def test_session_cookie_and_csrf() -> None:
    ring = KeyRing.ephemeral_key()
    sessions = Sessions(ring, secure=True)
    session, header = sessions.issue("alice")
    assert "HttpOnly" in header and "SameSite=Lax" in header and "Secure" in header and "Path=/connect" in header
    value = header.split(";")[0].split("=", 1)[1]
    assert sessions.read(value) == session
    head, payload, mac = value.rsplit(".", 2)
    assert sessions.read(f"{head}.{payload}.{mac[:-2]}AA") is None
    assert Sessions(KeyRing.ephemeral_key()).read(value) is None
    assert sessions.read(None) is None and sessions.read("garbage") is None
    expired = Sessions(ring, ttl_s=-10)
    _, old = expired.issue("alice")
    assert sessions.read(old.split(";")[0].split("=", 1)[1]) is None
    token = sessions.csrf(session, "T" * 32)
    assert sessions.check_csrf(session, "T" * 32, token)
    assert not sessions.check_csrf(session, "U" * 32, token)
    other, _ = sessions.issue("alice")
    assert not sessions.check_csrf(other, "T" * 32, token)
    assert "Secure" not in Sessions(ring, secure=False).issue("alice")[1]


# -- ctx.connect: OAuth 2.1 + PKCE against a real Authlib authorization server ----------------------


class OAuthRig:
    def __init__(self, server: RunningServer, as_url: str, token_log: Path) -> None:
        self.server = server
        self.as_url = as_url
        self.token_log = token_log
        self.mcp = Mcp(server, tool="inbox", arguments={})

    def tokens(self) -> list[str]:
        return [line.split()[0] for line in self.token_log.read_text().splitlines()] if self.token_log.exists() else []


@pytest.fixture
@needs("process")
def oauth(tmp_path: Path) -> Iterator[OAuthRig]:
    for module in ("authlib", "flask"):
        if importlib.util.find_spec(module) is None:
            pytest.fail(f"the OAuth tests run a real Authlib authorization server: pip install {module}")
    as_port, port = free_port(), free_port()
    public = f"http://127.0.0.1:{port}"
    token_log = tmp_path / "as-tokens.log"
    env = {"AUTHLIB_INSECURE_TRANSPORT": "1", "AS_TOKEN_LOG": str(token_log)}  # plain http on loopback only
    with start(
        [sys.executable, str(SERVERS / "connect_oauth_as.py"), str(as_port), f"{public}/connect/callback"],
        cwd=ROOT,
        env={**os.environ, **env},
        log=tmp_path / "as.log",
        ready=PortOpen(as_port),
    ):
        env = {**env, "BATON_TEST_PUBLIC_URL": public, "BATON_TEST_AS_URL": f"http://127.0.0.1:{as_port}"}
        target = str(SERVERS / "connect_oauth.py")
        with start_server(target, "--log-level", "debug", port=port, log=tmp_path / "server.log", env=env) as mcp:
            yield OAuthRig(mcp, f"http://127.0.0.1:{as_port}", token_log)


def held_callback(page: Any, url: str, who: str) -> str:
    """Sign in and open the connect URL, then ask the provider (outside the browser) where it would send
    the browser back: the callback URL, with a fresh code and the one-time state, not yet used."""
    open_as(page, url, who)
    authorize = page.get_attribute("a#continue", "href")
    assert authorize is not None
    answer = httpx.get(authorize, follow_redirects=False)
    assert answer.status_code == 302, answer.text
    return str(answer.headers["location"])


def test_oauth_alice_connects_and_her_flow_completes(oauth: OAuthRig, browsers: Any) -> None:
    r1, key, url = oauth.mcp.first("alice")
    page = browsers()
    open_as(page, url, "alice")
    assert "Continue to acme" in page.content()
    with page.expect_navigation(url="**/connect/callback*"):
        page.click("a#continue")
    assert page.url.startswith(f"http://127.0.0.1:{oauth.server.port}/connect/callback?")
    assert "Connected" in page.content()
    result = oauth.mcp.accept("alice", r1, key)
    assert result["resultType"] == "complete", result
    (token,) = oauth.tokens()
    assert f"inbox of alice, token digest {digest(token)}" == result["content"][0]["text"]
    assert_key_hidden(oauth.mcp, oauth.server, token)


def test_oauth_state_is_single_use_and_needs_the_session(oauth: OAuthRig, browsers: Any) -> None:
    r1, key, url = oauth.mcp.first("alice")
    alice = browsers()
    callback = held_callback(alice, url, "alice")
    assert "code=" in callback and "state=" in callback
    # Without the session cookie, and with Bob's session: refused (and the state is not spent).
    assert httpx.get(callback).status_code == 403
    bob = browsers()
    bob.goto(f"http://127.0.0.1:{oauth.server.port}/connect/{'A' * 32}")
    log_in(bob, "bob")
    response = bob.goto(callback)
    assert response is not None and response.status == 403
    # A tampered state: refused.
    state = callback.split("state=")[1].split("&")[0]
    tampered = callback.replace(f"state={state}", f"state={state[:-1]}{'A' if state[-1] != 'A' else 'B'}")
    response = alice.goto(tampered)
    assert response is not None and response.status == 400
    assert oauth.mcp.accept("alice", r1, key)["resultType"] == "input_required"
    # Alice's own browser completes it; the same state again is refused.
    response = alice.goto(callback)
    assert response is not None and response.status == 200 and "Connected" in alice.content()
    response = alice.goto(callback)
    assert response is not None and response.status == 400
    result = oauth.mcp.accept("alice", r1, key)
    (token,) = oauth.tokens()
    assert result["resultType"] == "complete" and digest(token) in result["content"][0]["text"]
    assert_key_hidden(oauth.mcp, oauth.server, token)


def test_oauth_tampered_or_foreign_ticket_is_refused(oauth: OAuthRig, browsers: Any) -> None:
    r1, key, url = oauth.mcp.first("alice")
    base, ticket = url.rsplit("/", 1)
    page = browsers()
    response = open_as(page, f"{base}/{ticket[:-1]}{'A' if ticket[-1] != 'A' else 'B'}", "alice")
    assert response is not None and response.status == 404
    bob = browsers()
    response = open_as(bob, url, "bob")
    assert response is not None and response.status == 403
    assert not oauth.tokens(), "no authorization was started for a refused ticket"
    assert oauth.mcp.accept("alice", r1, key)["resultType"] == "input_required"


def test_connect_pages_are_off_without_a_public_url(serve: Any) -> None:
    plain = serve(str(SERVERS / "ephemeral.py"))
    resp = httpx.get(f"http://127.0.0.1:{plain.port}/connect/login")
    assert resp.status_code == 404 and "not configured" in resp.text
