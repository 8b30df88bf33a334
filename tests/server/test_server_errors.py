"""What a failing handler answers, and that a result shaped by the user's answers is never cached publicly.

Resources and prompts (protocol.md P17): `ResourceNotFound` is not-found (-32602 in 2026-07-28, -32002
in a 2025-11-25 session); a `ValueError` is invalid params with its message; anything else is an
internal error that hides the details. A `ConfigurationError` raised while a request runs (the connect
kit's, from `ctx.secret`) names the setting to fix. Driven in process through `server.runtime.handle` with a
real key ring, and over a real `baton serve` on HTTP and on stdio.
"""

from __future__ import annotations

import asyncio
import getpass
import textwrap
from pathlib import Path
from typing import Any

import orjson
import pytest
from support import processes
from support.paths import BATON, ROOT
from wire import accept, meta, post, request

import baton
from baton import Context, KeyRing, ResourceNotFound, Server, ToolError, ToolResult
from baton.connect import ConnectKit, MemoryTickets, MemoryVaultStore
from baton.content import text
from baton.protocol.errors import UsageError
from baton.protocol.messages import Message
from baton.server import Exchange, RequestInfo

CAPS: dict[str, Any] = {"elicitation": {"form": {}, "url": {}}}


def make_server() -> Server:
    server = Server("errors", state_keys=KeyRing.ephemeral_key())

    @server.resource("reports://{quarter}")
    def report(quarter: str) -> str:
        if quarter == "missing":
            raise ResourceNotFound(f"reports://{quarter}")
        if quarter == "q9":
            raise ValueError("no report for q9")
        if quarter == "bug":
            raise RuntimeError("database password is hunter2")
        if quarter == "misuse":
            raise UsageError("a form the wire cannot express")
        return f"report {quarter}"

    @server.prompt()
    def summary(topic: str) -> str:
        if topic == "nothing":
            raise ValueError("there is nothing to summarize about 'nothing'")
        if topic == "bug":
            raise KeyError("internal detail")
        return f"Summarize {topic}."

    return server


def handle(server: Server, method: str, params: dict[str, Any], transport: str = "stdio") -> dict[str, Any]:
    body = {**params, "_meta": meta(CAPS)}
    reply = asyncio.run(server.runtime.handle(Message(method, body, 1, True), Exchange(RequestInfo(transport))))  # type: ignore[arg-type]
    return reply.body  # type: ignore[union-attr]


def read(server: Server, uri: str, **extra: Any) -> dict[str, Any]:
    return handle(server, "resources/read", {"uri": uri, **extra})


def test_resource_not_found_from_a_template_is_not_found() -> None:
    error = read(make_server(), "reports://missing")["error"]
    assert error == {
        "code": -32602,
        "message": "Resource not found: reports://missing",
        "data": {"uri": "reports://missing"},
    }


def test_value_error_from_a_resource_is_invalid_params_with_its_message() -> None:
    error = read(make_server(), "reports://q9")["error"]
    assert error == {"code": -32602, "message": "no report for q9", "data": {"uri": "reports://q9"}}


def test_value_error_from_a_prompt_is_invalid_params_with_its_message() -> None:
    error = handle(make_server(), "prompts/get", {"name": "summary", "arguments": {"topic": "nothing"}})["error"]
    assert error == {"code": -32602, "message": "there is nothing to summarize about 'nothing'"}


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("resources/read", {"uri": "reports://bug"}),
        ("resources/read", {"uri": "reports://misuse"}),  # Baton's UsageError is the author's bug: internal
        ("prompts/get", {"name": "summary", "arguments": {"topic": "bug"}}),
    ],
)
def test_other_exceptions_stay_internal_and_hide_their_details(
    method: str, params: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    error = handle(make_server(), method, params)["error"]
    assert error["code"] == -32603 and error["message"].startswith(f"Internal error while answering {method}")
    assert "hunter2" not in error["message"] and "internal detail" not in error["message"]
    assert "Traceback" in caplog.text  # the details are in the server log


def test_a_return_value_that_cannot_be_sent_names_the_tool_and_its_type(caplog: pytest.LogCaptureFixture) -> None:
    server = Server("unsendable", state_keys=KeyRing.ephemeral_key())

    @server.tool()
    def tags() -> dict[str, Any]:
        return {"tags": {"a", "b"}}  # a set: not JSON

    @server.tool()
    def explicit() -> ToolResult:
        return ToolResult(content=[text("ok")], structured={"at": object()})

    @server.prompt()
    def numbered() -> Any:
        return 5

    for tool, kind in (("tags", "a dict"), ("explicit", "a ToolResult")):
        result = handle(server, "tools/call", {"name": tool, "arguments": {}})["result"]
        assert result["isError"] is True
        said = result["content"][0]["text"]
        assert said.startswith(f"Tool {tool} failed: it returned {kind} that Baton cannot send (Type is not JSON")
        assert f"tools/call {tool!r} returned {kind} that Baton cannot send" in caplog.text
    error = handle(server, "prompts/get", {"name": "numbered"})["error"]
    assert error["code"] == -32603 and "prompts/get numbered: its handler returned an int" in error["message"]
    assert "prompts/get 'numbered' returned an int" in caplog.text and "Traceback" not in caplog.text


def test_answers_that_outgrow_the_state_together_are_named_as_such(caplog: pytest.LogCaptureFixture) -> None:
    """Many small answers in one call: the cause is their number, not the first one (P102)."""
    server = Server("many", state_keys=KeyRing.ephemeral_key(), state_max_bytes=4096)

    @server.tool()
    async def approve_all(ctx: Context) -> str:
        for n in range(1000):
            await ctx.confirm(f"Approve item {n}?", key=f"s{n}")
        return "approved"

    result = handle(server, "tools/call", {"name": "approve_all", "arguments": {}})["result"]
    rounds = 1
    while result.get("resultType") == "input_required":
        answers = {key: accept(confirm=True) for key in result["inputRequests"]}
        params = {"name": "approve_all", "arguments": {}, "requestState": result["requestState"]}
        result = handle(server, "tools/call", {**params, "inputResponses": answers})["result"]
        rounds += 1
    assert result["isError"] is True
    said = result["content"][0]["text"]
    answered = rounds - 1
    assert said.startswith(f"Tool approve_all cannot go on: it has asked {answered} questions in this call"), said
    assert "over the 4096 bytes the server carries between questions. It asks too many questions" in said
    assert "'s0'" not in said and "Answer with less" not in said
    assert (
        f"after {answered} answers" in caplog.text and "ctx.elicit" in caplog.text and "state_max_bytes" in caplog.text
    )


def test_resource_not_found_and_invalid_params_are_public_api() -> None:
    assert baton.ResourceNotFound is ResourceNotFound
    assert "ResourceNotFound" in baton.__all__ and "ConfigurationError" in baton.__all__


# -- a configuration gap at call time names the setting ---------------------------------------------------


def kit_server(**options: Any) -> Server:
    """A ctx.secret reached only through a helper, which the start-up checks cannot see."""
    server = Server("config", state_keys=KeyRing.ephemeral_key(), **options)
    server.runtime.mount_connect(ConnectKit(tickets=MemoryTickets(), vault=MemoryVaultStore()))

    async def api_key(ctx: Context) -> str:
        return await (await ctx.secret("api_key", "Connect your account")).reveal()

    @server.tool()
    async def forecast(c: Context, city: str) -> str:
        return f"{city}: {len(await api_key(c))}"

    @server.resource("weather://{city}")
    async def weather(c: Context, city: str) -> str:
        return f"{city}: {len(await api_key(c))}"

    return server


def test_secret_without_a_public_url_is_a_tool_error_naming_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATON_PUBLIC_URL", raising=False)
    result = handle(kit_server(), "tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}})["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Tool forecast cannot run: ") and "$BATON_PUBLIC_URL" in text
    assert "internal error" not in text


def test_secret_for_an_anonymous_caller_is_a_tool_error_naming_the_principal_hook() -> None:
    server = kit_server(public_url="https://mcp.example.com")
    result = handle(server, "tools/call", {"name": "forecast", "arguments": {"city": "Oslo"}}, "http")["result"]
    assert result["isError"] is True and "Server(principal=...)" in result["content"][0]["text"]


def test_configuration_gap_in_a_resource_is_an_error_naming_the_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATON_PUBLIC_URL", raising=False)
    error = read(kit_server(), "weather://Oslo")["error"]
    assert error["code"] == -32603 and "$BATON_PUBLIC_URL" in error["message"]


def test_keys_that_cannot_load_are_an_error_naming_the_setting(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BATON_KEY_FILE", str(tmp_path))  # a directory: it cannot be read as a key file
    server = Server("no-keys")

    @server.tool()
    async def ask(ctx: Context) -> str:
        return str(await ctx.confirm("Sure?"))

    error = handle(server, "tools/call", {"name": "ask", "arguments": {}})["error"]
    assert error["code"] == -32603 and "$BATON_KEY_FILE" in error["message"]
    assert str(tmp_path) not in error["message"]  # the path stays in the server log


# -- cacheScope of a read that asked --------------------------------------------------------------------


def test_a_resource_read_that_asked_the_user_is_private() -> None:
    server = Server("cache", state_keys=KeyRing.ephemeral_key())  # no principal hook: public by default

    @server.resource("notes://{name}", ttl_ms=5000)
    async def note(ctx: Context, name: str) -> str:
        if name == "secret" and not await ctx.confirm("Show the secret note?"):
            return "hidden"
        return f"note {name}"

    plain = read(server, "notes://plain")["result"]
    assert (plain["cacheScope"], plain["ttlMs"]) == ("public", 5000)
    first = read(server, "notes://secret")["result"]
    assert first["resultType"] == "input_required" and "cacheScope" not in first
    final = read(
        server, "notes://secret", requestState=first["requestState"], inputResponses={"q1": accept(confirm=True)}
    )["result"]
    assert final["contents"][0]["text"] == "note secret"
    assert final["cacheScope"] == "private"
    # Answered on the first request (no requestState): the answer still shaped the result.
    pre = read(server, "notes://secret", inputResponses={"q1": accept(confirm=False)})["result"]
    assert pre["contents"][0]["text"] == "hidden" and pre["cacheScope"] == "private"


# -- over a real baton serve ------------------------------------------------------------------------------

SERVER = """
from baton import ResourceNotFound, Server

server = Server("reports")

@server.resource("reports://{quarter}")
def report(quarter: str) -> str:
    if quarter == "q9":
        raise ValueError("no report for q9")
    if quarter == "q8":
        raise ResourceNotFound(f"reports://{quarter}")
    return f"report {quarter}"
"""


@pytest.fixture
def reports(tmp_path: Path) -> str:
    path = tmp_path / "reports.py"
    path.write_text(textwrap.dedent(SERVER))
    return str(path)


def test_resource_errors_over_http(serve, reports: str) -> None:  # type: ignore[no-untyped-def]
    server = serve(reports)
    answers = {}
    for quarter in ("q9", "q8", "q1"):
        resp = post(server.url, request("resources/read", {"uri": f"reports://{quarter}"}))
        answers[quarter] = resp.json()
    assert answers["q9"]["error"] == {"code": -32602, "message": "no report for q9", "data": {"uri": "reports://q9"}}
    assert answers["q8"]["error"]["code"] == -32602 and answers["q8"]["error"]["data"] == {"uri": "reports://q8"}
    assert answers["q1"]["result"]["contents"][0]["text"] == "report q1"


@pytest.mark.process
def test_resource_errors_in_a_2025_11_25_session_over_stdio(reports: str) -> None:
    lines = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        },
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "reports://q8"}},
        {"jsonrpc": "2.0", "id": 3, "method": "resources/read", "params": {"uri": "reports://q9"}},
    ]
    stdin = b"".join(orjson.dumps(line) + b"\n" for line in lines)
    done = processes.run(
        [BATON, "serve", reports, "--stdio"], input=stdin, capture_output=True, cwd=ROOT, timeout=30, check=False
    )
    assert done.returncode == 0, done.stderr.decode()
    replies = {m["id"]: m for m in map(orjson.loads, done.stdout.splitlines())}
    assert replies[2]["error"] == {
        "code": -32002,
        "message": "Resource not found: reports://q8",
        "data": {"uri": "reports://q8"},
    }
    assert replies[3]["error"] == {"code": -32602, "message": "no report for q9", "data": {"uri": "reports://q9"}}


def test_forget_makes_the_next_call_ask_for_the_credential_again() -> None:
    """The recipe of docs/server.md: a rejected key is forgotten and the call ends; the next call asks."""
    server = Server("forget", state_keys=KeyRing.ephemeral_key(), public_url="http://127.0.0.1:9")
    kit = ConnectKit(tickets=MemoryTickets(), vault=MemoryVaultStore())
    server.runtime.mount_connect(kit)

    @server.tool()
    async def deploy(ctx: Context) -> str:
        handle = await ctx.secret("acme_api_key", "Connect your Acme account")
        if await handle.reveal() != "good":
            await handle.forget()
            raise ToolError("Acme refused the stored key; call again to enter a new one")
        return "deployed"

    principal = "os:" + getpass.getuser()
    assert server.runtime.connect_kit is kit  # attached to the server's key ring, which seals the vault
    asyncio.run(kit.vault.put(principal, "acme_api_key", "revoked"))
    refused = handle(server, "tools/call", {"name": "deploy", "arguments": {}})["result"]
    assert refused["isError"] is True and "call again" in refused["content"][0]["text"]
    asked = handle(server, "tools/call", {"name": "deploy", "arguments": {}})["result"]
    assert asked["resultType"] == "input_required"
    ((ask,),) = [list(asked["inputRequests"].values())]
    assert ask["params"]["mode"] == "url" and ask["params"]["url"].startswith("http://127.0.0.1:9/connect/")
