"""The client side of stdio: start the server as a subprocess and exchange one JSON message per line.

Responses are matched to requests by id, so requests may run concurrently; notifications go to the
callback of the request they name (by progress token, or a `subscriptions/listen` stream's by its
`subscriptionId`); one that names none (a log message) goes to the only request pending, if there
is one, and is dropped otherwise. In a 2025-11-25 session (`inbound` set)
the server's own requests are answered through it, on stdin, and the notifications it handles
(elicitation complete, cancelled) reach it (protocol.md P33, P34). Stdio does not say which request
an ask belongs to; one that arrives while a single request is pending is taken as that request's
and stopped when it ends. A line over 16 MiB is dropped whole, up to its newline, and fails the one
request pending, if there is one (protocol.md P116). The server runs in a process group of its own, so
a terminal's Ctrl-C reaches only this client, which then closes it: EOF, then SIGTERM, then SIGKILL (MCP
stdio transport; protocol.md P133). The server's stderr is this process's, unless `on_stderr` is given:
then each line of it is handed to that callable (which `baton dev` shows on its page and in the terminal).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from ..protocol.constants import META_SUBSCRIPTION_ID
from ..protocol.lines import MAX_LINE, LineTooLong, read_line
from ..protocol.messages import notification
from .callbacks import Notify
from .errors import ClientError
from .inbound import Inbound

log = logging.getLogger("baton.client")


_STDERR_PIECE = 1 << 20


class StdioTransport:
    """One server subprocess speaking newline-delimited JSON-RPC."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        env: dict[str, str] | None = None,
        on_stderr: Callable[[bytes], None] | None = None,
    ) -> None:
        if not command:
            raise ValueError("a stdio server needs a command")
        self.command = list(command)
        self.env = env
        self.on_stderr = on_stderr
        self._stderr: asyncio.Task[None] | None = None
        self.proc: asyncio.subprocess.Process | None = None
        self._pending: dict[Any, asyncio.Future[dict[str, Any]]] = {}
        self._notify: dict[Any, Notify] = {}
        self._listens: set[Any] = set()  # ids of pending `subscriptions/listen` requests
        self._asked: dict[Any, list[asyncio.Task[None]]] = {}  # request id -> the server's asks that are its
        self._reader: asyncio.Task[None] | None = None
        self._tokens = itertools.count(1)
        self.inbound: Inbound | None = None  # set once a 2025-11-25 session is open on this process
        self._starting = asyncio.Lock()  # two first requests at once start one process, not two

    async def _start(self) -> asyncio.subprocess.Process:
        if self.proc is not None:
            return self.proc
        async with self._starting:
            return await self._spawn()

    async def _spawn(self) -> asyncio.subprocess.Process:
        if self.proc is None:
            self.proc = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=None if self.on_stderr is None else asyncio.subprocess.PIPE,
                env=self.env,
                limit=MAX_LINE,
                # Its own process group (P133): Ctrl-C at the terminal reaches this client, which ends the server
                # the MCP way (close stdin, wait, SIGTERM, wait, SIGKILL), never a server still importing its code.
                process_group=0,
            )
            self._reader = asyncio.ensure_future(self._read())
            if self.on_stderr is not None:
                self._stderr = asyncio.ensure_future(self._read_stderr(self.on_stderr))
        return self.proc

    async def _read_stderr(self, hand: Callable[[bytes], None]) -> None:
        assert self.proc is not None and self.proc.stderr is not None
        buffered = b""
        while chunk := await self.proc.stderr.read(65536):  # not readline: a long line must not stop the reading
            *lines, buffered = (buffered + chunk).split(b"\n")
            for line in lines:
                hand(line + b"\n")
            if len(buffered) > _STDERR_PIECE:  # a line without end is handed on in pieces, never held whole
                hand(buffered)
                buffered = b""
        if buffered:
            hand(buffered)

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        while True:
            try:
                line = await read_line(self.proc.stdout)
            except LineTooLong:  # dropped whole, to its newline (P116)
                self._too_long()
                continue
            if not line:
                break
            try:
                message = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue  # not a protocol message; servers must not write these, but do not die of it
            if not isinstance(message, dict):
                continue
            if "method" in message:
                inbound = self.inbound
                if "id" in message:
                    if inbound is not None:
                        task = inbound.take(message, self.send)
                        if task is not None and len(self._asked) == 1:  # only one request it can belong to
                            next(iter(self._asked.values())).append(task)
                    continue
                if inbound is not None and inbound.notice(message):
                    continue  # the session's own (elicitation complete, cancelled); it sees every notification
                params = message.get("params") or {}
                callback = self._notify.get(params.get("progressToken"))
                if callback is None:  # a `subscriptions/listen` stream's notices name its request instead
                    meta = params.get("_meta")
                    callback = (
                        self._notify.get(_listened(meta.get(META_SUBSCRIPTION_ID))) if isinstance(meta, dict) else None
                    )
                if callback is None:  # a log message: to the one request it can be of (never a listen stream)
                    calls = [rid for rid in self._pending if rid not in self._listens]
                    callback = self._notify.get(_listened(calls[0])) if len(calls) == 1 else None
                if callback is not None:
                    await callback(message)
                continue
            future = self._pending.pop(message.get("id"), None)
            if future is not None and not future.done():
                future.set_result(message)
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionError("the stdio server exited"))
        self._pending.clear()

    def _too_long(self) -> None:
        """The server wrote a line over the limit: it cannot be read, so the one request it can be the
        answer to fails (its id is in the dropped line); with several pending, each waits on."""
        calls = [rid for rid in self._pending if rid not in self._listens]
        log.warning("the stdio server wrote a line longer than %d bytes; it was dropped", MAX_LINE)
        if len(calls) == 1 and not (future := self._pending[calls[0]]).done():
            future.set_exception(
                ClientError(f"the server's answer was longer than {MAX_LINE} bytes (the stdio line limit)")
            )

    async def request(
        self, message: dict[str, Any], version: str, notify: Notify | None, param_headers: dict[str, str]
    ) -> dict[str, Any]:
        proc = await self._start()
        assert proc.stdin is not None
        future: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        rid = message["id"]
        self._pending[rid] = future
        if message.get("method") == "subscriptions/listen":
            self._listens.add(rid)
        self._asked[rid] = []
        token = None
        if notify is not None:
            token = f"p{next(self._tokens)}"
            message["params"].setdefault("_meta", {})["progressToken"] = token
            self._notify[token] = notify
            self._notify[_listened(rid)] = notify
        try:
            proc.stdin.write(orjson.dumps(message) + b"\n")
            await proc.stdin.drain()
            return await future
        except asyncio.CancelledError:
            # Cancelling a stdio request is a notification (MCP stdio transport).
            note = notification("notifications/cancelled", {"requestId": rid})
            with contextlib.suppress(Exception):
                proc.stdin.write(orjson.dumps(note) + b"\n")
            raise
        finally:
            self._pending.pop(rid, None)
            self._listens.discard(rid)
            asked = self._asked.pop(rid, [])
            if self.inbound is not None:
                self.inbound.drop(asked)
            if token is not None:
                self._notify.pop(token, None)
                self._notify.pop(_listened(rid), None)

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message that gets no response: a notification, or the answer to a server request."""
        proc = await self._start()
        assert proc.stdin is not None
        proc.stdin.write(orjson.dumps(message) + b"\n")
        await proc.stdin.drain()

    async def close(self) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.stdin is not None:
            proc.stdin.close()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.terminate()
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        if self._reader is not None:
            await self._reader
        if self._stderr is not None:
            await self._stderr


def _listened(request_id: Any) -> tuple[str, Any]:
    """The key under which a request's notify also hears notices tagged with its id as `subscriptionId`."""
    return ("subscription", request_id)
