"""Sending one JSON-RPC request over Streamable HTTP: standard headers out, JSON or SSE back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import orjson

from ..protocol.constants import NAME_PARAM
from ..protocol.headers import encode_value

Notify = Callable[[dict[str, Any]], Awaitable[None]]


class HttpTransport:
    """One MCP endpoint URL and a pooled HTTP client."""

    def __init__(self, url: str, *, timeout: float = 60.0, headers: dict[str, str] | None = None) -> None:
        self.url = url
        self.extra_headers = dict(headers or {})
        self.http = httpx.AsyncClient(timeout=timeout)

    async def close(self) -> None:
        await self.http.aclose()

    async def request(
        self, message: dict[str, Any], version: str, notify: Notify | None, param_headers: dict[str, str]
    ) -> dict[str, Any]:
        """POST one request; returns its JSON-RPC response (notifications on the way go to `notify`)."""
        method = message["method"]
        if notify is not None:
            message["params"].setdefault("_meta", {})["progressToken"] = f"p{message['id']}"
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "MCP-Protocol-Version": version,
            "Mcp-Method": method,
            **self.extra_headers,
        }
        member = NAME_PARAM.get(method)
        if member is not None:
            headers["Mcp-Name"] = encode_value(str(message["params"].get(member, "")))
        for name, value in param_headers.items():
            headers[f"Mcp-Param-{name}"] = encode_value(value)
        async with self.http.stream("POST", self.url, content=orjson.dumps(message), headers=headers) as resp:
            ctype = resp.headers.get("content-type", "")
            if ctype.startswith("text/event-stream"):
                return await _read_sse(resp, message.get("id"), notify)
            body = await resp.aread()
        if not body:
            raise httpx.HTTPStatusError(
                f"HTTP {resp.status_code} with an empty body", request=resp.request, response=resp
            )
        try:
            data = orjson.loads(body)
        except orjson.JSONDecodeError:
            raise httpx.HTTPStatusError(
                f"HTTP {resp.status_code}: the body is not JSON", request=resp.request, response=resp
            ) from None
        return data if isinstance(data, dict) else {}


async def _read_sse(resp: httpx.Response, rid: Any, notify: Notify | None) -> dict[str, Any]:
    data_lines: list[str] = []
    async for line in resp.aiter_lines():
        if line.startswith(":"):
            continue  # comment / keep-alive
        if line.startswith("data:"):
            data_lines.append(line[5:].lstrip(" "))
            continue
        if line == "" and data_lines:
            message = orjson.loads("\n".join(data_lines))
            data_lines = []
            if "id" in message and message.get("id") == rid and ("result" in message or "error" in message):
                return dict(message)
            if "method" in message and "id" not in message and notify is not None:
                await notify(message)
    raise ConnectionError("the SSE stream ended before the response arrived")
