"""What each host request becomes at the server: one `Client`, shaped for the host's era (protocol.md P134).

A 2025-11-25 host's request is driven to its end by the `Client` (`drive`: every round of a 2026 server's
questions answered through the host, `requestState` echoed untouched; a 2025-11-25 server asks during
the call), and the result is reshaped for 2025-11-25 (`handshake_result`). A 2026 host's request goes
through as one leg, its `_meta` (capabilities, trace context, `requestState`, `inputResponses`) kept, so
an `input_required` reaches the host as it left the server. Notifications on the way (progress, log
messages) go to the host, a progress notification under the host's own token. A connection the server
refused is tried again with backoff, a request that may have reached it is not (protocol.md P136).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from ..client import Client, ClientError, Question, Round
from ..client.callbacks import Notify
from ..client.http11 import ConnectError
from ..client.questions import ElicitHandler
from ..protocol.capabilities import ClientCapabilities, granted
from ..protocol.constants import (
    HANDSHAKE_VERSION,
    META_CLIENT_CAPABILITIES,
    META_LOG_LEVEL,
    META_SERVER_INFO,
    META_SUBSCRIPTION_ID,
    PROTOCOL_VERSION,
)
from ..protocol.errors import McpError, invalid_params
from ..protocol.messages import notification
from ..server.handshake import handshake_result
from ..server.subscriptions import RESOURCE_UPDATED
from . import ASK_TIMEOUT_S
from .held import Held, HeldCalls

log = logging.getLogger("baton.bridge")
T = TypeVar("T")
MULTI_ROUND = frozenset({"tools/call", "resources/read", "prompts/get"})
"""The requests a server may answer with questions: driven to the end for a 2025-11-25 host."""
RETRY_S = (0.25, 0.5, 1.0, 2.0, 4.0)
"""The pauses before trying a refused connection again (a server restarting)."""
DEFAULT_LOG_LEVEL = "debug"
"""A 2025-11-25 host that never sent logging/setLevel sees every level, as in a Baton session (P134)."""
LIST_CHANGES = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}
"""The lists whose changes a 2026 server announces on a `subscriptions/listen` stream, by capability."""
UNSOLICITED = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        RESOURCE_UPDATED,
    }
)
"""What a 2025-11-25 server tells its session outside any request's own business, relayed by `Remote.heard`."""
ACKNOWLEDGED = "notifications/subscriptions/acknowledged"
LISTEN_BACKLOG = 256
"""The notices held for a 2026 host's listen stream that is not being read; more are dropped."""


class Remote:
    """The server at the URL, as the bridge's one `Client` reaches it."""

    def __init__(self, client: Client, ask: ElicitHandler | None = None) -> None:
        self.client = client
        self.ask = ask
        """Where a 2026 host's round it cannot show is asked instead (the bridge's page, P160); None: passed on."""
        self.held = HeldCalls()
        self.server_caps: dict[str, Any] = {}
        self.session_host: Callable[[dict[str, Any]], None] | None = None
        """Writes to the 2025-11-25 host once its session is open: a 2025-11-25 server's unsolicited notices."""
        self.log_level: str | None = None  # the host's logging/setLevel, sent again to a reopened session
        self.subscribed: set[str] = set()  # the host's resource subscriptions, made again in a reopened session
        self._split: dict[str, asyncio.Future[dict[str, Any]]] = {}
        """The page's answers to the part of a round the host cannot show, by the round's `requestState` (P201)."""
        self._renew = asyncio.Event()  # the subscriptions changed: the listen stream to a 2026 server opens again
        self._listeners: list[SessionListen] = []  # a 2026 host's listen streams to a 2025-11-25 server (P202)
        client.on_message = self.heard
        client.on_session_reopened = self.restore

    async def initialize_result(self) -> dict[str, Any]:
        """The `InitializeResult` a 2025-11-25 host gets: the server's capabilities, name and instructions."""
        era = await self._retried(self.client.settle_era)
        if era == HANDSHAKE_VERSION:
            found = dict(self.client.initialize_result or {})
            caps, info = found.get("capabilities"), found.get("serverInfo")
        else:
            found = await self._retried(self.client.discover)
            caps, info = found.get("capabilities"), (found.get("_meta") or {}).get(META_SERVER_INFO)
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            info = {"name": self.client.server_name or "mcp-server", "version": "unknown"}
        self.server_caps = caps if isinstance(caps, dict) else {}
        # List changes and resource updates: a 2026 server's through `relay_list_changes` (P199), a 2025-11-25
        # server's through `heard` (P161).
        shown = host_capabilities(self.server_caps, list_changes=True, subscribe=True)
        result: dict[str, Any] = {
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": {**shown, "logging": {}},
            "serverInfo": info,
        }
        if isinstance(found.get("instructions"), str):
            result["instructions"] = found["instructions"]
        return result

    async def session_request(
        self, method: str, params: dict[str, Any], log_level: str | None, to_host: Notify
    ) -> dict[str, Any]:
        """A 2025-11-25 host's request, to its end; the result as 2025-11-25 has it."""
        body = dict(params)
        meta = dict(body.pop("_meta", None) or {})
        token = meta.pop("progressToken", None)
        if await self.client.settle_era() == PROTOCOL_VERSION:
            meta[META_LOG_LEVEL] = log_level or DEFAULT_LOG_LEVEL
        if meta:
            body["_meta"] = meta
        notify = _relay(token, to_host, skip=UNSOLICITED)  # those reach the host through `heard`, once
        if method in ("resources/subscribe", "resources/unsubscribe") and self.client.era == PROTOCOL_VERSION:
            if not isinstance(params.get("uri"), str):
                raise invalid_params(f'Invalid params: {method} needs "uri" (a string)')
            self.subscribe(params["uri"], method == "resources/subscribe")  # on the listen stream (P199)
            return {}
        if method in MULTI_ROUND:
            result = await self._retried(lambda: self.client.drive(method, body, progress=notify))
        else:
            result = await self._retried(lambda: self.client.request(method, body, progress=notify))
        uri = params.get("uri")
        if method == "resources/subscribe" and isinstance(uri, str):
            self.subscribed.add(uri)
        elif method == "resources/unsubscribe":
            self.subscribed.discard(uri)
        return handshake_result(method, dict(result))  # a copy: the client may keep the result in its cache

    def heard(self, direction: str, message: dict[str, Any]) -> None:
        """The client's tap: a 2025-11-25 server's list changes and resource updates, wherever they came (its
        GET stream, a request's stream), go to the 2025-11-25 host (P161), or to the 2026 host's listen
        streams that asked for them (P202)."""
        if direction != "received" or message.get("method") not in UNSOLICITED:
            return
        if self.client.era != HANDSHAKE_VERSION:
            return
        if self.session_host is not None:
            self.session_host(notification(str(message["method"]), message.get("params") or {}))
        for listener in self._listeners:
            listener.offer(message)

    async def restore(self) -> None:
        """The host's session state in the 2025-11-25 session the client opened again after the server ended
        the last one (it restarted): its log level and its resource subscriptions (P162)."""
        log.warning("the server ended its session (it restarted?): opened a new one")
        again: list[tuple[str, dict[str, Any]]] = [("resources/subscribe", {"uri": uri}) for uri in self.subscribed]
        if self.log_level is not None:
            again.insert(0, ("logging/setLevel", {"level": self.log_level}))
        for method, params in again:
            try:
                await self.client.request(method, params)
            except (McpError, ClientError, OSError) as exc:
                log.warning("could not restore %s %s in the new session: %s", method, params, exc)

    async def modern_request(self, method: str, params: dict[str, Any], to_host: Notify) -> dict[str, Any]:
        """A 2026-07-28 host's request, one leg, its answer as the server gave it (`input_required` too)."""
        token = (params.get("_meta") or {}).get("progressToken")
        notify = _relay(token, to_host)
        if await self._retried(self.client.settle_era) == HANDSHAKE_VERSION:
            if method == "server/discover":
                return self._discover_of_session()
            if "requestState" in params:  # a retry: the answers to the questions of a held call (P135)
                return await self.held.leg(self.held.resume(params["requestState"], params.get("inputResponses")))
            body = {k: v for k, v in params.items() if k != "inputResponses"}
            caps = (params.get("_meta") or {}).get(META_CLIENT_CAPABILITIES)
            host = ClientCapabilities.parse(caps if isinstance(caps, dict) else {})
            call = self._retried(lambda: self.client.request(method, body, progress=notify))
            return await self.held.leg(Held(call, host))
        split = self._split.pop(params["requestState"], None) if isinstance(params.get("requestState"), str) else None
        if split is not None:  # the host's answers, and the page's to the rest of the round (P201)
            given = params.get("inputResponses")
            params = {**params, "inputResponses": {**(given if isinstance(given, dict) else {}), **await split}}
        meta = dict(params.get("_meta") or {})
        caps = meta.get(META_CLIENT_CAPABILITIES)
        caps = caps if isinstance(caps, dict) else {}
        host = ClientCapabilities.parse(caps)
        if self.ask is not None:  # the bridge's page shows what the host cannot: the server may ask it (P160)
            meta[META_CLIENT_CAPABILITIES] = {**caps, "elicitation": {"form": {}, "url": {}}}
            params = {**params, "_meta": meta}
        sent = params
        result = await self._retried(lambda: self.client.request(method, sent, progress=notify))
        for number in range(1, self.client.max_rounds + 1):  # the rounds the host cannot show, asked on the page
            step = _round_of(method, sent, result, number)
            if step is None or self.ask is None:
                break
            unshown = [question for question in step.questions() if not granted(host, question.mode)]
            if not unshown:
                break
            if len(unshown) < len(step.input_requests):  # a mixed round: split between the host and the page
                if step.request_state is None:
                    break  # nothing names the round when the host's retry comes: it gets the round whole
                return self._split_round(step, unshown)
            answers = {question.key: await self.ask(question) for question in unshown}  # P160
            advanced = await self.client.advance(step, answers, progress=notify)
            result = _result_of(advanced) if isinstance(advanced, Round) else advanced
        return result

    def _split_round(self, step: Round, unshown: list[Question]) -> dict[str, Any]:
        """A round whose questions the 2026 host can show in part: those go to the host, in a round with the
        server's `requestState` untouched; the others are asked on the page now, their answers added to the
        host's retry that carries that `requestState` (P201)."""
        ask, state = self.ask, step.request_state
        assert ask is not None and state is not None

        async def answered() -> dict[str, Any]:
            replies = await asyncio.gather(*(ask(question) for question in unshown))
            return {question.key: question.answer(reply) for question, reply in zip(unshown, replies, strict=True)}

        task = asyncio.ensure_future(answered())
        self._split[state] = task
        asyncio.get_running_loop().call_later(ASK_TIMEOUT_S, self._forget_split, state)
        asked = {question.key for question in unshown}
        shown = {key: value for key, value in step.input_requests.items() if key not in asked}
        return {"resultType": "input_required", "inputRequests": shown, "requestState": state}

    def _forget_split(self, state: str) -> None:
        """A split round whose retry never came: its questions on the page are withdrawn."""
        task = self._split.pop(state, None)
        if task is not None:
            task.cancel()

    def _discover_of_session(self) -> dict[str, Any]:
        """The `DiscoverResult` a 2026 host gets for a 2025-11-25 server: what its `initialize` said."""
        found = self.client.initialize_result or {}
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": [PROTOCOL_VERSION],
            "capabilities": host_capabilities(found.get("capabilities") or {}, list_changes=True, subscribe=True),
        }
        if isinstance(found.get("serverInfo"), dict):
            result["_meta"] = {META_SERVER_INFO: found["serverInfo"]}
        if isinstance(found.get("instructions"), str):
            result["instructions"] = found["instructions"]
        return result

    def listen_params(self) -> dict[str, Any]:
        """What the bridge's own listen stream to a 2026 server asks for: the lists whose changes it announces,
        and the resources the host subscribed to if it offers `subscribe` (P199); empty: nothing to ask."""
        wanted: dict[str, Any] = {
            flag: True for kind, flag in LIST_CHANGES.items() if (self.server_caps.get(kind) or {}).get("listChanged")
        }
        if self.subscribed and (self.server_caps.get("resources") or {}).get("subscribe"):
            wanted["resourceSubscriptions"] = sorted(self.subscribed)
        return wanted

    def subscribe(self, uri: str, on: bool) -> None:
        """A 2025-11-25 host's `resources/subscribe` (or unsubscribe) to a 2026 server: the bridge's listen stream
        is opened again for the new set of resources (P199)."""
        before = set(self.subscribed)
        (self.subscribed.add if on else self.subscribed.discard)(uri)
        if self.subscribed != before:
            self._renew.set()

    async def relay_list_changes(self, to_host: Notify) -> None:
        """For a 2025-11-25 host of a 2026 server, until cancelled: a `subscriptions/listen` stream for the
        lists the server announces changes of and the resources subscribed to, each change passed on as the
        host's `list_changed` or `resources/updated`; a stream that ends or fails is opened again after a pause
        that grows while it keeps failing (P134), and at once when the subscriptions change (P199)."""
        if self.client.era != PROTOCOL_VERSION:
            return  # a 2025-11-25 server's list changes come in its session: `heard`

        async def relay(message: dict[str, Any]) -> None:
            method, params = message.get("method"), message.get("params") or {}
            if isinstance(method, str) and method.endswith("/list_changed"):
                await to_host(notification(method, {}))
            elif method == RESOURCE_UPDATED and isinstance(params, dict) and isinstance(params.get("uri"), str):
                await to_host(notification(method, {"uri": params["uri"]}))

        loop = asyncio.get_running_loop()
        failures = 0
        while True:
            self._renew.clear()
            wanted = self.listen_params()
            if not wanted:
                await self._renew.wait()
                continue
            started = loop.time()
            stream = asyncio.ensure_future(
                self.client.request("subscriptions/listen", {"notifications": wanted}, progress=relay)
            )
            renewed = asyncio.ensure_future(self._renew.wait())
            try:
                await asyncio.wait({stream, renewed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                renewed.cancel()
                stream.cancel()
                await asyncio.gather(stream, return_exceptions=True)  # its failure read, whatever ends the wait
            if self._renew.is_set():
                continue  # the subscriptions changed: the stream is opened again at once
            try:
                stream.result()
            except asyncio.CancelledError:
                pass  # not ours: the outer task's own cancellation is raised by the wait above
            except McpError as exc:
                log.info("the server ended the listen stream: %s", exc.message)
            except (ClientError, OSError) as exc:
                log.info("the listen stream failed: %s", exc)
            failures = 0 if loop.time() - started > 60 else failures + 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._renew.wait(), min(30.0, 0.5 * 2 ** min(failures, 6)))

    async def host_listen(self, rid: Any, params: dict[str, Any], to_host: Notify) -> dict[str, Any]:
        """A 2026 host's own `subscriptions/listen`, forwarded as the bridge's: each notice (the acknowledgement,
        list changes, resource updates) and the final result carry the host's listen id (P199)."""

        def tagged(params: Any) -> Any:
            if not isinstance(params, dict) or not isinstance(params.get("_meta"), dict):
                return params
            return {**params, "_meta": {**params["_meta"], META_SUBSCRIPTION_ID: rid}}

        async def relay(message: dict[str, Any]) -> None:
            await to_host({**message, "params": tagged(message.get("params"))})

        if await self._retried(self.client.settle_era) == HANDSHAKE_VERSION:
            return await self._listen_in_session(rid, params, relay)
        result = await self._retried(lambda: self.client.request("subscriptions/listen", params, progress=relay))
        return dict(tagged(result))

    async def _listen_in_session(self, rid: Any, params: dict[str, Any], relay: Notify) -> dict[str, Any]:
        """A 2026 host's listen to a 2025-11-25 server (P202), until the host ends it: acknowledged with what
        the server's `initialize` offers of what the host asked, the resources subscribed in the session (and
        again in a session the server reopens), and the session's notices relayed as the host asked them."""
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise invalid_params('Invalid params: subscriptions/listen needs "notifications" (an object)')
        caps = (self.client.initialize_result or {}).get("capabilities") or {}
        honored: dict[str, Any] = {
            flag: True
            for kind, flag in LIST_CHANGES.items()
            if wanted.get(flag) is True and (caps.get(kind) or {}).get("listChanged")
        }
        uris = wanted.get("resourceSubscriptions")
        if isinstance(uris, list) and uris and (caps.get("resources") or {}).get("subscribe"):
            honored["resourceSubscriptions"] = sorted({uri for uri in uris if isinstance(uri, str)})
        listener = SessionListen(honored)
        mine: list[str] = []  # the subscriptions this stream made in the session, undone when it ends
        self._listeners.append(listener)  # first: no notice between a subscribe and the stream is missed
        try:
            for uri in honored.get("resourceSubscriptions", ()):
                if uri not in self.subscribed:
                    await self.client.request("resources/subscribe", {"uri": uri})
                    self.subscribed.add(uri)  # made again if the server reopens the session (P162)
                    mine.append(uri)
            await relay(notification(ACKNOWLEDGED, {"_meta": {}, "notifications": honored}))
            while True:
                message = await listener.queue.get()
                await relay(notification(str(message["method"]), {**(message.get("params") or {}), "_meta": {}}))
        finally:
            self._listeners.remove(listener)
            held = {uri for other in self._listeners for uri in other.honored.get("resourceSubscriptions", ())}
            for uri in mine:
                if uri not in held:
                    self.subscribed.discard(uri)
                    with contextlib.suppress(McpError, ClientError, OSError):
                        await self.client.request("resources/unsubscribe", {"uri": uri})

    async def _retried(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """`attempt()`, again after a pause while the server refuses connections (restarting, P136): a refused
        connection carried nothing, so even a tool call is safe to send again."""
        for pause in RETRY_S:
            try:
                return await attempt()
            except ConnectError as exc:
                if not isinstance(exc.__cause__, ConnectionRefusedError):
                    raise
                log.info("the server refused the connection; trying again in %g s", pause)
                await asyncio.sleep(pause)
        return await attempt()


class SessionListen:
    """One 2026 host listen stream to a 2025-11-25 server: what it was granted, and the notices for it."""

    def __init__(self, honored: dict[str, Any]) -> None:
        self.honored = honored
        self.queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=LISTEN_BACKLOG)

    def offer(self, message: dict[str, Any]) -> None:
        """Queue a session notice if this stream asked for it (a full queue drops it: the host is not reading)."""
        method = message.get("method")
        if method == RESOURCE_UPDATED:
            uri = (message.get("params") or {}).get("uri")
            if uri not in self.honored.get("resourceSubscriptions", ()):
                return
        elif not self.honored.get(LIST_CHANGES[str(method).split("/")[1]]):
            return
        with contextlib.suppress(asyncio.QueueFull):
            self.queue.put_nowait(message)


def host_capabilities(caps: dict[str, Any], *, list_changes: bool, subscribe: bool = False) -> dict[str, Any]:
    """The server's capabilities without what the bridge does not relay: list changes unless `list_changes`,
    resource subscriptions unless `subscribe`."""
    dropped = ({"listChanged"} if not list_changes else set()) | ({"subscribe"} if not subscribe else set())
    shown: dict[str, Any] = {}
    for name, value in caps.items():
        shown[name] = {k: v for k, v in value.items() if k not in dropped} if isinstance(value, dict) else value
    return shown


def _round_of(method: str, params: dict[str, Any], result: dict[str, Any], number: int) -> Round | None:
    """A well-formed `input_required` result as a `Round` the client can answer; None for anything else."""
    asks, state = result.get("inputRequests"), result.get("requestState")
    if result.get("resultType") != "input_required" or not isinstance(asks, dict) or not asks:
        return None
    if state is not None and not isinstance(state, str):
        return None
    return Round(method=method, params=params, input_requests=asks, request_state=state, number=number)


def _result_of(step: Round) -> dict[str, Any]:
    """A round the host answers itself, as the `input_required` result the server sent."""
    result: dict[str, Any] = {"resultType": "input_required", "inputRequests": step.input_requests}
    if step.request_state is not None:
        result["requestState"] = step.request_state
    return result


def _relay(token: Any, to_host: Notify, skip: frozenset[str] = frozenset()) -> Notify:
    """The notifications of one request, to the host: progress under the host's token (none without one),
    none of the methods in `skip`."""

    async def relay(message: dict[str, Any]) -> None:
        if message.get("method") in skip:
            return
        if message.get("method") == "notifications/progress":
            if token is None:
                return
            message = {**message, "params": {**(message.get("params") or {}), "progressToken": token}}
        await to_host(message)

    return relay
