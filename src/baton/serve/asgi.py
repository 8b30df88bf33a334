"""ASGI plumbing shared by the HTTP transport's modules: the callable types, sending a whole JSON or
empty response, and waiting for the client to go away."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import orjson

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
Head = list[tuple[bytes, bytes]]


async def send_json(send: Send, status: int, head: Head, payload: dict[str, Any]) -> None:
    """One JSON response; `head` holds the content type and any other headers but the length."""
    body = orjson.dumps(payload)
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*head, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int, head: Head) -> None:
    """A response without a body (202 for an accepted notification, 200 for a DELETE, 405)."""
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0"), *head]})
    await send({"type": "http.response.body", "body": b""})


async def disconnected(receive: Receive) -> None:
    """Return once the client has closed the connection (the request body was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
