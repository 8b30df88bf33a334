"""The app rung of the ask ladder (protocol.md P213-P215): where the host renders MCP Apps but cannot show a
form question, the question is shown in Baton's ask app with the result, answered through the app-only
answer tool, and the call goes on when the app calls the tool again; URL questions take the page."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
import servers.ask_app as tools
from support.inprocess import InProcessServer
from wire import call, post, request

from baton import App, Context, Server
from baton.connect import ConnectKit
from baton.protocol.capabilities import ClientCapabilities
from baton.server.apps import APP_MIME_TYPE, APPS
from baton.server.ask_app import ANSWER_TOOL, ASK_APP, ASK_META
from baton.server.ladder import rung

PUBLIC = "http://127.0.0.1:1"  # the pages' address in the links (nothing is opened in this file)
APPS_DECLARED = {APPS: {"mimeTypes": [APP_MIME_TYPE]}}
FORM = {"method": "elicitation/create", "params": {"mode": "form", "message": "?", "requestedSchema": {}}}
URL = {"method": "elicitation/create", "params": {"mode": "url", "message": "?", "url": "https://x.example/"}}
ELICITATION = {"none": (False, False), "form": (True, False), "url": (False, True), "all": (True, True)}
# What the app rung gives, for each declared elicitation, with or without apps, for a form and a URL question.
EXPECTED = {
    ("none", False): ("page", "page"),
    ("none", True): ("app", "page"),
    ("form", False): ("native", "page"),
    ("form", True): ("native", "page"),
    ("url", False): ("page", "native"),
    ("url", True): ("app", "native"),
    ("all", False): ("native", "native"),
    ("all", True): ("native", "native"),
}


@pytest.mark.parametrize(("elicitation", "apps"), list(itertools.product(ELICITATION, (False, True))))
@pytest.mark.parametrize("when_unasked", ["error", "page", "argument", "app"])
def test_the_rung_for_every_declaration(elicitation: str, apps: bool, when_unasked: str) -> None:
    form, url = ELICITATION[elicitation]
    caps = ClientCapabilities(form=form, url=url)
    got = (rung(caps, FORM, when_unasked, False, apps), rung(caps, URL, when_unasked, False, apps))
    app_rung = EXPECTED[(elicitation, apps)]
    if when_unasked == "app":
        assert got == app_rung
    else:  # only "app" ever gives the app; the others are as before, whatever the client says of apps
        fallback = {"error": "error", "page": "page", "argument": "error"}[when_unasked]
        assert got == tuple("native" if r == "native" else fallback for r in app_rung)


def asking_server(public_url: str | None) -> Server:
    server = Server(
        "ask-app",
        public_url=public_url,
        connect=ConnectKit(store="memory:") if public_url else None,  # the default kit needs no public URL
        principal=lambda info: ((info.headers or {}).get("authorization") or "").removeprefix("Bearer ") or None,
    )

    server.add_tool(tools.paint, when_unasked="app")
    if public_url is not None:  # ctx.secret needs a public URL to serve at all (the server refuses to start)
        server.add_tool(tools.key, when_unasked="app")
    return server


@pytest.fixture
def live(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path))
    with InProcessServer(asking_server(PUBLIC), tmp_path / "server.log") as served:
        yield served


def tool_call(url: str, tool: str, arguments: dict[str, Any], who: str = "ann", caps: Any = None) -> dict[str, Any]:
    declared = {"extensions": APPS_DECLARED} if caps is None else caps
    resp = call(url, tool, arguments, caps=declared, Authorization=f"Bearer {who}")
    assert resp.status_code == 200, resp.text
    body = resp.json()
    assert "result" in body, body
    return dict(body["result"])


def text(result: dict[str, Any]) -> str:
    return "\n".join(c["text"] for c in result["content"] if c["type"] == "text")


def test_the_tool_carries_the_ask_app_and_the_answer_tool_is_app_only(live: InProcessServer) -> None:
    listed = post(live.url, request("tools/list", {}, {"extensions": APPS_DECLARED})).json()["result"]["tools"]
    by_name = {t["name"]: t for t in listed}
    assert by_name["paint"]["_meta"]["ui"] == {"resourceUri": ASK_APP.uri}
    assert by_name[ANSWER_TOOL]["_meta"]["ui"] == {"resourceUri": ASK_APP.uri, "visibility": ["app"]}
    read = post(live.url, request("resources/read", {"uri": ASK_APP.uri})).json()["result"]["contents"][0]
    assert read["mimeType"] == APP_MIME_TYPE
    assert "ui/initialize" in read["text"]


def test_a_form_question_in_the_app_then_the_call_goes_on(live: InProcessServer) -> None:
    first = tool_call(live.url, "paint", {"room": "hall"})
    assert not first.get("isError")
    ask = first["_meta"][ASK_META]
    assert ask["tool"] == "paint" and ask["answerTool"] == ANSWER_TOOL
    assert ask["message"] == "Which colour for the hall?"
    assert '<select id="ask-value"' in ask["form"] or "<select" in ask["form"]
    # The model's text names no link and no ticket: the app's ticket is only in _meta.
    said = text(first)
    assert "Which colour for the hall?" in said and "form shown with this result" in said
    assert ask["ticket"] not in said and "http" not in said
    # Before the answer, the same call shows the same question in the app again; nothing runs.
    again = tool_call(live.url, "paint", {"room": "hall"})
    assert again["_meta"][ASK_META]["ticket"] == ask["ticket"]
    assert text(again).startswith("The user has not answered yet.")
    # A bad answer is refused with the form's own words, and the ticket is not spent.
    bad = tool_call(live.url, ANSWER_TOOL, {"ticket": ask["ticket"], "action": "accept", "fields": {"value": ["blue"]}})
    assert bad.get("isError") and "Please answer again" in text(bad)
    fields = {"value": ["green"]}
    good = tool_call(live.url, ANSWER_TOOL, {"ticket": ask["ticket"], "action": "accept", "fields": fields})
    assert not good.get("isError") and text(good) == "Your answer was recorded."
    # The app calls the tool again: it goes on to the second question, in the app too.
    second = tool_call(live.url, "paint", {"room": "hall"})
    ask2 = second["_meta"][ASK_META]
    assert ask2["message"] == "How many litres?" and ask2["ticket"] != ask["ticket"]
    tool_call(live.url, ANSWER_TOOL, {"ticket": ask2["ticket"], "action": "accept", "fields": {"value": ["4"]}})
    done = tool_call(live.url, "paint", {"room": "hall"})
    assert text(done) == "Painted the hall green with 4 l, for ann."
    assert ASK_META not in (done.get("_meta") or {})
    # A used ticket answers nothing.
    used = tool_call(live.url, ANSWER_TOOL, {"ticket": ask["ticket"], "action": "accept", "fields": fields})
    assert used.get("isError") and "already been answered" in text(used)


def test_decline_in_the_app_reaches_the_tool(live: InProcessServer) -> None:
    ask = tool_call(live.url, "paint", {"room": "attic"})["_meta"][ASK_META]
    tool_call(live.url, ANSWER_TOOL, {"ticket": ask["ticket"], "action": "decline"})
    assert text(tool_call(live.url, "paint", {"room": "attic"})) == "Declined: the attic stays as it is."


def test_only_the_app_ticket_of_the_caller_answers(live: InProcessServer) -> None:
    first = tool_call(live.url, "paint", {"room": "den"})
    ask = first["_meta"][ASK_META]
    answer = {"ticket": ask["ticket"], "action": "accept", "fields": {"value": ["red"]}}
    # Another principal with the ticket: refused, in words that name no one.
    theirs = tool_call(live.url, ANSWER_TOOL, answer, who="bob")
    assert theirs.get("isError") and "no longer waiting" in text(theirs)
    # The page's ticket (in the page rung's link, which a model may read) never answers through the tool.
    page = tool_call(live.url, "paint", {"room": "den"}, caps={})
    link = text(page).split("/connect/")[1].split()[0]
    assert link != ask["ticket"]
    by_page_ticket = tool_call(live.url, ANSWER_TOOL, {**answer, "ticket": link})
    assert by_page_ticket.get("isError") and "no longer waiting" in text(by_page_ticket)
    assert tool_call(live.url, ANSWER_TOOL, answer).get("isError") is None


def test_a_host_without_apps_gets_the_page_and_a_url_question_never_goes_to_the_app(live: InProcessServer) -> None:
    page = tool_call(live.url, "paint", {"room": "loft"}, caps={})
    assert ASK_META not in (page.get("_meta") or {})
    assert f"{PUBLIC}/connect/" in text(page)
    secret = tool_call(live.url, "key", {})
    assert ASK_META not in (secret.get("_meta") or {})
    assert f"{PUBLIC}/connect/" in text(secret)
    # A host that shows forms natively is asked natively, apps or not.
    native = tool_call(
        live.url, "paint", {"room": "loft"}, caps={"elicitation": {"form": {}}, "extensions": APPS_DECLARED}
    )
    assert native["resultType"] == "input_required"


def test_a_tool_with_its_own_app_cannot_take_the_app_rung() -> None:
    server = Server("own-app")
    with pytest.raises(ValueError, match="when_unasked='page'"):

        @server.tool(app=App("ui://own/app.html", html="<p>x</p>"), when_unasked="app")
        async def tool(ctx: Context) -> str:
            return ""

    everywhere = Server("own-app", when_unasked="app")

    @everywhere.tool(app=App("ui://own/app.html", html="<p>x</p>"))
    async def own(ctx: Context) -> str:
        return ""

    assert everywhere.tools["own"].flow is not None and everywhere.tools["own"].flow.when_unasked == "page"
    assert ANSWER_TOOL not in everywhere.tools


def test_without_a_public_url_only_the_app_serves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """P216: no public URL, so no page; a client that renders the ask app still gets the question there."""
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("BATON_PUBLIC_URL", raising=False)
    with InProcessServer(asking_server(None), tmp_path / "server.log") as live:
        first = tool_call(live.url, "paint", {"room": "hall"})
        ask = first["_meta"][ASK_META]
        assert ask["page"] == ""  # no page to offer
        # A client without apps gets the error rung, for a new flow and for the one waiting in the app.
        for room in ("cellar", "hall"):
            bare = call(live.url, "paint", {"room": room}, caps={}, Authorization="Bearer ann")
            assert bare.json()["error"]["code"] == -32021, bare.text
        tool_call(live.url, ANSWER_TOOL, {"ticket": ask["ticket"], "action": "accept", "fields": {"value": ["red"]}})
        second = tool_call(live.url, "paint", {"room": "hall"})
        assert second["_meta"][ASK_META]["message"] == "How many litres?"
        # An anonymous caller (no principal) is not served by the app without a page's development login.
        anonymous = call(live.url, "paint", {"room": "hall"}, caps={"extensions": APPS_DECLARED})
        assert anonymous.json()["error"]["code"] == -32021, anonymous.text
