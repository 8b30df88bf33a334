"""MCP Apps on the server (`io.modelcontextprotocol/ui`, protocol.md P185, P186): an app's `ui://` page served
as `text/html;profile=mcp-app` with its `_meta.ui`, tools stamped with `_meta.ui` and the legacy flat key, the
extension declared, in both eras and over HTTP, and registration problems reported where they are written."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path
from typing import Any

import pytest
from support.inprocess import InProcessServer, load_server
from support.paths import ROOT
from wire import post, request

from baton import App, Context, KeyRing, Server, ToolResult, shows_apps
from baton.serve.target import TargetError
from baton.serve.target import load_server as load_target
from baton.testing import memory_client

UI = "io.modelcontextprotocol/ui"
MIME = "text/html;profile=mcp-app"
ERAS = ["2026-07-28", "2025-11-25"]
PAGE = "<!doctype html><title>Clock</title><p>The time</p>"


def clock_server() -> Server:
    server = Server("clock", state_keys=KeyRing.ephemeral_key())
    clock = App(
        "ui://clock/app.html",
        html=PAGE,
        title="Clock",
        description="A clock face",
        connect_domains=["https://time.example.com"],
        resource_domains=["https://cdn.example.com"],
        permissions=["clipboardWrite"],
        domain="clock.example.com",
        prefers_border=True,
    )

    @server.tool(app=clock, meta={"com.example/kept": 1})
    async def now(ctx: Context) -> str:
        """The time, as text for every host; the page shows it too where apps render."""
        return f"12:00 (page shown: {shows_apps(ctx)})"

    @server.tool(app=clock, visibility=["app"])
    def tick() -> str:
        """Only the page calls this."""
        return "tick"

    return server


async def raw(server: Server, era: str, method: str, params: dict[str, Any] | None = None, **options: Any) -> Any:
    async with memory_client(server, protocol=era, **options) as client:  # type: ignore[arg-type]
        return await client.request(method, params or {})


@pytest.mark.parametrize("era", ERAS)
def test_a_tool_with_an_app_carries_its_ui_meta_and_the_drafts_flat_key(era: str) -> None:
    tools = {t["name"]: t for t in asyncio.run(raw(clock_server(), era, "tools/list"))["tools"]}
    assert tools["now"]["_meta"] == {
        "com.example/kept": 1,
        "ui": {"resourceUri": "ui://clock/app.html"},
        "ui/resourceUri": "ui://clock/app.html",
    }
    assert tools["tick"]["_meta"]["ui"] == {"resourceUri": "ui://clock/app.html", "visibility": ["app"]}


@pytest.mark.parametrize("era", ERAS)
def test_the_page_is_one_resource_served_as_an_mcp_app_with_its_meta(era: str) -> None:
    server = clock_server()
    ui = {
        "csp": {"connectDomains": ["https://time.example.com"], "resourceDomains": ["https://cdn.example.com"]},
        "permissions": {"clipboardWrite": {}},
        "domain": "clock.example.com",
        "prefersBorder": True,
    }
    listed = asyncio.run(raw(server, era, "resources/list"))["resources"]
    assert listed == [
        {
            "uri": "ui://clock/app.html",
            "name": "ui://clock/app.html",
            "title": "Clock",
            "description": "A clock face",
            "mimeType": MIME,
            "_meta": {"ui": ui},
        }
    ]
    read = asyncio.run(raw(server, era, "resources/read", {"uri": "ui://clock/app.html"}))
    assert read["contents"] == [{"uri": "ui://clock/app.html", "mimeType": MIME, "text": PAGE, "_meta": {"ui": ui}}]


@pytest.mark.parametrize("era", ERAS)
def test_the_extension_is_declared_and_a_tool_knows_whether_the_client_renders_pages(era: str) -> None:
    async def main() -> None:
        server = clock_server()
        async with memory_client(server, protocol=era) as client:  # type: ignore[arg-type]
            assert dict(await client.server_extensions()) == {UI: {}}
            assert (await client.call_tool("now", {})).text == "12:00 (page shown: False)"
        shows = {UI: {"mimeTypes": [MIME]}}
        async with memory_client(server, protocol=era, extensions=shows) as client:  # type: ignore[arg-type]
            assert (await client.call_tool("now", {})).text == "12:00 (page shown: True)"
        other = {UI: {"mimeTypes": ["text/uri-list"]}}
        async with memory_client(server, protocol=era, extensions=other) as client:  # type: ignore[arg-type]
            assert (await client.call_tool("now", {})).text == "12:00 (page shown: False)"

    asyncio.run(main())


def test_an_authors_own_declaration_of_the_extension_is_kept() -> None:
    server = Server("s", state_keys=KeyRing.ephemeral_key(), extensions={UI: {"note": "mine"}})
    server.add_tool(lambda: "x", name="t", app=App("ui://s/p.html", html=PAGE))
    assert server.extensions == {UI: {"note": "mine"}}


def test_a_page_from_a_file_is_read_beside_the_file_that_names_it_and_on_every_read(tmp_path: Path) -> None:
    (tmp_path / "pages").mkdir()
    page = tmp_path / "pages" / "app.html"
    page.write_text("<!doctype html><p>first</p>")
    module = tmp_path / "srv.py"
    module.write_text(
        textwrap.dedent("""
        from baton import App, KeyRing, Server

        server = Server("files", state_keys=KeyRing.ephemeral_key())

        @server.tool(app=App("ui://files/app.html", path="pages/app.html"))
        def show() -> str:
            return "shown"
        """)
    )
    server = load_server(module)

    def text() -> str:
        read = asyncio.run(raw(server, "2026-07-28", "resources/read", {"uri": "ui://files/app.html"}))
        return str(read["contents"][0]["text"])

    assert text() == "<!doctype html><p>first</p>"
    page.write_text("<!doctype html><p>edited</p>")
    assert text() == "<!doctype html><p>edited</p>"


def test_baton_serve_names_a_missing_page_and_a_uri_that_is_not_ui(tmp_path: Path) -> None:
    module = tmp_path / "broken.py"
    module.write_text(
        textwrap.dedent("""
        from baton import App, Server

        server = Server("broken")

        @server.tool(app=App("ui://broken/app.html", path="missing.html"))
        def one() -> str:
            return "one"

        @server.tool(app=App("https://example.com/app.html", html="<p>x</p>"))
        def two() -> str:
            return "two"
        """)
    )
    with pytest.raises(TargetError) as caught:
        load_target(str(module))
    message = str(caught.value)
    assert "2 problems" in message, message
    assert f"tool one: the app page '{tmp_path / 'missing.html'}' does not exist" in message, message
    assert "tool two: an app's uri must be a ui:// URI" in message, message
    assert f"{module}:" in message, message  # each at its file:line


@pytest.mark.parametrize(
    ("options", "refusal"),
    [
        ({"app": App("ui://x/p.html")}, "exactly one"),
        ({"app": App("ui://x/p.html", html=PAGE, path="p.html")}, "exactly one"),
        ({"app": App("ui://", html=PAGE)}, "ui:// URI"),
        ({"app": App("ui://x/p.html", html=PAGE, permissions=["camera", "usb"])}, "unknown app permission 'usb'"),
        ({"app": App("ui://x/p.html", html=PAGE, connect_domains=["https://a.example; script-src *"])}, "origins"),
        ({"app": App("ui://x/p.html", html=PAGE, resource_domains=["'unsafe-eval'"])}, "resource_domains must be"),
        ({"app": App("ui://x/p.html", html=PAGE, frame_domains=["*"])}, "frame_domains must be origins"),
        ({"app": App("ui://x/p.html", html=PAGE, base_uri_domains=["https://a.example/path"])}, "base_uri_domains"),
        ({"app": App("ui://x/p.html", html=PAGE), "visibility": ["agent"]}, "visibility must be"),
        ({"app": App("ui://x/p.html", html=PAGE), "visibility": []}, "visibility must be"),
        ({"app": App("ui://x/p.html", html=PAGE), "meta": {"ui": {}}}, "written by app="),
        ({"visibility": ["app"]}, "give app=App"),
    ],
)
def test_what_cannot_be_served_is_refused_where_it_is_written(options: dict[str, Any], refusal: str) -> None:
    server = Server("s", state_keys=KeyRing.ephemeral_key())
    with pytest.raises(ValueError, match=refusal):
        server.add_tool(lambda: "x", name="t", **options)
    assert server.tools == {} and server.resources == {} and server.extensions == {}


def test_one_uri_names_one_page() -> None:
    server = Server("s", state_keys=KeyRing.ephemeral_key())
    shared = App("ui://s/p.html", html=PAGE)
    server.add_tool(lambda: "a", name="a", app=shared)
    server.add_tool(lambda: "b", name="b", app=shared)
    assert list(server.resources) == ["ui://s/p.html"]
    with pytest.raises(ValueError, match="already names another resource"):
        server.add_tool(lambda: "c", name="c", app=App("ui://s/p.html", html="<p>other</p>"))

    @server.resource("ui://s/taken.html")
    def taken() -> str:
        return "not an app"

    with pytest.raises(ValueError, match="already names another resource"):
        server.add_tool(lambda: "d", name="d", app=App("ui://s/taken.html", html=PAGE))


def test_over_http_the_examples_tools_and_pages_are_there(tmp_path: Path) -> None:
    for example, tool, uri in [
        ("everything.py", "app_greeting", "ui://baton-everything/greeting.html"),
        ("dice_app.py", "roll_dice", "ui://dice/roll.html"),
    ]:
        with InProcessServer(load_server(ROOT / "examples" / example), tmp_path / f"{example}.log") as server:
            tools = post(server.url, request("tools/list")).json()["result"]["tools"]
            (found,) = [t for t in tools if t["name"] == tool]
            assert found["_meta"]["ui"]["resourceUri"] == uri and found["_meta"]["ui/resourceUri"] == uri
            read = post(server.url, request("resources/read", {"uri": uri})).json()["result"]
            (item,) = read["contents"]
            assert item["mimeType"] == MIME and item["text"].lstrip().lower().startswith("<!doctype html>")
            assert "ui/initialize" in item["text"]
            discover = post(server.url, request("server/discover")).json()["result"]
            assert discover["capabilities"]["extensions"][UI] == {}
            called = post(server.url, request("tools/call", {"name": tool, "arguments": {}})).json()["result"]
            assert called["content"][0]["text"], called  # meaningful text for hosts without apps


def test_the_dice_tool_says_its_roll_in_text_and_in_structured_content() -> None:
    async def main() -> dict[str, Any]:
        server = load_server(ROOT / "examples" / "dice_app.py")
        async with memory_client(server) as client:
            return await client.request("tools/call", {"name": "roll_dice", "arguments": {"count": 3, "sides": 4}})

    result = asyncio.run(main())
    dice = result["structuredContent"]["dice"]
    assert len(dice) == 3 and all(1 <= d <= 4 for d in dice)
    assert result["content"] == [{"type": "text", "text": f"Rolled {', '.join(map(str, dice))}: total {sum(dice)}."}]


def test_a_tool_annotated_to_return_a_tool_result_publishes_no_output_schema() -> None:
    """`-> ToolResult` (the dice example's) once published the dataclass's own fields as the output schema,
    and clients that check structured content against it (mcp 2.3.0) refused every result."""
    server = Server("s", state_keys=KeyRing.ephemeral_key())

    @server.tool
    def roll() -> ToolResult:
        return ToolResult(content=[{"type": "text", "text": "4"}], structured={"dice": [4]})

    (tool,) = asyncio.run(raw(server, "2026-07-28", "tools/list"))["tools"]
    assert "outputSchema" not in tool, tool


# -- baton dev's side: the policy of an app frame and the route that serves it (protocol.md P188) ------------


def test_an_app_frame_policy_allows_only_what_the_page_declared() -> None:
    from baton.devui.apps import page_policy

    policy, refused = page_policy(None)
    directives = dict(part.split(" ", 1) for part in policy.split("; "))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == directives["style-src"] == "'unsafe-inline'"
    assert directives["connect-src"] == directives["frame-src"] == directives["font-src"] == "'none'"
    assert directives["object-src"] == directives["base-uri"] == directives["form-action"] == "'none'"
    assert directives["sandbox"] == "allow-scripts" and directives["frame-ancestors"] == "'self'"
    assert "'self'" not in policy.replace("frame-ancestors 'self'", "")  # not even the dev server
    assert refused == []

    declared = {
        "connectDomains": ["https://api.example.com", "wss://live.example.com:8443", "*", "'unsafe-eval'"],
        "resourceDomains": ["https://*.cdn.example.com", "https://a.example; script-src *", "javascript:"],
        "frameDomains": ["https://www.youtube.com", 5],
        "baseUriDomains": "https://not-a-list.example",
    }
    policy, refused = page_policy(declared)
    directives = dict(part.split(" ", 1) for part in policy.split("; "))
    assert directives["connect-src"] == "https://api.example.com wss://live.example.com:8443"
    for name in ("img-src", "media-src"):
        assert directives[name] == "data: https://*.cdn.example.com"
    for name in ("script-src", "style-src"):
        assert directives[name] == "'unsafe-inline' https://*.cdn.example.com"
    assert directives["font-src"] == "https://*.cdn.example.com"
    assert directives["frame-src"] == "https://www.youtube.com" and directives["base-uri"] == "'none'"
    assert refused == [
        "connectDomains: '*'",
        "connectDomains: \"'unsafe-eval'\"",
        "resourceDomains: 'https://a.example; script-src *'",
        "resourceDomains: 'javascript:'",
        "frameDomains: 5",
    ]


def test_baton_dev_serves_a_rendered_page_by_its_id_alone_with_its_policy() -> None:
    from baton.devui.app import DevApp
    from baton.devui.apps import AppPageError
    from baton.devui.dev_target import DevTarget
    from baton.devui.live import DevSession
    from baton.devui.page_access import DevGuard

    async def main() -> None:
        session = DevSession(DevTarget("nothing", url="http://127.0.0.1:9/mcp"))
        app = DevApp(session, DevGuard(4242, token="t"))
        server = clock_server()

        @server.resource("ui://clock/plain.html")
        def plain() -> str:
            return "<p>not an app</p>"

        async with memory_client(server) as client:
            shown = await session.app_pages.render(client, "ui://clock/app.html", None)
            with pytest.raises(AppPageError, match="not 'text/html;profile=mcp-app'"):
                await session.app_pages.render(client, "ui://clock/plain.html", None)
        assert "connect-src https://time.example.com" in shown["policy"]
        assert shown["prefersBorder"] is True and shown["permissions"] == ["clipboardWrite"]

        async def get(path: str, method: str = "GET", **headers: str) -> tuple[int, dict[bytes, bytes], bytes]:
            sent: list[Any] = []

            async def receive() -> dict[str, Any]:
                return {"type": "http.request", "body": b"", "more_body": False}

            async def send(message: Any) -> None:
                sent.append(message)

            given = [(b"host", b"127.0.0.1:4242"), *((k.encode(), v.encode()) for k, v in headers.items())]
            await app({"type": "http", "method": method, "path": path, "headers": given}, receive, send)
            return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])

        status, headers, body = await get(shown["src"])  # no token: the frame cannot send one
        assert status == 200 and body == PAGE.encode()
        assert headers[b"content-security-policy"] == shown["policy"].encode()
        assert headers[b"content-type"] == b"text/html; charset=utf-8" and b"x-frame-options" not in headers
        assert (await get("/app/not-an-id"))[0] == 404
        assert (await get(shown["src"], "POST"))[0] == 405
        assert (await get(shown["src"], origin="https://evil.example"))[0] == 403
        assert (await get("/api/app/render", "POST"))[0] == 401  # the API still needs the token

    asyncio.run(main())
