"""Serving the 2025-11-25 era from the same handlers: `initialize`, the session's own methods, and the
bridge that runs a handler's asks as server requests on the request's stream (protocol.md P28-P32).

The bridge drives the replay engine itself (protocol.md P29): it runs a round exactly as for a
2026 client; when the round answers `input_required`, it sends each input request to the client
as a JSON-RPC request on the request's own stream, awaits the answers, and runs the next round
with them and the round's `requestState`, all inside the one client request. So a handler sees
the same thing in both eras (`ctx.once`, side effects before an ask, re-asks, the capability
gate, the answer checks), and the sealed state is verified on every round as for a 2026 retry.
What leaves for the client is then reshaped for the 2025-11-25 schema (`handshake_result`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from collections.abc import Awaitable
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import HANDSHAKE_VERSION, LOG_LEVELS
from ..protocol.era import MODERN_ONLY_METHODS
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    MISSING_CAPABILITY,
    RESOURCE_NOT_FOUND,
    URL_ELICITATION_REQUIRED,
    McpError,
    ResourceNotFound,
    invalid_params,
    method_not_found,
)
from ..protocol.messages import Message
from ..protocol.tasks import TASKS
from ..state.entropy import random_bytes
from .exchange import Exchange
from .outbound import PeerError, PeerGone, Stream
from .results import error_result
from .sessions import MAX_INFO_CHARS, ServerSession
from .subscriptions import admit_subscription
from .tasks_handshake import CAPABILITY as TASKS_CAPABILITY
from .tasks_handshake import METHODS as TASK_METHODS
from .tasks_handshake import HandshakeTasks, handshake_task

if TYPE_CHECKING:
    from .core import Server
    from .methods import MethodHandler

log = logging.getLogger("baton.server")

MAX_ROUNDS = 16
"""Rounds one 2025-11-25 request may run (each re-ask of an invalid answer is one)."""
MAX_OPEN_ASKS_PER_SESSION = 32
MAX_OPEN_ASKS = 10_000
"""Questions waiting for a client's answer at once, per 2025-11-25 session and per server instance: each holds
a request open for up to `ask_timeout_s`, so a client that never answers cannot pile them up (protocol.md P95)."""
_CLIENT_INFO_KEYS = ("name", "version", "title")
_SESSION_METHODS = frozenset({"ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
REMOVED_METHODS = _SESSION_METHODS | {"initialize"}
"""Methods of 2025-11-25 that 2026-07-28 removed: with the 2026 envelope they are unknown (protocol.md P28)."""


class _Refused(Exception):
    """An ask the client could not answer (an error, or no answer in time): the request ends (P29)."""

    def __init__(self, key: str, reason: str) -> None:
        super().__init__(reason)
        self.key = key
        self.reason = reason


class HandshakeEra:
    """One server's 2025-11-25 side: the handshake and the requests of a session."""

    def __init__(self, server: Server, methods: dict[str, MethodHandler]) -> None:
        self.server = server
        self._methods = methods
        self.open_asks = 0  # questions of every session of this instance waiting for an answer (P95)
        self.tasks = HandshakeTasks(lambda: server.runtime.tasks, self._ask_task)  # protocol.md P205

    # -- the handshake -----------------------------------------------------------------------------

    def initialize(self, msg: Message, principal: str) -> tuple[dict[str, Any], ServerSession]:
        """The `InitializeResult` and the session it opens. Any requested version gets 2025-11-25 back: the
        client decides whether it can use it (protocol.md P28)."""
        params = msg.params
        requested = params.get("protocolVersion")
        if not isinstance(requested, str):
            raise invalid_params('Invalid params: initialize needs "protocolVersion" (a string)')
        caps = params.get("capabilities", {})
        if not isinstance(caps, dict):
            raise invalid_params('Invalid params: "capabilities" must be an object')
        info = params.get("clientInfo")
        client_info = {  # bounded here, for both transports (a sealed session id carries it: P30)
            k: info[k][:MAX_INFO_CHARS]
            for k in _CLIENT_INFO_KEYS
            if isinstance(info, dict) and isinstance(info.get(k), str)
        }
        if requested != HANDSHAKE_VERSION:
            log.info("a client asked for MCP %r in initialize; offering %s", requested, HANDSHAKE_VERSION)
        declared = ClientCapabilities.parse(caps)
        # A 2025-11-25 client declares its extensions once, here; only those the server offers are kept, so
        # the sealed session id stays bounded by what the server declared (protocol.md P142).
        offered = self.server.extensions
        kept = {name: settings for name, settings in declared.extensions.items() if name in offered}
        if len(kept) != len(declared.extensions):
            declared = dataclasses.replace(declared, extensions=MappingProxyType(kept))
        session = ServerSession(principal, HANDSHAKE_VERSION, declared, client_info)
        s = self.server
        server_info: dict[str, Any] = {"name": s.name, "version": s.version}
        if s.title:
            server_info["title"] = s.title
        result: dict[str, Any] = {
            "protocolVersion": HANDSHAKE_VERSION,
            "capabilities": self.capabilities(),
            "serverInfo": server_info,
        }
        if s.instructions:
            result["instructions"] = s.instructions
        return result, session

    def capabilities(self) -> dict[str, Any]:
        """The 2026 capabilities, plus what only sessions have: logging and resource subscriptions."""
        caps = dict(self.server.runtime.capabilities())
        caps["logging"] = {}
        if TASKS in self.server.extensions:  # protocol.md P205: a task tool, reached the 2025-11-25 way too
            caps["tasks"] = TASKS_CAPABILITY
        if "resources" in caps:
            caps["resources"] = {**caps["resources"], "subscribe": True}
        return caps

    # -- a request in a session --------------------------------------------------------------------

    async def handle(self, msg: Message, ex: Exchange, session: ServerSession, stream: Stream) -> dict[str, Any]:
        """The result of one request of an initialized session (raises `McpError` for its error)."""
        method = msg.method
        if method in _SESSION_METHODS:
            return self._session_method(msg, session)
        if method == "initialize":
            raise McpError(INVALID_REQUEST, "Invalid request: this session is already initialized")
        tasked = TASKS in self.server.extensions
        if method in TASK_METHODS and tasked:
            result = await self.tasks.handle(msg, ex, stream)
            return handshake_result("tools/call" if method == "tasks/result" else method, result)
        handler = self._methods.get(method)
        if handler is None or method in MODERN_ONLY_METHODS or method in TASK_METHODS:
            raise method_not_found(method)
        if method == "tools/call" and "task" in msg.params and tasked:
            _check_task_call(self.server, msg.params)
        meta = msg.params.get("_meta")
        params = {**msg.params, "_meta": dict(meta) if isinstance(meta, dict) else {}}
        # A 2025-11-25 client has no inputResponses or requestState: the bridge alone sets them.
        params.pop("inputResponses", None)
        params.pop("requestState", None)
        elicitation_ids: dict[str, str] = {}

        async def url_done(key: str) -> None:
            eid = elicitation_ids.get(key)
            if eid is not None:
                await stream.notify("notifications/elicitation/complete", {"elicitationId": eid})

        last_progress: list[float] = []

        async def emit(method: str, params: dict[str, Any]) -> None:
            # One stream for all rounds: progress a later round replays is not sent again (protocol.md P29).
            if method == "notifications/progress":
                if last_progress and params["progress"] <= last_progress[0]:
                    return
                last_progress[:] = [params["progress"]]
            await stream.notify(method, params)

        ex.emit = emit
        ex.log_level = session.log_level or LOG_LEVELS[0]  # protocol.md P31: every level until setLevel
        ex.protocol_version = session.version
        ex.url_done = url_done
        ex.client_info = session.client_info
        for round_no in range(1, MAX_ROUNDS + 1):
            timeouts: dict[str, float] = {}  # the round's asks that set their own wait (protocol.md P95)
            ex.ask_timeouts = timeouts
            result = await handler(Message(method, params, msg.id, True), ex, session.capabilities)
            if result.get("resultType") != "input_required":
                return handshake_result(method, result)
            if round_no == MAX_ROUNDS:  # no question whose answer could not be used
                break
            requests = result.get("inputRequests") or {}
            try:
                answers = await self._ask_all(requests, stream, elicitation_ids, timeouts)
            except _Refused as refused:
                return handshake_result(method, _refused(method, refused))
            params = {**params, "inputResponses": answers, "requestState": result["requestState"]}
        raise McpError(INTERNAL_ERROR, f"{method} asked more than {MAX_ROUNDS - 1} rounds of questions; giving up")

    async def _ask_task(self, requests: dict[str, Any], stream: Stream) -> dict[str, Any]:
        """A waiting task's questions, asked on a `tasks/result` stream (protocol.md P205)."""
        try:
            return await self._ask_all(requests, stream, {}, {})
        except _Refused as refused:
            return _refused("tasks/result", refused)

    def _session_method(self, msg: Message, session: ServerSession) -> dict[str, Any]:
        method, params = msg.method, msg.params
        if method == "ping":
            return {}
        if method == "logging/setLevel":
            level = params.get("level")
            if level not in LOG_LEVELS:
                raise invalid_params(f"Invalid params: level must be one of {', '.join(LOG_LEVELS)}")
            session.log_level = level
            return {}
        # resources/subscribe and resources/unsubscribe (protocol.md P31)
        s = self.server
        if not (s.resources or s.templates):
            raise method_not_found(method)
        uri = params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params(f'Invalid params: {method} needs "uri" (a string)')
        if method == "resources/unsubscribe":
            session.subscriptions.discard(uri)
            return {}
        admit_subscription(session.subscriptions, uri)
        if s.runtime.find_resource(uri) is None:
            raise McpError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})
        session.subscriptions.add(uri)
        return {}

    async def _ask_all(
        self, requests: dict[str, Any], stream: Stream, elicitation_ids: dict[str, str], timeouts: dict[str, float]
    ) -> dict[str, Any]:
        """Send every input request of a round to the client at once and collect the answers by key; each
        waits for its own `timeout_s`, else `Server(ask_timeout_s)` (protocol.md P95)."""
        default = self.server.settings.ask_timeout_s
        sendable: list[tuple[str, str, dict[str, Any] | None]] = []
        for key, request in requests.items():
            method = request["method"]
            params = request.get("params")
            if method == "elicitation/create" and params is not None and params.get("mode") == "url":
                eid = elicitation_ids.get(key)
                if eid is None:
                    eid = elicitation_ids[key] = random_bytes(16).hex()
                params = {**params, "elicitationId": eid}
            sendable.append((key, method, params))
        if not stream.can_request:
            raise _cannot_ask(sendable)
        waiting = len(sendable)
        if len(stream.outbound) + waiting > MAX_OPEN_ASKS_PER_SESSION or self.open_asks + waiting > MAX_OPEN_ASKS:
            where = "this session" if len(stream.outbound) + waiting > MAX_OPEN_ASKS_PER_SESSION else "this server"
            log.warning("refused %d question(s): %s has too many waiting for answers", waiting, where)
            raise _Refused(
                sendable[0][0],
                f"{where} already has too many questions waiting for answers (at most "
                f"{MAX_OPEN_ASKS_PER_SESSION if where == 'this session' else MAX_OPEN_ASKS}); answer or cancel "
                "those first, then call again",
            )
        self.open_asks += waiting
        observer = self.server.runtime.engine.observer  # telemetry: each ask a span of its own (protocol.md P63)

        async def one(key: str, method: str, params: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
            timeout = timeouts.get(key, default)

            def send(sent: dict[str, Any] | None) -> Awaitable[dict[str, Any]]:
                return stream.request(method, sent, timeout, key)

            try:
                if observer is None:
                    return key, await send(params)
                return key, await observer.asking(key, {"method": method, "params": params}, send)
            except (TimeoutError, PeerGone) as exc:
                why = exc.message if isinstance(exc, PeerGone) else f"no answer within {timeout:g} s"
                if method == "elicitation/create":  # the user never answered: as if they dismissed it
                    log.info("elicitation %r: %s; read as cancelled", key, why)
                    return key, {"action": "cancel"}
                raise _Refused(key, f"the client did not answer {method}: {why}") from None
            except PeerError as exc:
                raise _Refused(key, f"the client answered {method} with error {exc.code}: {exc.message}") from None

        tasks = [asyncio.ensure_future(one(*item)) for item in sendable]
        try:
            return dict(await asyncio.gather(*tasks))
        finally:
            # One ask refused (or the request cancelled): withdraw the others, and let each tell the client
            # (notifications/cancelled) before the response goes out (protocol.md P29).
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            self.open_asks -= waiting


def _check_task_call(server: Server, params: dict[str, Any]) -> None:
    """A session's `tools/call` with `params.task` (protocol.md P205): `task` must be an object, and the tool
    one that runs as a task (else -32601, as the 2025-11-25 tasks say for a tool whose taskSupport is absent)."""
    if not isinstance(params["task"], dict):
        raise invalid_params('Invalid params: "task" must be an object (TaskMetadata)')
    name = params.get("name")
    tool = server.tools.get(name) if isinstance(name, str) else None
    if tool is not None and (tool.flow is None or tool.flow.task is None):
        raise McpError(
            METHOD_NOT_FOUND, f"Tool {name} does not run as a task (its taskSupport is forbidden): call it without task"
        )


def _cannot_ask(sendable: list[tuple[str, str, dict[str, Any] | None]]) -> McpError:
    """The error for a round whose stream cannot carry server requests (an HTTP POST answered with JSON):
    -32042 when every ask is a URL (the client may open them and retry), else a plain refusal (P29)."""
    if sendable and all(m == "elicitation/create" and p and p.get("mode") == "url" for _, m, p in sendable):
        elicitations = [p for _, _, p in sendable]
        return McpError(
            URL_ELICITATION_REQUIRED, "This request needs the user to open a URL first", {"elicitations": elicitations}
        )
    return McpError(
        INVALID_REQUEST,
        "Invalid request: this request asks the client for input, which needs an SSE response:"
        " send Accept: application/json, text/event-stream",
    )


def _refused(method: str, refused: _Refused) -> dict[str, Any]:
    """A request whose ask the client refused or never answered ends: a tool error for a tool, the
    request's error otherwise (protocol.md P29)."""
    if method == "tools/call":
        return error_result(f"Could not get input {refused.key!r} from the client: {refused.reason}")
    raise McpError(
        INTERNAL_ERROR,
        f"Could not get input {refused.key!r} from the client: {refused.reason}",
        {"input": refused.key, "error": refused.reason},
    )


def removed_method(method: str) -> McpError:
    """-32601 for a method 2026-07-28 removed, sent with the 2026 envelope: the message says how to reach the
    era that has it (protocol.md P28)."""
    return McpError(
        METHOD_NOT_FOUND,
        f"Method not found: {method} is not part of MCP 2026-07-28; for MCP {HANDSHAKE_VERSION}, send initialize"
        " without the 2026 _meta and use the session",
    )


def handshake_error(exc: McpError) -> McpError:
    """A 2026 error as the 2025-11-25 era knows it: -32021 becomes -32602 with the same data; a missing
    resource is -32002 (protocol.md P28)."""
    if exc.code == MISSING_CAPABILITY:
        return McpError(INVALID_PARAMS, exc.message, exc.data)
    if isinstance(exc, ResourceNotFound):
        return McpError(RESOURCE_NOT_FOUND, exc.message, exc.data)
    return exc


def handshake_result(method: str, result: dict[str, Any]) -> dict[str, Any]:
    """A result reshaped for the 2025-11-25 schema: no `resultType`, `ttlMs` or `cacheScope`; a tool's
    structured content only when it is an object (protocol.md P28; Baton derives output schemas only from
    object types, so tool descriptions need no change)."""
    if result.get("resultType") == "task":  # protocol.md P205: CreateTaskResult is {task: Task} in 2025-11-25
        return {"task": handshake_task(result)}
    result.pop("resultType", None)
    result.pop("ttlMs", None)
    result.pop("cacheScope", None)
    if method == "tools/call" and "structuredContent" in result and not isinstance(result["structuredContent"], dict):
        del result["structuredContent"]
    return result
