"""The stdio transport (MCP 2026-07-28): newline-delimited JSON on stdin/stdout, requests run concurrently.

stdout carries only MCP messages, built by `baton.protocol.messages`; logs go to stderr.
`notifications/cancelled` stops the request it names (and ends a listen stream); nothing more is
written for it. EOF on stdin ends the server after the requests in flight finish.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from typing import Any, BinaryIO

import orjson

from ..connect import mount_default_kit
from ..protocol.errors import INVALID_REQUEST, McpError
from ..protocol.messages import (
    Message,
    RequestId,
    error_response,
    notification,
    parse,
    request_id_of,
    result_response,
)
from ..server import Exchange, RequestInfo, Server
from ..server.subscriptions import Subscription

log = logging.getLogger("baton.stdio")
MAX_LINE = 16 * 1024 * 1024


class StdioServer:
    """Serves one `Server` over a pair of byte streams (by default this process's stdin and stdout)."""

    def __init__(self, server: Server, reader: asyncio.StreamReader, out: BinaryIO) -> None:
        self.server = server
        self.reader = reader
        self.out = out
        self.inflight: dict[RequestId, asyncio.Task[None]] = {}
        self.info = RequestInfo("stdio")

    def write(self, payload: dict[str, Any]) -> None:
        # One message per line: orjson never emits a raw newline inside a document.
        self.out.write(orjson.dumps(payload) + b"\n")
        self.out.flush()

    async def run(self) -> None:
        _ = self.server.sealer  # load the key ring before the first request
        mount_default_kit(self.server)  # ctx.secret asks for the connect kit's pages
        while True:
            try:
                line = await self.reader.readline()
            except ValueError:  # a line over the limit: skip it, report, keep serving
                self.write(
                    error_response(None, McpError(INVALID_REQUEST, f"Message too large (limit {MAX_LINE} bytes)"))
                )
                continue
            if not line:
                break
            if not line.strip():
                continue
            self._dispatch(line)
        if self.inflight:
            await asyncio.gather(*self.inflight.values(), return_exceptions=True)
        await self.server.aclose()

    def _dispatch(self, line: bytes) -> None:
        try:
            msg = parse(line)
        except McpError as exc:
            self.write(error_response(request_id_of(line), exc))
            return
        if not msg.is_request:
            if msg.method == "notifications/cancelled":
                rid = msg.params.get("requestId")
                task = self.inflight.get(rid) if isinstance(rid, (str, int)) else None
                if task is not None:
                    task.cancel()
            return  # other notifications are accepted and dropped
        if msg.id in self.inflight:
            self.write(
                error_response(msg.id, McpError(INVALID_REQUEST, f"Invalid request: id {msg.id!r} is already in use"))
            )
            return
        assert msg.id is not None
        task = asyncio.ensure_future(self._serve(msg))
        self.inflight[msg.id] = task
        rid = msg.id
        task.add_done_callback(lambda _task: self.inflight.pop(rid, None))

    async def _serve(self, msg: Message) -> None:
        async def emit(method: str, params: dict[str, Any]) -> None:
            self.write(notification(method, params))

        try:
            reply = await self.server.handle(msg, Exchange(self.info, emit))
        except asyncio.CancelledError:
            return  # cancelled by the client: nothing more is sent for this request
        if isinstance(reply, Subscription):
            await self._listen(reply)
            return
        self.write(reply.body)

    async def _listen(self, sub: Subscription) -> None:
        try:
            self.write(notification(*sub.acknowledgement()))
            async for method, params in sub.notifications():
                self.write(notification(method, params))
        except asyncio.CancelledError:
            return
        finally:
            self.server.hub.close(sub)
        # The server ended it: send the listen result and, for older clients, the cancel (protocol.md P20).
        self.write(result_response(sub.listen_id, sub.result()))
        self.write(
            notification("notifications/cancelled", {"requestId": sub.listen_id, "reason": "server shutting down"})
        )


async def serve_stdio_async(server: Server) -> None:
    """Serve on this process's stdin/stdout until stdin closes."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_LINE)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    # Keep stray print() calls in user code off the protocol stream.
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    sys.stdout = sys.stderr
    with contextlib.closing(out):
        await StdioServer(server, reader, out).run()


def serve_stdio(server: Server) -> None:
    """Blocking: serve `server` over stdio (uvloop when available)."""
    try:
        import uvloop

        uvloop.run(serve_stdio_async(server))
    except ImportError:
        asyncio.run(serve_stdio_async(server))
