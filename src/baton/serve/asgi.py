"""ASGI plumbing shared by the HTTP transport's modules: the callable types, sending a whole JSON or
empty response or a JSON-RPC reply with its status, and waiting for the client to go away."""

from __future__ import annotations

from typing import Any

import orjson

from ..protocol.asgi import Receive, Send
from ..protocol.errors import http_status
from ..server.exchange import Reply

HeaderPairs = list[tuple[bytes, bytes]]


async def send_json(send: Send, status: int, head: HeaderPairs, payload: dict[str, Any]) -> None:
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


async def send_reply(send: Send, head: HeaderPairs, reply: Reply) -> None:
    """A JSON-RPC reply: 200 for a result, the error's status for an error, or the guard's refusal (401, 403,
    or 503 when the credentials cannot be checked) with its `WWW-Authenticate` and `Retry-After`."""
    body = orjson.dumps(reply.body)
    head = [*head, (b"content-length", b"%d" % len(body))]
    if reply.status is None and reply.www_authenticate is None:
        status = 200 if reply.code is None else http_status(reply.code)
    else:
        status = reply.status or 401
        if reply.www_authenticate is not None:
            head.append((b"www-authenticate", reply.www_authenticate.encode()))
        if reply.retry_after_s is not None:
            head.append((b"retry-after", str(reply.retry_after_s).encode()))
    await send({"type": "http.response.start", "status": status, "headers": head})
    await send({"type": "http.response.body", "body": body})


async def send_empty(send: Send, status: int, head: HeaderPairs) -> None:
    """A response without a body (202 for an accepted notification, 200 for a DELETE, 405)."""
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-length", b"0"), *head]})
    await send({"type": "http.response.body", "body": b""})


async def disconnected(receive: Receive) -> None:
    """Return once the client has closed the connection (the request body was read before)."""
    while (await receive())["type"] != "http.disconnect":
        pass
