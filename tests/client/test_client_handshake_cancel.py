"""A 2025-11-25 stdio session whose handshake a cancelled call interrupted: the next call uses it, and the
server never gets `initialize` twice."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest
from support.paths import BATON, ROOT

from baton.client import Client

pytestmark = pytest.mark.process  # a stdio server, started by the client
EVERYTHING = [BATON, "serve", str(ROOT / "examples" / "everything.py"), "--stdio", "--quiet"]


def test_a_call_cancelled_during_the_handshake_leaves_the_session_for_the_next() -> None:
    sent: list[str] = []
    initializing = asyncio.Event()

    def tap(direction: str, message: dict[str, Any]) -> None:
        if direction == "sent" and "method" in message:
            sent.append(message["method"])
            if message["method"] == "initialize":
                initializing.set()

    async def flow() -> str:
        async with Client(EVERYTHING, protocol="2025-11-25", on_message=tap) as client:
            first = asyncio.ensure_future(client.call_tool("test_simple_text"))
            await initializing.wait()  # the server is starting: its answer to initialize is on its way
            first.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await first
            return (await client.call_tool("test_simple_text")).text

    assert asyncio.run(asyncio.wait_for(flow(), 60)) == "This is a simple text response for testing."
    assert sent.count("initialize") == 1, sent
