"""Interop peer: the official `mcp` SDK's 2.x client (mcp==2.3.0) in its legacy mode, for tests only.

Usage: `python legacy_mcp2_client.py URL` (Streamable HTTP) or `python legacy_mcp2_client.py -- COMMAND ...`
(stdio). `Client(..., mode="legacy")` skips the `server/discover` probe and opens a 2025-11-25 session
with `initialize`; then the calls of `legacy_scenario.CALLS`, its `elicitation_callback` answering each
form as the call says. The transport is the SDK's own (`streamable_http_client` with the SDK's HTTP
client, or `stdio_client`), tapped so the report can show what was sent. Prints the scenario's JSON
report (see `legacy_scenario.py`). Runs in its own venv (`.cache/interop/mcp`), never in Baton's.
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

from legacy_scenario import Report, TapWriter, main, play
from mcp import Client, StdioServerParameters
from mcp.client import ClientRequestContext
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData


@asynccontextmanager
async def tapped(inner: AbstractAsyncContextManager[Any], report: Report) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK transport `inner`, its write stream shown to the report."""
    async with inner as streams:
        read, write = streams[0], streams[1]
        yield read, TapWriter(write, report.message)


@asynccontextmanager
async def http_transport(url: str, report: Report) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's Streamable HTTP transport on the SDK's own HTTP client, hooked to show every exchange."""

    client = report.hooked(create_mcp_http_client())
    async with client, tapped(streamable_http_client(url, http_client=client), report) as streams:
        yield streams


async def run(where: str | list[str], report: Report) -> None:
    async def on_elicit(context: ClientRequestContext, params: ElicitRequestParams) -> ElicitResult | ErrorData:
        action, content = report.answer(params.model_dump(by_alias=True, exclude_none=True, mode="json"))
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    if isinstance(where, str):
        transport = http_transport(where, report)
    else:
        server = StdioServerParameters(command=where[0], args=where[1:], env=dict(os.environ))
        transport = tapped(stdio_client(server), report)
    async with Client(transport, mode="legacy", elicitation_callback=on_elicit) as client:  # type: ignore[arg-type]
        info = client.server_info
        report.protocol, report.server = client.protocol_version, info.name if info else None
        await play(report, client.call_tool, "is_error")


if __name__ == "__main__":
    sys.exit(main("legacy_mcp2_client.py", run))
