"""What `baton serve --reload` answers while the server file does not load (protocol.md P126).

uvicorn's reloader keeps the port open while the edited file fails to import, so a client would
connect and wait for an answer that never comes. Instead the reloaded process serves this app until
the next save: every HTTP request gets 503 at once, with a JSON-RPC error that says where the reason
is (the terminal, where the load error was printed).
"""

from __future__ import annotations

import orjson

from ..protocol.asgi import Receive, Scope, Send
from ..protocol.errors import INTERNAL_ERROR, McpError
from ..protocol.messages import error_response
from ..web import lifespan

SAID = "the server file does not load: see the terminal"


async def unloaded_app(scope: Scope, receive: Receive, send: Send) -> None:
    """503 with a JSON-RPC error for every HTTP request; lifespan started and stopped at once."""
    if scope["type"] == "lifespan":
        await lifespan(receive, send)
        return
    if scope["type"] != "http":
        return
    body = orjson.dumps(error_response(None, McpError(INTERNAL_ERROR, SAID)))
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 503, "headers": [*headers, (b"retry-after", b"1")]})
    await send({"type": "http.response.body", "body": body})
