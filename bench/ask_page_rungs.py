"""Which rung of the ask ladder each example tool takes, for each kind of client (protocol.md P138, P145).

Calls the tools of examples/demo.py:demo_server (examples/projects.py plus `deploy_project`) in process, from
Baton's client declaring no elicitation, form only, URL only, or both, in both protocol versions, and prints
a table: `native` (the client was asked), `page` (the result gives the server page's link), `error`
(-32021, or a tool error in a 2025-11-25 session). The in-process kit has a loopback public URL, as
`baton serve --http` with `$BATON_PUBLIC_URL` on loopback would.

Usage: `.venv/bin/python bench/ask_page_rungs.py`
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

from baton import Declined
from baton.protocol.errors import McpError
from baton.testing import memory_client

os.environ.setdefault("BATON_LEDGER", "memory:")  # each server its own: nothing left in the data directory
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from demo import demo_server  # examples/ is not a package

CALLS = {
    "delete_project": {"project_id": "apollo"},
    "create_project": {"name": "atlas"},
    "deploy_project": {"project_id": "gemini"},
    "contact_support": {"topic": "billing"},
}
KINDS = {"none": (), "form only": ("form",), "url only": ("url",), "form + url": ("form", "url")}


async def rung(tool: str, modes: tuple[str, ...], protocol: str) -> str:
    asked: list[str] = []

    async def answer(question: Any) -> Any:
        asked.append(question.mode)
        return Declined()

    handlers = {f"on_{mode}": answer for mode in modes}
    async with memory_client(demo_server(), protocol=protocol, **handlers) as client:
        try:
            result = await client.call_tool(tool, CALLS[tool])
        except McpError as exc:
            return f"error ({exc.code})"
    if asked:
        return "native"
    if "is waiting for the user" in result.text:
        return "page"
    return "error (tool error)" if result.is_error else f"? {result.text[:40]}"


async def main() -> None:
    for protocol in ("2026-07-28", "2025-11-25"):
        print(f"\n{protocol}\n| tool | " + " | ".join(KINDS) + " |\n|---|" + "---|" * len(KINDS))
        for tool in CALLS:
            cells = [await rung(tool, modes, protocol) for modes in KINDS.values()]
            print(f"| {tool} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    asyncio.run(main())
