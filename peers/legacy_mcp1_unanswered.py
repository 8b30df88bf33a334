"""Interop peer: an `mcp==1.30.0` client that never answers a question, for tests only.

Usage: `python legacy_mcp1_unanswered.py MODE TOOL CITY (URL | -- COMMAND ...)`. MODE `none` declares no
elicitation (no callback, as many desktop hosts); `hang` declares it and its callback never returns (a
host that drops the question). Calls TOOL once with `{"city": CITY}`.

mcp 1.x runs a server request's callback inside its receive loop, so a callback that never returns stops
the session from reading anything more: the tool's response would never be seen. The peer therefore taps
what the transport delivers before the session reads it, and takes the response from there. It prints
one JSON line: `{"protocol", "is_error", "text", "seconds", "seen", "error"}`, `seen` being the methods
(or `response`) of every message the server sent after `initialize`. Runs in its own venv, never in Baton's.
"""

from __future__ import annotations

import json
import math
import os
import sys
import time
import traceback
from contextlib import AsyncExitStack
from typing import Any

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.context import RequestContext
from mcp.types import ElicitRequestParams, ElicitResult, ErrorData

DEADLINE_S = 60.0


async def never(context: RequestContext[ClientSession, Any], params: ElicitRequestParams) -> ElicitResult | ErrorData:
    await anyio.Event().wait()  # the question is shown nowhere and never answered
    raise AssertionError("unreachable")


async def run(mode: str, tool: str, city: str, where: list[str], report: dict[str, Any]) -> None:
    async with AsyncExitStack() as stack:
        if where[0] != "--":
            read, write, _ = await stack.enter_async_context(streamable_http_client(where[0]))
        else:
            server = StdioServerParameters(command=where[1], args=where[2:], env=dict(os.environ))
            read, write = await stack.enter_async_context(stdio_client(server))
        tapped_send, tapped = anyio.create_memory_object_stream[Any](math.inf)
        answered = anyio.Event()
        calling = False

        async def tap() -> None:
            async for item in read:
                message = getattr(item, "message", None)
                raw = message.model_dump(by_alias=True, exclude_none=True) if message is not None else {}
                if calling:
                    report["seen"].append(raw.get("method", "response"))
                    result = raw.get("result")
                    if isinstance(result, dict) and "content" in result:
                        report["is_error"] = bool(result.get("isError"))
                        report["text"] = " ".join(c.get("text", "") for c in result["content"])
                        answered.set()
                await tapped_send.send(item)

        callback = never if mode == "hang" else None
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(tap)
            session = await stack.enter_async_context(ClientSession(tapped, write, elicitation_callback=callback))
            init = await session.initialize()
            report["protocol"] = init.protocolVersion
            calling = True
            started = time.monotonic()
            tasks.start_soon(session.call_tool, tool, {"city": city})
            with anyio.fail_after(DEADLINE_S):
                await answered.wait()
            report["seconds"] = round(time.monotonic() - started, 3)
            finish(report)  # now: a session stuck in its callback would not tear down cleanly


def main() -> int:
    if len(sys.argv) < 5 or sys.argv[1] not in ("none", "hang"):
        print(__doc__, file=sys.stderr)
        return 2
    report: dict[str, Any] = {"protocol": None, "is_error": None, "text": None, "seconds": None, "seen": []}
    report["error"] = None
    try:
        anyio.run(run, sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:], report)
    except BaseException as exc:  # the report says it; the traceback goes to stderr
        report["error"] = f"{type(exc).__name__}: {exc}"
        traceback.print_exc()
    finish(report)
    return 1


def finish(report: dict[str, Any]) -> None:
    """Print the report and leave at once (the server subprocess goes with our stdin)."""
    print(json.dumps(report), flush=True)
    os._exit(0 if report["error"] is None else 1)


if __name__ == "__main__":
    sys.exit(main())
