"""The development login tells a newcomer whom to sign in as; a production login never names anyone.

A real `baton serve` of a small `ctx.secret` server (written to the test's directory), real HTTP, and
Debian's headless Chromium for the pages a person clicks through. In development (loopback http, the
development login) the login page names and prefills the principal the link was made for, and the
403 for a wrong principal says whose the link is, why (`anonymous` when the server has no principal
hook) and offers to sign in as them. With a public https URL nothing about a link's owner is shown,
even when the development login is (wrongly) configured there.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from support.markers import needs
from support.processes import free_port
from support.serve import RunningServer, start_server
from wire import call

from baton import KeyRing
from baton.connect import Sessions
from baton.connect.cookie import COOKIE_NAME

URL_CAPS = {"elicitation": {"url": {}}}
KEY = "sk-demo-5b8e1c0f9a7d"

SERVER = textwrap.dedent(
    """
    import os
    from baton import Context, RequestInfo, Server
    from baton.connect import ConnectKit, DevLogin

    def bearer(info: RequestInfo) -> str | None:  # a test stand-in for token verification
        auth = (info.headers.get("authorization") if info.headers is not None else None) or ""
        return auth.removeprefix("Bearer ").strip() or None

    server = Server(
        "login-hints",
        principal=bearer if os.environ["T_HOOK"] == "1" else None,
        public_url=os.environ["T_PUBLIC_URL"],
        connect=ConnectKit(login=DevLogin() if os.environ["T_DEV_LOGIN"] == "1" else None, store="memory:"),
    )

    @server.tool()
    async def weather(ctx: Context, city: str) -> str:
        handle = await ctx.secret("weather_api_key", "Connect your weather service account")
        await handle.reveal()
        return f"weather in {city} for {handle.principal}"
    """
)


@pytest.fixture
@needs("process")
def serve_hints(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Start the server: `hook` (principal from `Bearer <name>`, else none), `public` URL or loopback http."""
    (tmp_path / "hints_server.py").write_text(SERVER)
    started: list[RunningServer] = []

    def start(*, hook: bool, public: str | None = None, dev_login: bool = False) -> RunningServer:
        port = free_port()
        env = {
            "T_HOOK": "1" if hook else "0",
            "T_PUBLIC_URL": public or f"http://127.0.0.1:{port}",
            "T_DEV_LOGIN": "1" if dev_login else "0",
        }
        target = str(tmp_path / "hints_server.py")
        started.append(start_server(target, port=port, log=tmp_path / f"server-{port}.log", env=env))
        return started[-1]

    yield start
    for server in started:
        server.stop()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context()
    yield context.new_page()
    context.close()


def first_round(server: RunningServer, who: str | None) -> tuple[dict[str, Any], str, str]:
    """Round 1 of the tool: (result, ask key, connect URL); `who` is the bearer name, None for no header."""
    headers = {"Authorization": f"Bearer {who}"} if who else {}
    resp = call(server.url, "weather", {"city": "Oslo"}, caps=URL_CAPS, **headers)
    assert resp.status_code == 200, resp.text
    result: dict[str, Any] = resp.json()["result"]
    ((key, ask),) = result["inputRequests"].items()
    assert ask["params"]["mode"] == "url"
    return result, key, ask["params"]["url"]


def finish(server: RunningServer, result: dict[str, Any], key: str, who: str | None) -> str:
    headers = {"Authorization": f"Bearer {who}"} if who else {}
    resp = call(
        server.url,
        "weather",
        {"city": "Oslo"},
        caps=URL_CAPS,
        state=result["requestState"],
        responses={key: {"action": "accept"}},
        **headers,
    )
    done = resp.json()["result"]
    assert done["resultType"] == "complete", done
    text: str = done["content"][0]["text"]
    return text


def save_key(page: Any) -> None:
    page.fill("input[name=secret]", KEY)
    with page.expect_navigation():
        page.click("button[type=submit]")
    assert "Connected" in page.content()


# -- development: the pages say whom to sign in as -----------------------------------------------------


def test_the_login_page_names_and_prefills_the_links_owner(serve_hints: Any, page: Any) -> None:
    """No principal hook: the link is `anonymous`'s; the login page says so and one click signs in."""
    server = serve_hints(hook=False)
    result, key, url = first_round(server, None)
    page.goto(url)
    assert "/connect/login" in page.url
    text = page.inner_text("body")
    assert "This link was made for anonymous" in text
    assert "every HTTP caller is when the server has no principal hook" in text
    assert page.input_value("input[name=principal]") == "anonymous"
    with page.expect_navigation():
        page.click("button[type=submit]")  # nothing typed: the prefilled principal is the right one
    assert page.url == url
    save_key(page)
    assert finish(server, result, key, None) == "weather in Oslo for anonymous"


def test_the_403_says_whose_link_it_is_and_offers_to_switch(serve_hints: Any, page: Any) -> None:
    """The newcomer types `alice` anyway: the 403 explains `anonymous` and signs them in as it."""
    server = serve_hints(hook=False)
    result, key, url = first_round(server, None)
    page.goto(url)
    page.fill("input[name=principal]", "alice")
    with page.expect_navigation():
        page.click("button[type=submit]")
    response = page.goto(url)  # the 403 as the browser gets it
    assert response is not None and response.status == 403
    text = page.inner_text("body")
    assert "This link was made for another account, anonymous; you are signed in as alice." in text
    assert "every HTTP caller is when the server has no principal hook (Server(principal=...))" in text
    assert "Only the development login names a link's owner" in text
    assert page.locator("input[name=secret]").count() == 0
    with page.expect_navigation():
        page.click("text=Sign in as anonymous")
    assert page.url == url
    save_key(page)
    assert finish(server, result, key, None) == "weather in Oslo for anonymous"


def test_with_a_principal_hook_the_owner_is_named_and_the_hook_explained(serve_hints: Any) -> None:
    server = serve_hints(hook=True)
    _, _, url = first_round(server, "alice")
    ticket_path = "/connect/" + url.rsplit("/", 1)[1]
    base = f"http://127.0.0.1:{server.port}"
    login = httpx.get(f"{base}/connect/login", params={"next": ticket_path})
    assert login.status_code == 200
    assert "This link was made for <b>alice</b>" in login.text and "value='alice'" in login.text
    assert "principal hook (<code>Server(principal=...)</code>) names the MCP client" in login.text
    bob = httpx.post(f"{base}/connect/login", params={"next": ticket_path}, data={"principal": "bob"})
    assert bob.status_code == 303
    refused = httpx.get(url, cookies={COOKIE_NAME: bob.cookies[COOKIE_NAME]})
    assert refused.status_code == 403 and "made for another account, <b>alice</b>" in refused.text
    assert "Sign in as alice" in refused.text


def test_without_a_link_the_login_page_explains_what_to_type(serve_hints: Any) -> None:
    server = serve_hints(hook=False)
    base = f"http://127.0.0.1:{server.port}"
    for target in ("/connect/", "/connect/" + "A" * 32):  # no ticket, an unknown one
        login = httpx.get(f"{base}/connect/login", params={"next": target})
        assert login.status_code == 200 and "Development login" in login.text
        assert "Sign in as the principal your MCP client is known by" in login.text
        assert "every HTTP caller is <code>anonymous</code>" in login.text
        assert "value=" not in login.text.split("name='principal'")[1].split(">")[0], "nothing prefilled"
    empty = httpx.post(f"{base}/connect/login", data={"principal": "  "})
    assert empty.status_code == 400 and "Type a principal of 1 to 200 characters" in empty.text


def test_a_used_link_is_not_named(serve_hints: Any) -> None:
    server = serve_hints(hook=True)
    _, _, url = first_round(server, "alice")
    ticket_path = "/connect/" + url.rsplit("/", 1)[1]
    base = f"http://127.0.0.1:{server.port}"
    alice = httpx.post(f"{base}/connect/login", params={"next": ticket_path}, data={"principal": "alice"})
    jar = {COOKIE_NAME: alice.cookies[COOKIE_NAME]}
    csrf = re.search(r"name='csrf' value='([^']+)'", httpx.get(url, cookies=jar).text)
    assert csrf is not None
    assert httpx.post(url, data={"secret": KEY, "csrf": csrf[1]}, cookies=jar).status_code == 200
    login = httpx.get(f"{base}/connect/login", params={"next": ticket_path})
    assert "alice" not in login.text


# -- production: nothing about the owner -------------------------------------------------------------


@pytest.mark.parametrize("dev_login", [False, True], ids=["no-login", "dev-login-misconfigured"])
def test_production_pages_never_name_the_owner(serve_hints: Any, dev_login: bool) -> None:
    """Public https URL: the 403 and (if any) the login page say nothing about whose the link is."""
    server = serve_hints(hook=True, public="https://mcp.example.com", dev_login=dev_login)
    _, _, url = first_round(server, "alice-the-owner")
    assert url.startswith("https://mcp.example.com/connect/")
    ticket_path = "/connect/" + url.rsplit("/", 1)[1]
    base = f"http://127.0.0.1:{server.port}"
    # Bob's session, issued under the server's own key ring (the test shares its data directory).
    _, header = Sessions(KeyRing.default(), secure=True).issue("bob")
    bob = {COOKIE_NAME: header.split(";")[0].split("=", 1)[1]}
    refused = httpx.get(base + ticket_path, cookies=bob)
    assert refused.status_code == 403 and "Not your link" in refused.text
    assert "alice" not in refused.text and "<form" not in refused.text
    login = httpx.get(f"{base}/connect/login", params={"next": ticket_path})
    if dev_login:
        assert login.status_code == 200 and "alice" not in login.text
        assert "This link was made for" not in login.text
    else:
        assert login.status_code == 501
