"""The server card (SEP-2127, a draft) and the domain catalog: off unless configured, built from the server's own
metadata, public (CORS), cached (ETag, 304), refused where it is misconfigured; served in this process."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.inprocess import InProcessServer

from baton import Context, Server, ServerCard


def notes(card: ServerCard | None, **options: object) -> Server:
    server = Server(
        "notes",
        version="1.4.0",
        title="Notes",
        instructions="Keeps short notes.",
        card=card,
        **options,  # type: ignore[arg-type]
    )

    @server.tool(annotations={"readOnlyHint": True})
    def count() -> int:
        """How many notes there are."""
        return 3

    @server.tool()
    async def forget(ctx: Context, note: str) -> str:
        return "forgot" if await ctx.confirm(f"Forget {note}?") else "kept"

    @server.resource("notes://all", mime_type="text/plain")
    def every_note() -> str:
        return "a\nb\nc"

    return server


CARD = ServerCard(
    name="com.example/notes", website_url="https://notes.example", repository_url="https://github.com/example/notes"
)


def test_no_card_unless_configured(tmp_path: Path) -> None:
    with InProcessServer(notes(None), tmp_path / "log") as live:
        for path in ("/mcp/server-card", "/.well-known/mcp/server-card", "/.well-known/mcp/catalog.json"):
            assert live.http.get(live.url.replace("/mcp", "") + path).status_code == 404


def test_the_card_says_what_the_server_is_from_its_own_metadata(tmp_path: Path) -> None:
    with InProcessServer(notes(CARD), tmp_path / "log") as live:
        answer = live.http.get(live.url + "/server-card")
        assert answer.status_code == 200
        assert answer.headers["content-type"] == "application/json"
        card = answer.json()
        assert card["$schema"].endswith("/server-card.schema.json")
        assert (card["name"], card["version"], card["title"]) == ("com.example/notes", "1.4.0", "Notes")
        assert card["description"] == "Keeps short notes."
        assert card["websiteUrl"] == "https://notes.example"
        assert card["repository"] == {"url": "https://github.com/example/notes", "source": "github"}
        (remote,) = card["remotes"]
        assert remote == {
            "type": "streamable-http",
            "url": live.url,
            "supportedProtocolVersions": ["2026-07-28", "2025-11-25"],
        }
        assert set(card["capabilities"]) >= {"tools", "resources"}
        assert [t["name"] for t in card["tools"]] == ["count", "forget"]
        assert card["tools"][0]["annotations"] == {"readOnlyHint": True}
        assert [r["uri"] for r in card["resources"]] == ["notes://all"]
        assert "prompts" not in card
        assert live.http.get(live.url.replace("/mcp", "") + "/.well-known/mcp/server-card").json() == card


def test_public_cors_and_a_conditional_get(tmp_path: Path) -> None:
    with InProcessServer(notes(CARD), tmp_path / "log") as live:
        url = live.url + "/server-card"
        first = live.http.get(url, headers={"Origin": "https://crawler.example"})
        assert first.status_code == 200  # a card is public: any origin may read it, unlike the endpoint
        assert first.headers["access-control-allow-origin"] == "*"
        assert first.headers["cache-control"] == "public, max-age=3600"
        etag = first.headers["etag"]
        again = live.http.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 304 and again.content == b"" and again.headers["etag"] == etag
        assert live.http.get(url, headers={"If-None-Match": '"other"'}).status_code == 200
        asking = {"Origin": "https://x.example", "Access-Control-Request-Method": "GET"}
        preflight = live.http.options(url, headers=asking)
        assert preflight.status_code == 204 and "GET" in preflight.headers["access-control-allow-methods"]
        assert live.http.post(url, json={}).status_code == 405


def test_the_catalog_names_the_card(tmp_path: Path) -> None:
    card = ServerCard(name="com.example/notes", description="Short notes.")
    with InProcessServer(notes(card), tmp_path / "log") as live:
        catalog = live.http.get(live.url.replace("/mcp", "") + "/.well-known/mcp/catalog.json").json()
        assert catalog == {
            "servers": [
                {
                    "name": "com.example/notes",
                    "version": "1.4.0",
                    "url": live.url,
                    "serverCard": live.url + "/server-card",
                    "description": "Short notes.",
                }
            ]
        }


def test_urls_are_under_the_public_url_and_primitives_may_be_left_out(tmp_path: Path) -> None:
    card = ServerCard(name="com.example/notes", primitives=False)
    server = notes(card, public_url="https://notes.example.com")
    with InProcessServer(server, tmp_path / "log") as live:
        got = live.http.get(live.url + "/server-card").json()
        assert got["remotes"][0]["url"] == "https://notes.example.com/mcp"
        assert "tools" not in got and "resources" not in got and "tools" in got["capabilities"]


def test_a_protected_server_says_so(tmp_path: Path) -> None:
    from baton.auth import OAuthResource

    auth = OAuthResource(resource="https://notes.example.com/mcp", issuer="https://as.example", key="k")
    with InProcessServer(notes(CARD, auth=auth), tmp_path / "log") as live:
        remote = live.http.get(live.url + "/server-card").json()["remotes"][0]
        assert remote["authentication"] == {"required": True, "schemes": ["oauth2"]}


def test_a_host_outside_the_allowed_ones_is_refused(tmp_path: Path) -> None:
    with InProcessServer(notes(CARD), tmp_path / "log") as live:
        assert live.http.get(live.url + "/server-card", headers={"Host": "evil.example"}).status_code == 403


@pytest.mark.parametrize(
    ("kwargs", "said"),
    [
        ({"name": "notes"}, "reverse DNS"),
        ({"name": "com.example/notes/extra"}, "reverse DNS"),
        ({"name": "com.example/notes", "website_url": "ftp://x"}, "website_url"),
    ],
)
def test_a_bad_card_is_refused_where_it_is_written(kwargs: dict[str, str], said: str) -> None:
    with pytest.raises(ValueError, match=said):
        ServerCard(**kwargs)  # type: ignore[arg-type]
