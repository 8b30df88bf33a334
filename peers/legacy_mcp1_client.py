"""Interop peer: a 2025-11-25 client written with the official `mcp` SDK's last 1.x (mcp==1.30.0), for tests only.

Usage: `python legacy_mcp1_client.py URL` (Streamable HTTP) or `python legacy_mcp1_client.py -- COMMAND ...`
(stdio). One `ClientSession`, one `initialize`, then the calls of `legacy_scenario.CALLS`; its
`elicitation_callback` answers each form as the call says. Prints the scenario's JSON report (see
`legacy_scenario.py`). Runs in its own venv (`.cache/interop/mcp1`), never in Baton's.
"""

from __future__ import annotations

import os
import sys
from contextlib import AsyncExitStack
from typing import Any

from legacy_scenario import Report, TapWriter, main, play
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.context import RequestContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData


async def run(where: str | list[str], report: Report) -> None:
    async def on_elicit(
        context: RequestContext[ClientSession, Any], params: ElicitRequestParams
    ) -> ElicitResult | ErrorData:
        action, content = report.answer(params.model_dump(by_alias=True, exclude_none=True, mode="json"))
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    async with AsyncExitStack() as stack:
        if isinstance(where, str):
            client = await stack.enter_async_context(report.hooked(create_mcp_http_client()))
            read, write, _ = await stack.enter_async_context(streamable_http_client(where, http_client=client))
        else:
            server = StdioServerParameters(command=where[0], args=where[1:], env=dict(os.environ))
            read, write = await stack.enter_async_context(stdio_client(server))
        session = await stack.enter_async_context(
            ClientSession(read, TapWriter(write, report.message), elicitation_callback=on_elicit)  # type: ignore[arg-type]
        )
        init = await session.initialize()
        report.protocol, report.server = init.protocolVersion, init.serverInfo.name
        await play(report, session.call_tool, "isError")


if __name__ == "__main__":
    sys.exit(main("legacy_mcp1_client.py", run))
