"""The server's HTTP request heads through the whole ASGI app: Host, Origin, Accept, Content-Type, Content-Length,
the MCP headers, `Mcp-Session-Id` (a live session's among the choices), `Last-Event-ID` and `X-Forwarded-For`
(protocol.md P228: the peer is loopback, a trusted proxy), with the method,
path and body the input picks. An exception out of the app, a 5xx, or no response at all is a finding."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

import atheris

from baton.serve.http import HttpApp

from ..harness import Finding, Target, run_async
from ._server import make_server

APP = HttpApp(make_server(), instance="fuzz")
META = (
    b'"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}'
)
BODIES = [
    b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{' + META + b"}}",
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a"},' + META + b"}}",
    b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"book","arguments":{"city":"a"},'
    b'"_meta":{"progressToken":1,' + META[8:] + b"}}",
    b'{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2025-11-25",'
    b'"capabilities":{"elicitation":{}},"clientInfo":{"name":"f","version":"1"}}}',
    b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"book","arguments":{"city":"a"}}}',
    b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
    b'{"jsonrpc":"2.0","id":"baton-1","result":{"action":"accept","content":{"day":"x"}}}',
    b'{"jsonrpc":"2.0","id":6,"method":"subscriptions/listen","params":{' + META + b"}}",
]
NAMES = [
    b"host",
    b"origin",
    b"accept",
    b"content-type",
    b"content-length",
    b"mcp-protocol-version",
    b"mcp-session-id",
    b"last-event-id",
    b"mcp-method",
    b"mcp-name",
    b"authorization",
    b"x-forwarded-for",
]
VALUES = [
    b"127.0.0.1:8000",
    b"localhost",
    b"http://localhost:80@other.example",
    b"http://127.0.0.1:8000",
    b"application/json, text/event-stream",
    b"text/event-stream",
    b"application/json",
    b"2025-11-25",
    b"2026-07-28",
    b"tools/call",
    b"echo",
    b"0",
    b"1-99",
    b"99999999999999999999",
    b"203.0.113.7, 127.0.0.1",
    b"[2001:db8::1]:443,::1",
]


async def _call(method: str, path: str, headers: list[tuple[bytes, bytes]], body: bytes) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []
    delivered = False

    async def receive() -> MutableMapping[str, Any]:
        nonlocal delivered
        if delivered:
            return {"type": "http.disconnect"}
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: MutableMapping[str, Any]) -> None:
        sent.append(dict(message))

    scope = {"type": "http", "method": method, "path": path, "headers": headers, "client": ("127.0.0.1", 1)}
    await APP(scope, receive, send)
    return sent


def _session_id() -> bytes:
    head = [(b"host", b"127.0.0.1"), (b"content-type", b"application/json"), (b"accept", b"application/json")]
    start = run_async(_call("POST", "/mcp", head, BODIES[3]))[0]
    sid: bytes = dict(start["headers"])[b"mcp-session-id"]
    return sid


VALUES.append(_session_id())


def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    method = fdp.PickValueInList(["POST", "POST", "GET", "DELETE", "PUT", "OPTIONS"])
    path = fdp.PickValueInList(["/mcp", "/mcp", "/connect/x", "/other"])
    headers = []
    for _ in range(fdp.ConsumeIntInRange(0, 8)):
        name = fdp.PickValueInList(NAMES) if fdp.ConsumeIntInRange(0, 7) else fdp.ConsumeBytes(8).lower()
        value = fdp.PickValueInList(VALUES) if fdp.ConsumeBool() else fdp.ConsumeBytes(fdp.ConsumeIntInRange(0, 64))
        headers.append((name, value))
    body = fdp.PickValueInList(BODIES) if fdp.ConsumeBool() else fdp.ConsumeBytes(fdp.remaining_bytes())
    sent = run_async(_call(method, path, headers, body))
    starts = [m for m in sent if m["type"] == "http.response.start"]
    if len(starts) != 1:
        raise Finding(f"{len(starts)} response heads for {method} {path} {headers!r}")
    if starts[0]["status"] >= 500:
        raise Finding(f"HTTP {starts[0]['status']} for {method} {path} {headers!r} {body[:200]!r}")


TARGET = Target("http_request_heads", "the server's HTTP request heads (Host, Origin, MCP headers, ...)", one)
