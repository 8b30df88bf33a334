"""The ASGI callable types (scope, receive, send) that Baton's HTTP apps share: the server's, the connect
kit's pages and `baton dev`'s page."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
