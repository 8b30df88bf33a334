"""The host's side of `baton bridge`: newline-delimited JSON-RPC on stdin and stdout (protocol.md P134).

Each request runs in a task of its own, sorted by era as `baton serve --stdio` sorts them: with the 2026
`_meta` it is forwarded as one leg; otherwise it belongs to the host's one 2025-11-25 session, opened by
its `initialize` (answered with what the server offers), and is driven to its end. Responses the host
writes answer the bridge's own requests (its questions, `HostAsker`). `notifications/cancelled` stops the
request it names, which closes its way to the server. Once the session's `notifications/initialized` has
come, a 2026 server's list changes are relayed to it (`Remote.relay_list_changes`). EOF on stdin, SIGINT
or SIGTERM end the bridge at once: the requests in flight are cancelled (protocol.md P137). Every failure
is one line on stderr and a JSON-RPC error for the host; stdout carries only MCP messages.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Coroutine
from typing import Any, BinaryIO

import orjson

from ..client import ClientError
from ..client.http11 import HttpError
from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import HANDSHAKE_VERSION, LOG_LEVELS
from ..protocol.era import is_modern
from ..protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, McpError, invalid_params
from ..protocol.messages import Message, error_response, result_response
from ..serve.stdio import BadLine, InFlight, incoming, peer_lines
from ..server.handshake import handshake_error
from .ask import HostAsker
from .remote import Remote

log = logging.getLogger("baton.bridge")
_NOT_INITIALIZED = (
    "Invalid request: initialize first, or send the 2026-07-28 _meta"
    " (io.modelcontextprotocol/protocolVersion) on every request"
)


class Lines:
    """The protocol stream to the host: one JSON-RPC message a line, each written whole (a write never awaits,
    so concurrent requests cannot interleave within a line)."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out

    def write(self, payload: dict[str, Any]) -> None:
        self.out.write(orjson.dumps(payload) + b"\n")
        self.out.flush()

    async def send(self, payload: dict[str, Any]) -> None:
        self.write(payload)


class HostSide:
    """Serves one host over a pair of byte streams, forwarding to `remote`."""

    def __init__(self, remote: Remote, asker: HostAsker, reader: asyncio.StreamReader, lines: Lines) -> None:
        self.remote = remote
        self.asker = asker
        self.reader = reader
        self.write = lines.write
        self.send = lines.send
        self.inflight = InFlight()
        self.initialized = False
        self.log_level: str | None = None  # the 2025-11-25 host's logging/setLevel
        self.signal: int | None = None
        self._reading: asyncio.Future[None] | None = None
        self._listening: asyncio.Future[None] | None = None  # the list changes relayed to a 2025-11-25 host

    def stop(self, signum: int) -> None:
        """SIGINT or SIGTERM: stop reading and cancel what is in flight, now (P137)."""
        self.signal = signum
        if self._reading is not None:
            self._reading.cancel()

    async def run(self) -> None:
        self._reading = asyncio.ensure_future(self._read())
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        # Cancelled first: a question failed before its request would read as the host's refusal, and the
        # request would go on to the server without the answer.
        tasks = [*self.inflight.values(), *([self._listening] if self._listening is not None else [])]
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.gather(*tasks, return_exceptions=True)
        self.asker.outbound.fail_all("the host closed stdin" if self.signal is None else "the bridge is stopping")

    async def _read(self) -> None:
        async for line in peer_lines(self.reader, self.write):
            first = self._dispatch(line)
            if first is not None:  # initialize: answered before the session's next line is read
                await first

    def _dispatch(self, line: bytes) -> Coroutine[Any, Any, None] | None:
        try:
            msg = incoming(line)
        except BadLine as exc:
            self.write(error_response(exc.rid, exc.error))
            return None
        if not isinstance(msg, Message):
            self.asker.outbound.answer(msg)  # the host's answer to one of the bridge's questions
            return None
        if not msg.is_request:
            self._notified(msg)
            return None
        assert msg.id is not None
        if msg.id in self.inflight:
            error = McpError(INVALID_REQUEST, f"Invalid request: id {msg.id!r} is already in use")
            self.write(error_response(msg.id, error))
            return None
        modern = is_modern(msg.method, msg.params)
        if msg.method == "initialize" and not modern:
            return self._initialize(msg)
        self.inflight.start(msg.id, self._answer(msg, modern))
        return None

    def _notified(self, msg: Message) -> None:
        if msg.method == "notifications/cancelled":
            self.inflight.cancel(msg.params)  # its leg to the server is closed, its questions to the host withdrawn
        elif msg.method == "notifications/initialized" and self.initialized and self._listening is None:
            self.remote.session_host = self.write  # a 2025-11-25 server's notices, from now on (P161)
            self._listening = asyncio.ensure_future(self.remote.relay_list_changes(self.send))
        # the host's other notifications need nothing from the bridge

    async def _initialize(self, msg: Message) -> None:
        if self.initialized:
            error = McpError(INVALID_REQUEST, "Invalid request: this bridge is already initialized")
            self.write(error_response(msg.id, error))
            return
        caps = msg.params.get("capabilities")
        try:
            result = await self.remote.initialize_result()
        except McpError as exc:
            self.write(error_response(msg.id, handshake_error(exc)))
            return
        except Exception as exc:  # every failure is one line, and the bridge keeps serving
            self.write(error_response(msg.id, self._failed("initialize", exc)))
            return
        self.asker.host = ClientCapabilities.parse(caps if isinstance(caps, dict) else {})
        self.initialized = True
        self.write(result_response(msg.id, result))

    async def _answer(self, msg: Message, modern: bool) -> None:
        try:
            if modern and msg.method == "subscriptions/listen":  # its notices tagged with the host's id (P199)
                result = await self.remote.host_listen(msg.id, msg.params, self.send)
            elif modern:
                result = await self.remote.modern_request(msg.method, msg.params, self.send)
            else:
                result = await self._in_session(msg)
        except asyncio.CancelledError:
            return  # the host cancelled it (or the bridge is ending): nothing more is sent for it
        except McpError as exc:
            self.write(error_response(msg.id, exc if modern else handshake_error(exc)))
            return
        except Exception as exc:  # every failure is one line, and the bridge keeps serving
            self.write(error_response(msg.id, self._failed(msg.method, exc)))
            return
        self.write(result_response(msg.id, result))

    async def _in_session(self, msg: Message) -> dict[str, Any]:
        if msg.method == "ping":  # answered here: the host asks whether the bridge is alive
            return {}
        if not self.initialized:
            raise McpError(INVALID_REQUEST, _NOT_INITIALIZED)
        if msg.method == "logging/setLevel":
            level = msg.params.get("level")
            if level not in LOG_LEVELS:
                raise invalid_params(f"Invalid params: level is one of {', '.join(LOG_LEVELS)}")
            self.log_level = level
            if self.remote.client.era == HANDSHAKE_VERSION:
                self.remote.log_level = level  # set again in a session the server reopens (P162)
                await self.remote.client.request("logging/setLevel", {"level": level})
            return {}
        return await self.remote.session_request(msg.method, msg.params, self.log_level, self.send)

    def _failed(self, method: str, exc: Exception) -> McpError:
        """One line on stderr for a request the bridge could not forward, and the host's error."""
        what = describe(exc)
        log.warning("%s failed: %s", method, what)
        return McpError(INTERNAL_ERROR, f"baton bridge: {what}")


def describe(exc: Exception) -> str:
    """What went wrong, in one line, without a traceback."""
    if isinstance(exc, HttpError):
        return f"the server answered: {exc}"
    if isinstance(exc, ClientError):
        return str(exc)
    if isinstance(exc, TimeoutError):  # before OSError, of which it is one
        return "the server did not answer in time"
    if isinstance(exc, OSError):
        return f"cannot reach the server: {exc or type(exc).__name__}"
    return f"{type(exc).__name__}: {exc}"
