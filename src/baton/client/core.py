"""`Client`: requests with full `_meta` and standard headers, and the multi round-trip driver.

The driver follows digest §4.4: a new JSON-RPC id on every leg, `requestState` echoed byte for
byte and never invented, answers for exactly the keys asked, nothing shared between requests in
flight, bounded rounds and time, a missing `resultType` treated as complete.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from ..protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
)
from ..protocol.errors import McpError
from ..protocol.headers import header_param_specs, header_text
from ..transport.http_client import HttpTransport

Handler = Callable[["InputRequest"], Awaitable[dict[str, Any]]]


class ClientError(Exception):
    """A failure detected by the client itself (never a JSON-RPC error received from the server)."""


@dataclass(frozen=True, slots=True)
class InputRequest:
    """One question a server asked inside `input_required`."""

    key: str
    method: str
    params: dict[str, Any]


class Client:
    """A client of one MCP server over Streamable HTTP.

    `elicit` answers elicitation requests (form and URL); `sample` and `roots` are deprecated and
    declared only when given.
    """

    def __init__(
        self,
        url: str,
        *,
        elicit: Handler | None = None,
        sample: Handler | None = None,
        roots: Handler | None = None,
        name: str = "baton-client",
        version: str = "0.1.0",
        max_rounds: int = 10,
        deadline_s: float = 300.0,
        headers: dict[str, str] | None = None,
    ) -> None:
        self.transport = HttpTransport(url, headers=headers)
        self.handlers = {"elicitation/create": elicit, "sampling/createMessage": sample, "roots/list": roots}
        caps: dict[str, Any] = {}
        if elicit is not None:
            caps["elicitation"] = {"form": {}, "url": {}}
        if sample is not None:
            caps["sampling"] = {}
        if roots is not None:
            caps["roots"] = {}
        self.capabilities = caps
        self.client_info = {"name": name, "version": version}
        self.max_rounds = max_rounds
        self.deadline_s = deadline_s
        self._ids = itertools.count(1)
        self._header_params: dict[str, dict[str, tuple[str, ...]]] = {}

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.transport.close()

    def _meta(self) -> dict[str, Any]:
        return {
            META_PROTOCOL_VERSION: PROTOCOL_VERSION,
            META_CLIENT_CAPABILITIES: self.capabilities,
            META_CLIENT_INFO: self.client_info,
        }

    async def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        """Send one request (one leg); returns its result or raises the server's McpError."""
        body = {**(params or {}), "_meta": {**self._meta(), **(params or {}).get("_meta", {})}}
        message = {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": body}
        headers = {}
        if method == "tools/call":
            specs = self._header_params.get(str(body.get("name")), {})
            for name, path in specs.items():
                value: Any = body.get("arguments") or {}
                for part in path:
                    value = value.get(part) if isinstance(value, dict) else None
                text = header_text(value)
                if text is not None:
                    headers[name] = text
        reply = await self.transport.request(message, PROTOCOL_VERSION, None, headers)
        if "error" in reply:
            err = reply["error"]
            raise McpError(err.get("code", 0), err.get("message", ""), err.get("data"))
        result = reply.get("result")
        if not isinstance(result, dict):
            raise ClientError(f"the server answered {method} without a result object")
        return result

    async def discover(self) -> dict[str, Any]:
        return await self.request("server/discover")

    async def list_tools(self) -> list[dict[str, Any]]:
        tools: list[dict[str, Any]] = []
        cursor = None
        while True:
            result = await self.request("tools/list", {"cursor": cursor} if cursor else None)
            for tool in result.get("tools", []):
                try:
                    self._header_params[tool["name"]] = header_param_specs(tool.get("inputSchema") or {})
                except ValueError:
                    continue  # a tool with an invalid x-mcp-header annotation is dropped
                tools.append(tool)
            cursor = result.get("nextCursor")
            if not cursor:
                return tools

    async def call_tool(self, name: str, arguments: dict[str, Any] | None = None) -> dict[str, Any]:
        """Call a tool, answering every round of questions until the result is complete."""
        return await self.drive("tools/call", {"name": name, "arguments": arguments or {}})

    async def read_resource(self, uri: str) -> dict[str, Any]:
        return await self.drive("resources/read", {"uri": uri})

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> dict[str, Any]:
        return await self.drive("prompts/get", {"name": name, "arguments": arguments or {}})

    async def drive(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The MRTR loop for one request; every leg is a new request with the original params."""
        deadline = time.monotonic() + self.deadline_s
        extra: dict[str, Any] = {}
        for _ in range(self.max_rounds):
            if time.monotonic() > deadline:
                raise ClientError(f"{method}: the flow ran past its deadline of {self.deadline_s} s")
            result = await self.request(method, {**params, **extra})
            kind = result.get("resultType", "complete")  # absent: a pre-2026 server, complete
            if kind == "complete":
                return result
            if kind != "input_required":
                raise ClientError(f"{method}: unknown resultType {kind!r}")
            asks = result.get("inputRequests") or {}
            extra = {}
            if asks:
                extra["inputResponses"] = {key: await self._answer(key, ask) for key, ask in asks.items()}
            else:
                await asyncio.sleep(0.05)  # state only: the server shed load; retry after a pause
            if "requestState" in result:
                extra["requestState"] = result["requestState"]
        raise ClientError(f"{method}: still asking after {self.max_rounds} rounds")

    async def _answer(self, key: str, ask: dict[str, Any]) -> dict[str, Any]:
        method = ask.get("method")
        handler = self.handlers.get(str(method))
        if handler is None:
            raise ClientError(f"the server asked {method!r}, which this client cannot answer")
        return await handler(InputRequest(key, str(method), ask.get("params") or {}))
