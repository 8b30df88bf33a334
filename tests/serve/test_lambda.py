"""`baton.serve.lambda_handler`: a Server on AWS Lambda, fed Function URL and API Gateway HTTP API (v2) events
shaped as Lambda sends them (tests/lambda_events/), in this process, cold and warm, both protocol versions."""

from __future__ import annotations

import asyncio
import base64
import contextlib
import copy
import json
import logging
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from wire import VERSION, headers_for, meta

from baton import Context, Server, extras
from baton.serve import lambda_handler
from baton.server.startup import ConfigurationError

EVENTS = Path(__file__).parents[1] / "lambda_events"
KEY = "k1:" + base64.b64encode(bytes(range(32))).decode()


@pytest.fixture(autouse=True)
def _environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BATON_STATE_KEYS", KEY)
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("BATON_KEY_FILE", raising=False)
    monkeypatch.delenv("BATON_LEDGER", raising=False)


@pytest.fixture(autouse=True)
def _mangum_loop() -> Iterator[None]:
    """Mangum makes an event loop of its own and sets it as the thread's, to keep for the life of the Lambda
    process; a test process makes a handler per test, so each test closes the loop its handlers left."""
    yield
    policy = asyncio.get_event_loop_policy()
    with contextlib.suppress(RuntimeError):
        policy.get_event_loop().close()
    policy.set_event_loop(None)


def notes(**options: Any) -> Server:
    server = Server("notes", ledger="memory:", **options)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def forget(ctx: Context, note: str) -> str:
        if not await ctx.confirm(f"Forget {note}?"):
            return "kept"
        return f"forgot {note}"

    return server


def event(kind: str, message: dict[str, Any] | None, method: str = "POST", **headers: str) -> dict[str, Any]:
    """A recorded event of `kind` carrying `message` as its body, with the MCP headers a client sends."""
    shaped: dict[str, Any] = copy.deepcopy(json.loads((EVENTS / f"{kind}.json").read_text()))
    shaped["requestContext"]["http"]["method"] = method
    if message is not None:
        shaped["headers"].update({k.lower(): v for k, v in headers_for(message).items()})
        body = json.dumps(message).encode()
        shaped["headers"]["content-length"] = str(len(body))
        shaped["body"] = base64.b64encode(body).decode() if shaped["isBase64Encoded"] else body.decode()
    shaped["headers"].update({k.lower(): v for k, v in headers.items()})
    return shaped


def rpc(method: str, params: dict[str, Any], caps: dict[str, Any] | None = None, id_: int = 1) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "method": method, "params": {**params, "_meta": meta(caps)}}


def body_of(response: dict[str, Any]) -> Any:
    raw = response["body"]
    text = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
    return json.loads(text)


@pytest.mark.parametrize("kind", ["function_url", "http_api_v2"])
def test_cold_and_warm_invocations_answer_from_one_handler(kind: str) -> None:
    handler = lambda_handler(notes())
    cold = handler(event(kind, rpc("tools/list", {})), None)
    assert cold["statusCode"] == 200, cold
    assert [t["name"] for t in body_of(cold)["result"]["tools"]] == ["add", "forget"]
    for n in range(3):  # warm: the same instance, the same loop, again and again
        warm = handler(event(kind, rpc("tools/call", {"name": "add", "arguments": {"a": n, "b": 2}}, id_=n)), None)
        assert warm["statusCode"] == 200
        assert body_of(warm)["result"]["content"][0]["text"] == str(n + 2)


def test_a_two_round_flow_completes_across_invocations() -> None:
    handler = lambda_handler(notes())
    asking = rpc("tools/call", {"name": "forget", "arguments": {"note": "n1"}})
    first = body_of(handler(event("function_url", asking), None))
    assert first["result"]["resultType"] == "input_required"
    ((key, asked),) = first["result"]["inputRequests"].items()
    assert asked["method"] == "elicitation/create"
    retry = {
        "name": "forget",
        "arguments": {"note": "n1"},
        "inputResponses": {key: {"action": "accept", "content": {"confirm": True}}},
        "requestState": first["result"]["requestState"],
    }
    # a second instance built from the same environment opens the first one's requestState
    second = lambda_handler(notes())
    done = body_of(second(event("function_url", rpc("tools/call", retry, id_=2)), None))
    assert done["result"]["content"][0]["text"] == "forgot n1", done


def test_a_2025_session_works_without_a_stream_and_its_asks_take_the_tools_rung() -> None:
    handler = lambda_handler(notes())
    hello = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "old-host", "version": "1"},
        },
    }
    plain = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    opened = handler(_old(event("http_api_v2", None), hello, plain), None)
    assert opened["statusCode"] == 200, opened
    session = {k.lower(): v for k, v in opened["headers"].items()}["mcp-session-id"]
    assert body_of(opened)["result"]["protocolVersion"] == "2025-11-25"
    old = {**plain, "mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    ready = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert handler(_old(event("http_api_v2", None), ready, old), None)["statusCode"] == 202
    call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "add", "arguments": {"a": 1, "b": 1}}}
    added = handler(_old(event("http_api_v2", None), call, old), None)
    assert _result(added)["content"][0]["text"] == "2"
    # the host declared elicitation, but no stream can carry the question: a tool error at once, no wait
    ask = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "forget", "arguments": {"note": "x"}}}
    started = time.monotonic()
    asked = _result(handler(_old(event("http_api_v2", None), ask, old), None))
    assert asked["isError"] is True and time.monotonic() - started < 5
    stream = handler(_old(event("http_api_v2", None), None, old, method="GET"), None)
    assert stream["statusCode"] == 405


def _old(shaped: dict[str, Any], message: dict[str, Any] | None, headers: dict[str, str], method: str = "POST") -> Any:
    shaped["requestContext"]["http"]["method"] = method
    shaped["headers"] = {**shaped["headers"], **headers}
    body = b"" if message is None else json.dumps(message).encode()
    shaped["headers"]["content-length"] = str(len(body))
    shaped["body"] = base64.b64encode(body).decode()
    return shaped


def _result(response: dict[str, Any]) -> dict[str, Any]:
    """A 2025-11-25 result, whether the app answered it as JSON or as a one-event stream."""
    assert response["statusCode"] == 200, response
    raw = response["body"]
    text = base64.b64decode(raw).decode() if response.get("isBase64Encoded") else raw
    if text.lstrip().startswith("{"):
        return json.loads(text)["result"]  # type: ignore[no-any-return]
    data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:") and line[5:].strip()]
    return json.loads(data[-1])["result"]  # type: ignore[no-any-return]


def test_bad_events_get_clear_answers_and_the_handler_goes_on() -> None:
    handler = lambda_handler(notes())
    s3 = {"Records": [{"eventSource": "aws:s3", "s3": {"object": {"key": "a"}}}]}
    refused = handler(s3, None)
    assert refused["statusCode"] == 400 and "HTTP events only" in refused["body"]
    broken = event("function_url", rpc("tools/list", {}))
    broken["body"] = "{not json"
    answered = handler(broken, None)
    assert answered["statusCode"] == 400 and body_of(answered)["error"]["code"] == -32700
    elsewhere = event("function_url", rpc("tools/list", {}))
    elsewhere["rawPath"] = elsewhere["requestContext"]["http"]["path"] = "/other"
    assert handler(elsewhere, None)["statusCode"] == 404
    assert handler(event("function_url", rpc("tools/list", {})), None)["statusCode"] == 200


def test_keys_each_instance_would_make_for_itself_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATON_STATE_KEYS")
    with pytest.raises(ConfigurationError, match=r"\$BATON_STATE_KEYS"):
        lambda_handler(notes())


def test_lambda_runs_no_lifespan() -> None:
    from contextlib import asynccontextmanager

    @asynccontextmanager
    async def pool(server: Server) -> Any:
        yield {}

    with pytest.raises(ConfigurationError, match="lifespan"):
        lambda_handler(notes(lifespan=pool))


def test_single_use_without_a_shared_ledger_is_turned_off_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    server = notes(single_use=True)
    with caplog.at_level(logging.WARNING, logger="baton.lambda"):
        lambda_handler(server)
    assert server.settings.single_use is False
    assert "BATON_LEDGER=redis://" in caplog.text


def test_without_the_lambda_extra_the_error_names_the_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "mangum", None)
    with pytest.raises(extras.MissingExtra) as missing:
        lambda_handler(notes())
    assert str(missing.value).endswith(extras.install_extra("lambda"))


def test_on_lambda_the_data_directory_is_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BATON_DATA_DIR")
    monkeypatch.setenv("LAMBDA_TASK_ROOT", "/var/task")
    lambda_handler(notes())
    assert os.environ["BATON_DATA_DIR"] == "/tmp/baton"


def test_the_2026_version_is_what_the_event_carried() -> None:
    handler = lambda_handler(notes())
    response = handler(event("http_api_v2", rpc("server/discover", {})), None)
    assert VERSION in body_of(response)["result"]["supportedVersions"]
