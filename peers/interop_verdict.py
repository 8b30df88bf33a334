"""The verdict both interop client peers give (`mcp_client.py`, `fastmcp_client.py`), in one place.

Each peer runs its library's client against a server's `perform` tool and hands its `run(url)` here:
print the final text; exit 0 only on `done: interop` after exactly one question, 1 otherwise, 2 on
bad usage. Imported from the peer's own folder, so it needs nothing but the standard library.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Awaitable, Callable, Sized


def verdict(name: str, run: Callable[[str], Awaitable[str]], asked: Sized) -> int:
    if len(sys.argv) != 2:
        print(f"usage: {name} URL", file=sys.stderr)
        return 2
    text = asyncio.run(run(sys.argv[1]))
    print(text)
    if len(asked) != 1:
        print(f"expected exactly one question, got {len(asked)}", file=sys.stderr)
        return 1
    return 0 if text == "done: interop" else 1
