"""The client's 2025-11-25 session: the `initialize` handshake, requests in it, and its end (protocol.md P34).

`ClientSession.open` offers `2025-11-25` with the capabilities the client's handlers declare and its name,
refuses any other answer with a `ClientError`, then sends `notifications/initialized` (if that fails,
the session is ended with DELETE before the error is raised). Requests carry
no 2026 envelope (no `io.modelcontextprotocol/*` key in `_meta`, whoever put it there). A request that
finds the session gone (HTTP 404) initializes again once (then awaits `on_reopened`) and is sent again;
a -32042 error hands its URL elicitations to `on_url` and, once the user accepted them all, sends the
request again (bounded, and paced: a URL asked again waits first, `baton.client.pacing`).
The server's own requests during a call are answered by `Inbound`, through the transport.
When telemetry is on, `initialize` and each request are CLIENT spans (`observer`, protocol.md P63): one span
for a request however many times it is sent again, its context in `_meta`.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..protocol.constants import HANDSHAKE_VERSION
from ..protocol.errors import URL_ELICITATION_REQUIRED, McpError
from ..protocol.messages import notification
from ..protocol.messages import request as request_message
from .callbacks import Notify
from .deadline import Deadlines
from .errors import ClientError, result_of
from .inbound import Inbound
from .pacing import DEFAULT_URL_BACKOFF_S, UrlPacing
from .session_http import SessionGone
from .stdio_transport import StdioTransport
from .tap import MessageTap

if TYPE_CHECKING:
    from .tracing import ClientObserver

ENVELOPE_PREFIX = "io.modelcontextprotocol/"


class SessionTransport(Protocol):
    """How a session's messages travel: `SessionHttp`, or `SessionStdio` on a server subprocess."""

    session_id: str | None

    async def request(self, message: dict[str, Any], notify: Notify | None) -> dict[str, Any]: ...

    async def send(self, message: dict[str, Any]) -> None: ...

    async def listen(self) -> None: ...

    def reset(self) -> None: ...

    async def end(self) -> None: ...


class SessionStdio:
    """A session on a stdio server process: the process is the session, so there is no id to keep."""

    session_id: str | None = None

    def __init__(self, stdio: StdioTransport, inbound: Inbound) -> None:
        self.stdio = stdio
        stdio.inbound = inbound

    async def request(self, message: dict[str, Any], notify: Notify | None) -> dict[str, Any]:
        message.setdefault("params", {})
        return await self.stdio.request(message, HANDSHAKE_VERSION, notify, {})

    async def send(self, message: dict[str, Any]) -> None:
        await self.stdio.send(message)

    async def listen(self) -> None:
        pass  # everything the server sends comes on its stdout already

    def reset(self) -> None:
        pass

    async def end(self) -> None:
        pass  # closing the client closes stdin, which ends the session


class ClientSession:
    """One 2025-11-25 session with a server, opened by `open()` and ended by `close()`."""

    def __init__(
        self,
        transport: SessionTransport,
        inbound: Inbound,
        *,
        capabilities: dict[str, Any],
        client_info: dict[str, Any],
        ids: itertools.count[int],
        deadlines: Deadlines,
        url_retries: int,
        url_backoff_s: tuple[float, float] = DEFAULT_URL_BACKOFF_S,
        observer: ClientObserver | None = None,
        tap: MessageTap | None = None,
    ) -> None:
        self.transport = transport
        self.tap = tap
        self.observer = observer
        self.inbound = inbound
        self.capabilities = capabilities
        self.client_info = client_info
        self.deadlines = deadlines  # paused while the person answers (protocol.md P90)
        self.url_retries = url_retries
        self.url_backoff_s = url_backoff_s
        self.result: dict[str, Any] = {}  # the InitializeResult
        self.server_name: str | None = None
        self._ids = ids
        self._generation = 0  # how many times the session was opened
        self._opening = asyncio.Lock()
        self.on_reopened: Callable[[], Awaitable[None]] | None = None
        """Awaited after the session the server ended was opened again, before the request is sent again."""

    async def open(self) -> None:
        """The handshake: `initialize`, the version check, `notifications/initialized`."""
        params = {
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": self.capabilities,
            "clientInfo": self.client_info,
        }
        async with self.deadlines.running("initialize"):
            if self.observer is not None:
                result = await self.observer.leg("initialize", params, self._initialize, HANDSHAKE_VERSION)
            else:
                result = await self._initialize(params)
        version = result.get("protocolVersion")
        if version != HANDSHAKE_VERSION:
            await self.transport.end()
            raise ClientError(
                f"the server answered initialize with protocol version {version!r}; in a session Baton speaks "
                f"only {HANDSHAKE_VERSION} (and 2026-07-28 without one)"
            )
        self.result = result
        info = result.get("serverInfo")
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.server_name = self.inbound.server = info["name"]
        try:
            await self._notify(notification("notifications/initialized", {}))
        except BaseException:
            await self.transport.end()  # the server issued a session: it must not outlive this failure
            raise
        self._generation += 1
        await self.transport.listen()

    async def _initialize(self, params: dict[str, Any]) -> dict[str, Any]:
        reply = await self._exchange(request_message(next(self._ids), "initialize", params), None)
        return result_of(reply, "initialize")

    async def _exchange(self, message: dict[str, Any], progress: Notify | None) -> dict[str, Any]:
        """One request and its reply, each shown to the tap (`Client(on_message=...)`) when there is one."""
        if self.tap is None:
            return await self.transport.request(message, progress)
        self.tap("sent", message)
        reply = await self.transport.request(message, progress)  # notifications: `Inbound.notice` shows them
        self.tap("received", reply)
        return reply

    async def _notify(self, message: dict[str, Any]) -> None:
        if self.tap is not None:
            self.tap("sent", message)
        await self.transport.send(message)

    async def request(self, method: str, params: dict[str, Any] | None, progress: Notify | None) -> dict[str, Any]:
        """Send one request in the session and return its result; a server error raises its McpError."""
        body = _without_envelope(params)
        if self.observer is None:
            return await self._send(method, body, progress)
        # A request without params stays without them unless the leg has a context to carry (`_meta`).
        return await self.observer.leg(
            method,
            _copy(body) or {},
            lambda traced: self._send(method, traced if body is not None or traced else None, progress),
            HANDSHAKE_VERSION,
        )

    async def _send(self, method: str, body: dict[str, Any] | None, progress: Notify | None) -> dict[str, Any]:
        reopened = False
        url_rounds = 0
        pacing = UrlPacing(self.url_backoff_s)
        async with self.deadlines.running(method):
            while True:
                generation = self._generation
                message = request_message(next(self._ids), method, _copy(body))
                try:
                    reply = await self._exchange(message, progress)
                except SessionGone as exc:
                    if reopened:
                        raise ClientError(f"{method}: the server ended the session again right after it began") from exc
                    reopened = True
                    await self._reopen(generation)
                    continue
                try:
                    return result_of(reply, method)
                except McpError as exc:
                    if exc.code != URL_ELICITATION_REQUIRED or url_rounds >= self.url_retries:
                        raise
                    url_rounds += 1
                    if not await self.inbound.open_urls(exc.data, pacing):
                        raise

    async def _reopen(self, generation: int) -> None:
        async with self._opening:
            if self._generation != generation:  # somebody else initialized again meanwhile
                return
            self.transport.reset()
            await self.open()
        if self.on_reopened is not None:  # outside the lock: its own requests may find this session gone too
            await self.on_reopened()

    async def close(self) -> None:
        await self.inbound.close()
        await self.transport.end()


def _copy(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """Params the transport may add a progress token to without touching the caller's."""
    if params is None:
        return None
    copy = dict(params)
    if isinstance(copy.get("_meta"), dict):
        copy["_meta"] = dict(copy["_meta"])
    return copy


def _without_envelope(params: dict[str, Any] | None) -> dict[str, Any] | None:
    """The params without any 2026 envelope key in `_meta`: a session request must not look 2026-era."""
    if not params:
        return None
    meta = params.get("_meta")
    if not isinstance(meta, dict) or not any(k.startswith(ENVELOPE_PREFIX) for k in meta):
        return params
    kept = {k: v for k, v in meta.items() if not k.startswith(ENVELOPE_PREFIX)}
    body = {k: v for k, v in params.items() if k != "_meta"}
    if kept:
        body["_meta"] = kept
    return body
