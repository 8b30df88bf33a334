"""`Client(on_message=...)`: every JSON-RPC message the client sends or reads, handed to a callback.

Tools that show the exchange (`baton dev`'s raw view) use it; nothing else pays for it (one `None`
check per leg). The callback gets the message dict itself, not a copy: it must not change it, and a
sent request may still gain its `progressToken` inside the transport, so read it after the leg if
the exact bytes matter. It is called in the task that sends or reads the message, and must not block.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

from .callbacks import Notify

Direction = Literal["sent", "received"]
MessageTap = Callable[[Direction, dict[str, Any]], None]


def tapped(tap: MessageTap | None, notify: Notify | None) -> Notify | None:
    """`notify` with every notification it gets shown to `tap` first (`notify` itself when there is no tap)."""
    if tap is None or notify is None:
        return notify

    async def seen(message: dict[str, Any]) -> None:
        tap("received", message)
        await notify(message)

    return seen
