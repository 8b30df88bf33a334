"""The Streamable HTTP transport over a real socket: statuses, refusals, SSE, and surviving bad input."""

from __future__ import annotations

import threading
import time

import httpx
import orjson
import pytest
from support.serve import RunningServer
from wire import VERSION, call, headers_for, meta, post, request

SERVER_INFO = "io.modelcontextprotocol/serverInfo"


def alive(url: str) -> None:
    resp = post(url, request("server/discover"))
    assert resp.status_code == 200
    assert resp.json()["result"]["supportedVersions"] == [VERSION, "2025-11-25"]


def test_discover_and_every_result_identifies_the_server(everything: RunningServer) -> None:
    result = post(everything.url, request("server/discover")).json()["result"]
    assert result["resultType"] == "complete"
    assert set(result["capabilities"]) >= {"tools", "resources", "prompts", "completions"}
    assert result["ttlMs"] >= 0 and result["cacheScope"] in ("public", "private")
    assert result["_meta"][SERVER_INFO]["name"] == "baton-everything"
    for method in ("tools/list", "prompts/list", "resources/list", "resources/templates/list"):
        listed = post(everything.url, request(method)).json()["result"]
        assert listed["resultType"] == "complete"
        assert "ttlMs" in listed and "cacheScope" in listed
        assert SERVER_INFO in listed["_meta"]


def test_no_server_header(everything: RunningServer) -> None:
    """protocol.md P227: no response names the server software; the Date header stays."""
    for resp in (post(everything.url, request("server/discover")), httpx.get(everything.url, timeout=5)):
        assert "server" not in resp.headers
        assert "date" in resp.headers


@pytest.mark.parametrize("verb", ["GET", "DELETE", "PUT"])
def test_only_post(everything: RunningServer, verb: str) -> None:
    resp = httpx.request(verb, everything.url, timeout=5)
    assert resp.status_code == 405
    assert resp.headers["allow"] == "POST"


def test_origin_and_host_checks(everything: RunningServer) -> None:
    msg = request("server/discover")
    assert post(everything.url, msg, Origin="https://evil.example").status_code == 403
    assert post(everything.url, msg, Origin=f"http://localhost:{everything.port}").status_code == 200
    assert post(everything.url, msg, Host="evil.example").status_code == 403
    assert post(everything.url, msg, Host=f"localhost:{everything.port}").status_code == 200


def test_bad_input_gets_clear_errors_and_the_server_keeps_running(everything: RunningServer) -> None:
    url = everything.url
    h = headers_for(request("server/discover"))
    resp = httpx.post(url, content=b"{not json", headers=h)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32700
    resp = httpx.post(url, content=orjson.dumps([request("server/discover")]), headers=h)
    assert resp.status_code == 400 and "batch" in resp.json()["error"]["message"]
    resp = httpx.post(url, content=b'{"jsonrpc":"2.0","id":1,"result":{}}', headers=h)
    assert resp.status_code == 400 and resp.json()["error"]["code"] == -32600
    resp = httpx.post(url, content=b"{}", headers={**h, "Content-Type": "text/plain"})
    assert resp.status_code == 415
    resp = httpx.post(url, content=b" " * (4 * 1024 * 1024 + 1), headers=h)
    assert resp.status_code == 413 and "too large" in resp.json()["error"]["message"]
    alive(url)


def test_notifications_are_accepted_with_202(everything: RunningServer) -> None:
    note = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 99}}
    resp = httpx.post(everything.url, json=note, headers={"Content-Type": "application/json"})
    assert resp.status_code == 202 and resp.content == b""


def test_validation_order_and_statuses(everything: RunningServer) -> None:
    url = everything.url
    no_meta = {"jsonrpc": "2.0", "id": 5, "method": "server/discover", "params": {}}
    resp = post(url, no_meta)
    assert (resp.status_code, resp.json()["error"]["code"], resp.json()["id"]) == (400, -32602, 5)
    resp = post(url, request("server/discover"), **{"MCP-Protocol-Version": "2025-11-25"})
    assert (resp.status_code, resp.json()["error"]["code"]) == (400, -32020)
    resp = post(url, request("tools/list"), **{"Mcp-Method": "TOOLS/LIST"})
    assert (resp.status_code, resp.json()["error"]["code"]) == (400, -32020)
    old = request("server/discover")
    old["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1999-01-01"
    resp = post(url, old, **{"MCP-Protocol-Version": "1999-01-01"})
    error = resp.json()["error"]
    assert (resp.status_code, error["code"]) == (400, -32022)
    assert error["data"] == {"supported": [VERSION, "2025-11-25"], "requested": "1999-01-01"}
    for method in ("initialize", "ping", "logging/setLevel", "resources/subscribe", "no/such"):
        resp = post(url, request(method))
        assert (resp.status_code, resp.json()["error"]["code"]) == (404, -32601), method
        if method != "no/such":  # protocol.md P28: a method 2026 removed says how to reach the old era
            assert "2025-11-25" in resp.json()["error"]["message"], method
    resp = call(url, "no_such_tool")
    assert resp.json()["error"] == {"code": -32602, "message": "Unknown tool: no_such_tool"}


def test_unknown_resource_is_invalid_params_with_the_uri(everything: RunningServer) -> None:
    resp = post(everything.url, request("resources/read", {"uri": "test://nope"}))
    assert resp.json()["error"] == {
        "code": -32602,
        "message": "Resource not found: test://nope",
        "data": {"uri": "test://nope"},
    }


def test_bad_arguments_are_a_tool_error(everything: RunningServer) -> None:
    result = call(everything.url, "perform", {"action": 5}).json()["result"]
    assert result["isError"] is True
    assert "action: expected a string" in result["content"][0]["text"]


def test_progress_arrives_on_an_sse_stream_before_the_result(everything: RunningServer) -> None:
    msg = request(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": meta(progressToken="tok-1")},
    )
    resp = post(everything.url, msg)
    assert resp.headers["content-type"].startswith("text/event-stream")
    events = [orjson.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: ")]
    progress = [e["params"]["progress"] for e in events if e.get("method") == "notifications/progress"]
    assert progress == [0, 50, 100]
    assert events[-1]["id"] == msg["id"] and events[-1]["result"]["resultType"] == "complete"


def test_log_notifications_only_when_asked(everything: RunningServer) -> None:
    plain = post(everything.url, request("tools/call", {"name": "test_logging_tool", "arguments": {}}))
    assert plain.headers["content-type"] == "application/json"
    msg = request(
        "tools/call",
        {
            "name": "test_logging_tool",
            "arguments": {},
            "_meta": meta(**{"io.modelcontextprotocol/logLevel": "info"}),
        },
    )
    resp = post(everything.url, msg)
    events = [orjson.loads(line[6:]) for line in resp.text.splitlines() if line.startswith("data: ")]
    assert [e["method"] for e in events[:-1]] == ["notifications/message"] * 3
    bad = request(
        "tools/call",
        {
            "name": "test_logging_tool",
            "arguments": {},
            "_meta": meta(**{"io.modelcontextprotocol/logLevel": "loud"}),
        },
    )
    assert post(everything.url, bad).json()["error"]["code"] == -32602


def test_listen_stream_hears_list_changes(everything: RunningServer) -> None:
    listen = request("subscriptions/listen", {"notifications": {"toolsListChanged": True, "promptsListChanged": False}})
    events: list[dict] = []

    def read() -> None:
        with httpx.stream("POST", everything.url, json=listen, headers=headers_for(listen), timeout=10) as resp:
            for line in resp.iter_lines():
                if line.startswith("data: "):
                    events.append(orjson.loads(line[6:]))
                    if len(events) == 2:
                        return

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 5
    while not events and time.monotonic() < deadline:
        time.sleep(0.02)
    call(everything.url, "test_trigger_prompt_change")  # not asked for: must not arrive
    call(everything.url, "test_trigger_tool_change")
    reader.join(10)
    ack, change = events
    assert ack["method"] == "notifications/subscriptions/acknowledged"
    assert ack["params"]["notifications"] == {"toolsListChanged": True}
    assert change["method"] == "notifications/tools/list_changed"
    assert change["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == listen["id"]


def test_mrtr_only_where_allowed(everything: RunningServer) -> None:
    for method in ("tools/list", "prompts/list"):
        assert post(everything.url, request(method)).json()["result"]["resultType"] == "complete"
    r1 = post(everything.url, request("prompts/get", {"name": "test_input_required_result_prompt"})).json()
    assert r1["result"]["resultType"] == "input_required"
