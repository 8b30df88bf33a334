"""The server span of each request and the `mcp.server.operation.duration` histogram (docs/observability.md).

One SERVER span per request, named `{mcp.method.name} {target}`, with the attributes of the MCP semantic
conventions and Baton's `baton.mrtr.*` (protocol.md POT3). A round's span starts once its `requestState`
is open, because the flow's trace sealed in it decides the parent (protocol.md POT2, POT4); its start
time is the request's arrival all the same. Imported only when telemetry is on (`baton.server.observe`).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from ..protocol.capabilities import ask_kinds
from ..protocol.constants import META_PROTOCOL_VERSION
from ..protocol.hosts import host_without_port
from ..protocol.messages import Message
from ..telemetry import flowtrace, names, otel
from ..telemetry.never import error_type, screen, session_digest
from .exchange import Exchange, Reply
from .outbound import Stream
from .sessions import LegacySession
from .subscriptions import Subscription

if TYPE_CHECKING:
    from ..state.seal import FlowState
    from .context import Ask
    from .core import Server

_SERVED: ContextVar[Served | None] = ContextVar("baton_served", default=None)
_OUTCOMES = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}

Handle = Callable[[Message, Exchange], Coroutine[Any, Any, "Reply | Subscription"]]
HandleLegacy = Callable[[Message, Exchange, LegacySession, Stream], Coroutine[Any, Any, Reply]]
Initialize = Callable[[Message, Exchange], tuple[Reply, LegacySession | None]]


class ServerObserver:
    """Wraps a server's entry points in spans and hears the replay engine's rounds."""

    def __init__(self, server: Server) -> None:
        self.instruments = otel.Instruments("server", server.version)
        self.arguments = server.trace_arguments  # tool arguments on spans: the author's opt-in (POT5)

    def wrap(self, handle: Handle) -> Handle:
        async def traced(msg: Message, exchange: Exchange) -> Reply | Subscription:
            served = Served(self, msg, exchange, None)
            token = _SERVED.set(served)
            try:
                reply = await handle(msg, exchange)
            except BaseException as exc:
                served.end(None, exc)
                raise
            finally:
                _SERVED.reset(token)
            served.end(reply, None)
            return reply

        return traced

    def wrap_legacy(self, handle: HandleLegacy) -> HandleLegacy:
        async def traced(msg: Message, exchange: Exchange, session: LegacySession, stream: Stream) -> Reply:
            served = Served(self, msg, exchange, session)
            token = _SERVED.set(served)
            try:
                reply = await handle(msg, exchange, session, stream)
            except BaseException as exc:
                served.end(None, exc)
                raise
            finally:
                _SERVED.reset(token)
            served.end(reply, None)
            return reply

        return traced

    def wrap_initialize(self, initialize: Initialize) -> Initialize:
        def traced(msg: Message, exchange: Exchange) -> tuple[Reply, LegacySession | None]:
            served = Served(self, msg, exchange, None)
            try:
                reply, session = initialize(msg, exchange)
            except BaseException as exc:
                served.end(None, exc)
                raise
            served.session(session)
            served.end(reply, None)
            return reply, session

        return traced

    # -- what the replay engine and single use tell (baton.server.observe.RoundObserver) ----------------

    def round(self, method: str, params: dict[str, Any], state: FlowState, arguments: dict[str, Any]) -> None:
        served = _SERVED.get()
        if served is not None:
            served.round(method, params, state, arguments)

    def played(self, asks: dict[str, Ask], state: FlowState) -> None:
        served = _SERVED.get()
        if served is not None:
            served.played(asks, state)

    def single_use(self, outcome: str) -> None:
        served = _SERVED.get()
        if served is not None:
            served.attributes[names.SINGLE_USE] = outcome


class Served:
    """One request's span in the making: its attributes, then its span once the parent is known."""

    __slots__ = (
        "_responses",
        "attributes",
        "client",
        "name",
        "observer",
        "rounds",
        "span",
        "start_ns",
        "started",
        "token",
    )

    def __init__(self, observer: ServerObserver, msg: Message, exchange: Exchange, session: LegacySession | None):
        self.observer = observer
        self.start_ns = otel.now_ns()
        self.span: otel.Span | None = None
        self.token: object = None
        self.rounds = 0
        self._responses: list[str] = []
        params = msg.params
        meta = params.get("_meta")
        method = msg.method
        attributes: dict[str, Any] = {names.MCP_METHOD: method}
        if msg.id is not None:
            attributes[names.JSONRPC_REQUEST_ID] = str(msg.id)
        version = meta.get(META_PROTOCOL_VERSION) if type(meta) is dict else None
        if session is not None:
            version = session.version
        elif not isinstance(version, str):
            version = params.get("protocolVersion") if method == "initialize" else None
        attributes[names.MCP_PROTOCOL_VERSION] = version
        target = None
        if method == "tools/call":
            target = params.get("name") if isinstance(params.get("name"), str) else None
            attributes[names.GENAI_TOOL] = target
            attributes[names.GENAI_OPERATION] = names.EXECUTE_TOOL
        elif method == "prompts/get":
            target = params.get("name") if isinstance(params.get("name"), str) else None
            attributes[names.GENAI_PROMPT] = target
        elif method.startswith("resources/"):
            attributes[names.MCP_RESOURCE_URI] = params.get("uri") if isinstance(params.get("uri"), str) else None
        self.name = names.span_name(method, target)
        info = exchange.info
        if info.transport == "http":
            attributes[names.NETWORK_TRANSPORT] = names.TRANSPORT_TCP
            attributes[names.NETWORK_PROTOCOL] = "http"
            host = info.headers.get("host") if info.headers is not None else None
            if host:
                address = host_without_port(host)
                attributes[names.SERVER_ADDRESS] = address.strip("[]")
                port = host[len(address) + 1 :]
                if port.isdigit():
                    attributes[names.SERVER_PORT] = int(port)
            if info.client is not None:
                attributes[names.CLIENT_ADDRESS], attributes[names.CLIENT_PORT] = info.client
        else:
            attributes[names.NETWORK_TRANSPORT] = names.TRANSPORT_PIPE
        self.attributes = attributes
        if session is not None:
            self.session(session)
        self.client = otel.from_meta(meta)

    def session(self, session: LegacySession | None) -> None:
        if session is not None and session.id:
            self.attributes[names.MCP_SESSION_ID] = session_digest(session.id)

    def round(self, method: str, params: dict[str, Any], state: FlowState, arguments: dict[str, Any]) -> None:
        """A round's state is open: its number, the answers it carries; the span starts now, under the flow."""
        self.rounds += 1
        responses = params.get("inputResponses")
        self._responses = list(responses) if isinstance(responses, dict) else []
        if self.span is not None:  # a 2025-11-25 request runs its rounds itself, in this one span
            self.attributes[names.ROUNDS] = self.rounds
            return
        attributes = self.attributes
        attributes[names.ROUND] = state.round + 1
        token = params.get("requestState")
        if isinstance(token, str):
            attributes[names.STATE_IN] = len(token)
        if method == "tools/call" and self.observer.arguments:
            attributes[names.GENAI_TOOL_ARGUMENTS] = arguments
        self.start(flowtrace.decode(state.journal.trace) if state.journal.trace else None)

    def played(self, asks: dict[str, Ask], state: FlowState) -> None:
        """The round's answers by key and outcome, its asks by key and mode; the flow's trace goes into the
        state about to be sealed."""
        if self._responses:
            recorded = state.journal.answers
            answers = self.attributes.setdefault(names.ANSWERS, [])
            for key in self._responses:
                if key in asks:
                    outcome = "invalid"
                elif key in recorded:
                    answer = recorded[key][1]
                    action = answer.get("action") if isinstance(answer, dict) else None
                    outcome = _OUTCOMES.get(action, "accepted") if isinstance(action, str) else "accepted"
                else:
                    outcome = "unsolicited"
                answers.append(f"{key}:{outcome}")
        if asks:
            self.attributes[names.ASKS] = [f"{key}:{ask_kinds(ask.request)[0]}" for key, ask in asks.items()]
            if self.span is not None:
                state.journal.trace = otel.flow_of(self.span)

    def start(self, flow: flowtrace.FlowTrace | None, *, current: bool = True) -> None:
        """Start the span (at the request's arrival) under its parent; `current`: the handler's spans nest in it."""
        parent, links = otel.parent_of_round(self.client, flow)
        attributes = screen(self.attributes, arguments=self.observer.arguments)
        self.started = dict(attributes)
        self.span = span = self.observer.instruments.start(
            self.name, otel.SERVER, parent, attributes, self.start_ns, links
        )
        if current:
            self.token = otel.attach(span)

    def end(self, reply: Reply | Subscription | tuple[Reply, Any] | None, exc: BaseException | None) -> None:
        if self.span is None:  # no round ran: a list, an error before the state opened, ...
            self.start(None, current=False)
        assert self.span is not None
        attributes = self.attributes
        failed = False
        if exc is not None:
            attributes[names.ERROR_TYPE] = type(exc).__qualname__
            failed = True
        elif isinstance(reply, Reply):
            if reply.code is not None:
                code = error_type(reply.code)
                attributes[names.ERROR_TYPE] = attributes[names.RPC_STATUS_CODE] = code
                failed = True
            else:
                result = reply.body.get("result")
                if isinstance(result, dict):
                    attributes[names.RESULT_TYPE] = result.get("resultType", "complete")
                    state = result.get("requestState")
                    if isinstance(state, str):
                        attributes[names.STATE_OUT] = len(state)
                    if result.get("isError") is True:
                        attributes[names.ERROR_TYPE] = names.TOOL_ERROR
                        failed = True
        kept = screen(attributes, arguments=self.observer.arguments)
        span = self.span
        started = self.started
        span.set_attributes({k: v for k, v in kept.items() if started.get(k) != v})  # each set costs the SDK
        if failed:
            span.set_status(otel.ERROR)
        end_ns = otel.now_ns()
        span.end(end_time=end_ns)
        if self.token is not None:
            otel.detach(self.token)
            self.token = None
        self.observer.instruments.record((end_ns - self.start_ns) / 1e9, kept)
