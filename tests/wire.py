"""Raw wire helpers for tests: build MCP 2026-07-28 requests and POST them exactly as given, over loopback or to a
server in this process (support.inprocess)."""

from __future__ import annotations

import itertools
from typing import Any

import httpx
from support.inprocess import client_for

from baton.protocol.headers import encode_value

VERSION = "2026-07-28"
_ids = itertools.count(1)


def meta(caps: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}} if caps is None else caps,
        "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "0"},
        **extra,
    }


def request(method: str, params: dict[str, Any] | None = None, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    body = dict(params or {})
    body.setdefault("_meta", meta(caps))
    return {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": body}


def headers_for(message: dict[str, Any], **extra: str) -> dict[str, str]:
    h = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": VERSION,
        "Mcp-Method": message["method"],
    }
    params = message.get("params") or {}
    if message["method"] in ("tools/call", "prompts/get"):
        h["Mcp-Name"] = encode_value(params.get("name", ""))
    if message["method"] == "resources/read":
        h["Mcp-Name"] = encode_value(params.get("uri", ""))
    h.update(extra)
    return h


def post(url: str, message: dict[str, Any], **extra: str) -> httpx.Response:
    """POST over loopback, or to a server in this process (support.inprocess) when `url` names one."""
    http = client_for(url)
    if http is not None:
        return http.post(url, json=message, headers=headers_for(message, **extra))
    return httpx.post(url, json=message, headers=headers_for(message, **extra), timeout=10)


def call(
    url: str,
    tool: str,
    arguments: dict[str, Any] | None = None,
    *,
    caps: dict[str, Any] | None = None,
    responses: dict[str, Any] | None = None,
    state: str | None = None,
    **extra: str,
) -> httpx.Response:
    params: dict[str, Any] = {"name": tool, "arguments": arguments or {}}
    if responses is not None:
        params["inputResponses"] = responses
    if state is not None:
        params["requestState"] = state
    return post(url, request("tools/call", params, caps), **extra)


def accept(**content: Any) -> dict[str, Any]:
    return {"action": "accept", "content": content}
