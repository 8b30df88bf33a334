"""The stdio server behind `baton bridge --serve-http`: its process and `Client` (protocol.md P155, P156, P200).

`leg` forwards one request of an HTTP client as one 2026-07-28 leg: to a 2026 child as it came (its
`input_required` rounds go back untouched, sealed `requestState` and all); to a 2025-11-25 child inside
a `Held` call, whose questions (`elicitation/create` during the call) end the leg as `input_required`
rounds and whose retry carries the answers back. Stdio does not say which call a question belongs to, so
such calls never share a process: each runs on a lane of its own (`lanes`, P200). Progress goes back
under the client's own token; log messages at the level the client asked for. The child's list changes
go to `on_changed` and its resource updates to `on_updated` (a 2026 child's through a `subscriptions/listen`
stream, a 2025-11-25 child's as they come); `watch` subscribes to a resource for the HTTP clients (P199).

The child runs until the bridge stops. When it exits, one line says so, the requests in flight fail
with a clear error, and the next request starts it again; a child that keeps exiting soon after its
start waits longer each time before the next start, and requests meanwhile are refused at once (P156).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import signal
from collections.abc import Callable, Sequence
from typing import Any

from ..client import Client
from ..client.probe import ProtocolChoice
from ..client.stdio_transport import StdioTransport
from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import (
    HANDSHAKE_VERSION,
    LOG_LEVELS,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_SERVER_INFO,
)
from ..protocol.errors import INTERNAL_ERROR, McpError
from ..server.exchange import Emit
from ..server.subscriptions import RESOURCE_UPDATED
from .held import Held, HeldCalls
from .host import describe
from .lanes import IDLE_S, MAX_SPARES, Lane
from .remote import MULTI_ROUND, Remote, host_capabilities

log = logging.getLogger("baton.bridge")
CLIENT_NAME = "baton-bridge"
STEADY_S = 60.0
"""A child that ran this long before it exited is started again at once on the next request."""
MAX_PAUSE_S = 30.0
"""The longest wait before starting again a child that keeps exiting soon after its start."""
PROBE_S = 10.0
"""How long the child's first answer (`server/discover`) may take: a server still importing its code on a busy
machine would otherwise be taken for a 2025-11-25 one (P155)."""
CACHEABLE = frozenset({"tools/list", "resources/list", "resources/templates/list", "prompts/list", "resources/read"})
"""Results that 2026-07-28 says how long to cache, and a 2025-11-25 child does not (P155)."""
EXITED = (
    "baton bridge: the stdio server exited during this request; it is started again on the next request"
    " (its stderr, above the bridge's line, may say why)"
)


@dataclasses.dataclass
class Route:
    """Where a held call's notifications go: the stream of the leg the client has open now (None between legs)."""

    emit: Emit | None
    token: Any
    level: str | None


class Child:
    """The stdio server: started, watched, started again, and what each request becomes there."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        protocol: ProtocolChoice,
        deadline_s: float,
        on_changed: Callable[[str], None],
    ) -> None:
        self.command = list(command)
        self.protocol = protocol
        self.deadline_s = deadline_s
        self.on_changed = on_changed
        self.on_updated: Callable[[str], None] = _nobody
        """Told of each `notifications/resources/updated` of the child (P199)."""
        self.watched: set[str] = set()
        """The resources HTTP clients subscribed to, subscribed at the child (a set that only grows: P199)."""
        self._remote: Remote | None = None  # a 2026 child's listen stream
        self.client: Client | None = None
        self.era = ""
        self.capabilities: dict[str, Any] = {}
        """The child's capabilities as the bridge offers them."""
        self.server_info: dict[str, Any] = {"name": "mcp-server", "version": "unknown"}
        self.instructions: str | None = None
        self.stopping = False
        self.held = HeldCalls()
        self._routes: dict[Held, Route] = {}
        self._lane = Lane()  # the child's own process
        self._spares: list[Lane] = []  # more processes of a 2025-11-25 child, for calls that overlap (P200)
        self._lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._started = 0.0
        self._failures = 0
        self._not_before = 0.0
        self._last_exit = ""
        self._proc: asyncio.subprocess.Process | None = None
        self._listening: asyncio.Task[None] | None = None
        self._stopped: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    # -- the process ------------------------------------------------------------------------------------

    def _client(self, lane: Lane, protocol: ProtocolChoice) -> Client:
        client = Client(
            self.command,
            on_form=lane.ask,
            on_url=lane.ask,
            name=CLIENT_NAME,
            protocol=protocol,
            deadline_s=self.deadline_s,
            cache=False,  # each HTTP client caches as the child's ttlMs says
            stdio_probe_s=PROBE_S,
            on_message=self._tap,
        )
        lane.client = client
        return client

    async def start(self) -> Client:
        """Start the child and learn what it serves; it is watched from now on (raises what starting raised)."""
        lane = Lane()
        client = self._client(lane, self.protocol)
        try:
            self.era = await client.settle_era()
            if self.era == HANDSHAKE_VERSION:
                found = dict(client.initialize_result or {})
                caps, info = found.get("capabilities"), found.get("serverInfo")
                await _every_level(client)
            else:
                found = await client.discover()
                caps, info = found.get("capabilities"), (found.get("_meta") or {}).get(META_SERVER_INFO)
        except BaseException:
            with contextlib.suppress(Exception):
                await client.close()
            raise
        caps = caps if isinstance(caps, dict) else {}
        self.capabilities = host_capabilities(caps, list_changes=True, subscribe=True)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.server_info = info
        self.instructions = found.get("instructions") if isinstance(found.get("instructions"), str) else None
        self.client = client
        self._lane = lane
        self._started = asyncio.get_running_loop().time()
        transport = client.transport
        if isinstance(transport, StdioTransport):
            if transport.inbound is not None:  # each question reaches its held call at once, not after the last
                transport.inbound.one_at_a_time = False
            if transport.proc is not None:
                self._proc = transport.proc
                self._spawn(self._ended(client, transport.proc))
        if self.era != HANDSHAKE_VERSION:
            remote = Remote(client)
            remote.server_caps = caps
            remote.subscribed = set(self.watched)
            self._remote = remote
            self._listening = self._spawn(self._relay(client, remote))
        else:
            for uri in sorted(self.watched):  # a child started again: its subscriptions made again
                await self._subscribe(client, uri)
        return client

    async def watch(self, uri: str) -> None:
        """An HTTP client subscribed to `uri`: the child is asked for its updates, once (P199; McpError: the
        child's refusal, for a 2025-11-25 child)."""
        if uri in self.watched:
            return
        client = await self.client_now()
        if self.era == HANDSHAKE_VERSION:
            await client.request("resources/subscribe", {"uri": uri})
            self.watched.add(uri)
        else:
            self.watched.add(uri)
            if self._remote is not None:
                self._remote.subscribe(uri, True)

    async def _subscribe(self, client: Client, uri: str) -> None:
        try:
            await client.request("resources/subscribe", {"uri": uri})
        except Exception as exc:
            log.warning("could not subscribe to %s at the stdio server started again: %s", uri, describe(exc))

    def stop_requests(self) -> None:
        """The bridge is stopping: every request in flight is answered with an error now (P158)."""
        self.stopping = True
        if not self._stopped.done():
            self._stopped.set_result(None)

    async def close(self) -> None:
        """Stop the child (EOF on its stdin, then signals, as a host stops a stdio server)."""
        self.stop_requests()
        client, self.client = self.client, None
        for task in list(self._tasks):
            task.cancel()
        spares, self._spares = self._spares, []
        for closing in [client, *(lane.client for lane in spares)]:
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing.close()

    async def client_now(self) -> Client:
        """The running child's client: started again if it exited, unless it is still pausing (P156)."""
        client = self.client
        if client is not None and self._alive():
            return client
        async with self._lock:
            if self.client is not None and self._proc is not None and not self._alive():
                await self._ended(self.client, self._proc)  # it exited just now: its watcher has not said so yet
            if self.client is not None:
                return self.client
            wait = self._not_before - asyncio.get_running_loop().time()
            if wait > 0:
                raise McpError(
                    INTERNAL_ERROR,
                    f"baton bridge: the stdio server {self._last_exit}, {self._failures} times in a row soon after "
                    f"its start; it is started again in {wait:.1f} s (see the bridge's stderr)",
                )
            try:
                return await self.start()
            except Exception as exc:
                self._exited(f"could not be started again ({describe(exc)})")
                raise McpError(INTERNAL_ERROR, f"baton bridge: the stdio server {self._last_exit}") from None

    def _spawn(self, work: Any) -> asyncio.Task[None]:
        task: asyncio.Task[None] = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    def _alive(self) -> bool:
        """Whether the child may still answer: not exited, its stdout not at its end."""
        proc = self._proc
        return proc is None or (proc.returncode is None and not (proc.stdout is not None and proc.stdout.at_eof()))

    async def _ended(self, client: Client, proc: asyncio.subprocess.Process) -> None:
        """Once `proc` has exited: one line, and its client forgotten (nothing when the bridge stopped it)."""
        status = await proc.wait()
        if self.stopping or self.client is not client:
            return
        self.client = None
        if self._listening is not None:  # the list-change stream of the child that ended
            self._listening.cancel()
            self._listening = None
        how = f"was killed by {signal.Signals(-status).name}" if status < 0 else f"exited with status {status}"
        self._exited(how)
        with contextlib.suppress(Exception):
            await client.close()

    def _exited(self, how: str) -> None:
        """One line for a child that ended (or could not start), and the pause before the next start (P156)."""
        loop = asyncio.get_running_loop()
        self._failures = 0 if loop.time() - self._started > STEADY_S else self._failures + 1
        # The first exit is started again at once; each further one soon after its start waits twice as long.
        pause = min(MAX_PAUSE_S, 0.5 * 2 ** (self._failures - 2)) if self._failures > 1 else 0.0
        self._not_before = loop.time() + pause
        self._last_exit = how
        later = f" in {pause:g} s at the earliest" if pause else ""
        log.warning("the stdio server %s; it is started again on the next request%s", how, later)

    async def _relay(self, client: Client, remote: Remote) -> None:
        async def changed(message: dict[str, Any]) -> None:
            if message.get("method") == RESOURCE_UPDATED:
                self.on_updated(str((message.get("params") or {}).get("uri")))
            else:
                self.on_changed(str(message.get("method", "")).split("/")[1])

        await remote.relay_list_changes(changed)

    def _tap(self, direction: str, message: dict[str, Any]) -> None:
        """A 2025-11-25 child's list changes and resource updates come on their own, outside any request."""
        method = message.get("method")
        if direction == "received" and self.era == HANDSHAKE_VERSION and isinstance(method, str):
            uri = (message.get("params") or {}).get("uri")
            if method == RESOURCE_UPDATED and isinstance(uri, str):
                self.on_updated(uri)
            kind = method.removeprefix("notifications/").removesuffix("/list_changed")
            if method.endswith("/list_changed") and kind in ("tools", "prompts", "resources"):
                self.on_changed(kind)

    # -- one request --------------------------------------------------------------------------------------

    async def leg(
        self, method: str, params: dict[str, Any], caps: ClientCapabilities, emit: Emit | None, level: str | None
    ) -> dict[str, Any]:
        """One leg of an HTTP client's request: the child's result or `input_required` round (McpError: its
        error, one that says what went wrong on the way, or that the bridge is stopping)."""
        work = asyncio.ensure_future(self._leg(method, params, caps, emit, level))
        either: set[asyncio.Future[Any]] = {work, self._stopped}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the client went away: its leg to the child ends too
            work.cancel()
            raise
        if not work.done():
            work.cancel()
            with contextlib.suppress(BaseException):
                await work
            raise McpError(INTERNAL_ERROR, "baton bridge: the bridge is stopping; this request was not finished")
        return work.result()

    async def _leg(
        self, method: str, params: dict[str, Any], caps: ClientCapabilities, emit: Emit | None, level: str | None
    ) -> dict[str, Any]:
        client = await self.client_now()
        body = dict(params)
        meta = dict(body.get("_meta") or {})
        if caps.raw is not None:  # the child asks only what this client declared it can answer
            meta.setdefault(META_CLIENT_CAPABILITIES, caps.raw)
        if level is not None:  # a 2025-11-25 client's session level
            meta.setdefault(META_LOG_LEVEL, level)
        body["_meta"] = meta
        wanted = meta.get(META_LOG_LEVEL)
        try:
            if self.era != HANDSHAKE_VERSION:
                route = Route(emit, meta.get("progressToken"), wanted if isinstance(wanted, str) else None)
                return await client.request(method, body, progress=self._relay_to(route))
            if "requestState" in body:  # the retry of a held call: the answers to its last round (P155)
                held = self.held.resume(body["requestState"], body.get("inputResponses"))
                resumed = self._routes.get(held)
                if resumed is not None:
                    resumed.emit = emit
                return await self._step(held)
            body.pop("inputResponses", None)
            route = Route(emit, meta.get("progressToken"), wanted if isinstance(wanted, str) else None)
            lane = await self._free_lane() if method in MULTI_ROUND else None
            on = lane.client if lane is not None and lane.client is not None else client
            held = Held(on.request(method, body, progress=self._relay_to(route)), caps)
            if lane is not None:
                lane.held = held  # its questions are this call's, and no other call that may ask runs there
            self._routes[held] = route
            held.task.add_done_callback(lambda _: self._forget(held, lane))
            result = await self._step(held)
            if method in CACHEABLE and result.get("resultType") == "complete":
                # Not to be kept (the child said nothing of it), the same for every client of this one child.
                result.setdefault("ttlMs", 0)
                result.setdefault("cacheScope", "public")
            return result
        except McpError:
            raise
        except ConnectionError as exc:  # the child exited (a broken pipe is one too)
            raise McpError(INTERNAL_ERROR, EXITED) from exc
        except Exception as exc:  # one line for the client, never a traceback
            raise McpError(INTERNAL_ERROR, f"baton bridge: {describe(exc)}") from exc

    async def _step(self, held: Held) -> dict[str, Any]:
        try:
            return await self.held.leg(held)
        finally:
            route = self._routes.get(held)
            if route is not None:
                route.emit = None  # the leg's stream is closed: notifications wait for the next leg

    def _forget(self, held: Held, lane: Lane | None) -> None:
        self._routes.pop(held, None)
        if lane is None or lane.held is not held:
            return
        lane.held = None
        if lane in self._spares:  # an extra process: stopped unless another call comes soon (P200)
            lane.retiring = asyncio.get_running_loop().call_later(IDLE_S, self._retire, lane)

    async def _free_lane(self) -> Lane:
        """A process of the 2025-11-25 child with no call that may ask in flight: the child's own, an idle extra
        one, or one started now (P200); McpError when `MAX_SPARES` are busy or one cannot start."""
        for lane in (self._lane, *self._spares):
            if lane.free():
                if lane.retiring is not None:
                    lane.retiring.cancel()
                    lane.retiring = None
                return lane
        for lane in [lane for lane in self._spares if lane.held is None]:  # extra processes that exited
            self._retire(lane)
        if len(self._spares) >= MAX_SPARES:
            raise McpError(
                INTERNAL_ERROR,
                f"baton bridge: {MAX_SPARES + 1} calls to the stdio server are waiting on questions already;"
                " answer one of them, or try again when one ends",
            )
        lane = Lane()
        client = self._client(lane, HANDSHAKE_VERSION)
        try:
            await client.settle_era()
            await _every_level(client)
        except BaseException as exc:  # a leg cancelled meanwhile too: the process is not left behind
            with contextlib.suppress(Exception):
                await asyncio.shield(client.close())
            if not isinstance(exc, Exception):
                raise
            raise McpError(
                INTERNAL_ERROR, f"baton bridge: another process of the stdio server did not start: {describe(exc)}"
            ) from None
        if lane.free():
            self._spares.append(lane)
        return lane

    def _retire(self, lane: Lane) -> None:
        """Stop an extra process that nobody needs now."""
        if lane.held is not None or lane not in self._spares:
            return
        self._spares.remove(lane)
        if lane.client is not None:
            self._spawn(lane.client.close())

    def _relay_to(self, route: Route) -> Callable[[dict[str, Any]], Any]:
        async def relay(message: dict[str, Any]) -> None:
            method = message.get("method")
            params = message.get("params") or {}
            if not isinstance(method, str) or not isinstance(params, dict) or route.emit is None:
                return
            if method == "notifications/progress":
                if route.token is None:
                    return
                params = {**params, "progressToken": route.token}
            elif method == "notifications/message":
                if not _admits(route.level, params.get("level")):
                    return
            elif method.endswith("/list_changed"):
                return  # `_tap` or the listen stream publishes these
            with contextlib.suppress(Exception):  # the client closed its stream: nothing to tell it
                await route.emit(method, params)

        return relay


async def _every_level(client: Client) -> None:
    """A 2025-11-25 child that logs is set to every level: each client's own level is applied here (P155)."""
    caps = (client.initialize_result or {}).get("capabilities")
    if isinstance(caps, dict) and "logging" in caps:
        await client.request("logging/setLevel", {"level": LOG_LEVELS[0]})


def _nobody(uri: str) -> None:
    """No listeners before the HTTP side exists."""


def _admits(wanted: str | None, level: Any) -> bool:
    """Whether a log message at `level` reaches a client that asked for `wanted` and above."""
    if wanted not in LOG_LEVELS:
        return False
    return level not in LOG_LEVELS or LOG_LEVELS.index(level) >= LOG_LEVELS.index(wanted)
