"""The server span of each request and the `mcp.server.operation.duration` histogram (docs/observability.md).

One SERVER span per request, named `{mcp.method.name} {target}`, with the attributes of the MCP semantic
conventions and Baton's `baton.mrtr.*` (protocol.md P62). A round's span starts once its `requestState`
is open, because the flow's trace sealed in it decides the parent (protocol.md P61, P63); its start
time is the request's arrival all the same. In a 2025-11-25 session each ask the server sends the client
(`elicitation/create`, ...) is a CLIENT span under the request's, its context in the ask's `_meta`, and a point
of `mcp.client.operation.duration`, as the conventions ask of the side that sends a request. Imported only
when telemetry is on (`baton.server.observe`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Mapping, Sequence
from contextvars import ContextVar
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..protocol.capabilities import ask_kinds
from ..protocol.constants import META_PROTOCOL_VERSION
from ..protocol.hosts import host_without_port
from ..protocol.messages import Message
from ..telemetry import flowtrace, names, otel
from ..telemetry.common import CommonAttributes, failed, metric_of
from ..telemetry.never import error_type, screen, session_digest
from .exchange import Exchange, Reply
from .outbound import PeerError, PeerGone, Stream
from .sessions import ServerSession
from .subscriptions import Subscription

if TYPE_CHECKING:
    from ..state.seal import FlowState
    from .context import Ask
    from .core import Server

_SERVED: ContextVar[Served | None] = ContextVar("baton_served", default=None)
_NAMED = frozenset({"tools/call", "prompts/get"})
"""The methods whose `name` is the span's target."""
_HOSTS_KEPT = 16
"""`Host` header values whose parse is kept: a server answers to a few names; past these, each is parsed anew."""
_OUTCOMES = {"accept": "accepted", "decline": "declined", "cancel": "cancelled"}

Handle = Callable[[Message, Exchange], Coroutine[Any, Any, "Reply | Subscription"]]
HandleHandshake = Callable[[Message, Exchange, ServerSession, Stream], Coroutine[Any, Any, Reply]]
Initialize = Callable[[Message, Exchange], tuple[Reply, ServerSession | None]]

_R = TypeVar("_R", bound="Reply | Subscription")


async def _traced(observer: ServerObserver, handle: Callable[..., Coroutine[Any, Any, _R]], *args: Any) -> _R:
    """Await `handle(msg, exchange, ...)` (`args`) inside the request's span: its `Served` current, the span ended
    with the reply or the exception. The wrapper itself: one coroutine a request, not two (protocol.md P110)."""
    served = Served(observer, args[0], args[1], args[2] if len(args) > 2 else None)
    token = _SERVED.set(served)
    try:
        reply = await handle(*args)
    except BaseException as exc:
        served.end(None, exc)
        raise
    finally:
        _SERVED.reset(token)
    served.end(reply, None)
    return reply


class ServerObserver:
    """Wraps a server's entry points in spans and hears the replay engine's rounds."""

    def __init__(self, server: Server) -> None:
        self.instruments = otel.Instruments("server")
        self.common = CommonAttributes()
        self.arguments = server.settings.trace_arguments  # tool arguments on spans: the author's opt-in (P64)
        self.registry: dict[str, Mapping[str, object]] = {"tools/call": server.tools, "prompts/get": server.prompts}
        """The live registries that name a span's target; a name not in them is `_OTHER` (protocol.md P78)."""
        self._asking: otel.Instruments | None = None  # the client side's histogram, made at the first ask
        self._hosts: dict[str, tuple[str, int | None]] = {}

    def server_of(self, host: str) -> tuple[str, int | None]:
        """`server.address` and `server.port` of a `Host` header, parsed once per value (a few are kept)."""
        found = self._hosts.get(host)
        if found is None:
            address = host_without_port(host)
            port = host[len(address) + 1 :]
            found = (address.strip("[]"), int(port) if port.isdigit() else None)
            if len(self._hosts) < _HOSTS_KEPT:
                self._hosts[host] = found
        return found

    def wrap(self, handle: Handle) -> Handle:
        return cast(Handle, partial(_traced, self, handle))

    def wrap_handshake(self, handle: HandleHandshake) -> HandleHandshake:
        """The session (the third argument) names the span and the asks' (`asking`)."""
        return cast(HandleHandshake, partial(_traced, self, handle))

    def wrap_initialize(self, initialize: Initialize) -> Initialize:
        def traced(msg: Message, exchange: Exchange) -> tuple[Reply, ServerSession | None]:
            served = Served(self, msg, exchange, None)
            try:
                reply, session = initialize(msg, exchange)
            except BaseException as exc:
                served.end(None, exc)
                raise
            served.session = session  # its digest names the span when it ends (_request)
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
            served.single_use = outcome

    async def asking(
        self,
        key: str,
        request: dict[str, Any],
        send: Callable[[dict[str, Any] | None], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """Send one ask of a 2025-11-25 request (`send(params)`) inside a CLIENT span, the request's span its parent.
        Only the trace context goes into the ask's `_meta`: the request's baggage is the server's, not the client's."""
        start_ns = otel.now_ns()
        method = request["method"]  # the server's own: elicitation/create, sampling/createMessage, roots/list
        served = _SERVED.get()
        attributes: dict[str, Any] = {names.MCP_METHOD: method}
        if served is not None:
            start = served.common.start
            attributes[names.MCP_PROTOCOL_VERSION] = start.get(names.MCP_PROTOCOL_VERSION)
            attributes[names.NETWORK_TRANSPORT] = start.get(names.NETWORK_TRANSPORT)
            if served.session is not None and served.session.id:
                attributes[names.MCP_SESSION_ID] = session_digest(served.session.id)
        attributes[names.ASKS] = [f"{key}:{ask_kinds(request)[0]}"]
        if self._asking is None:
            self._asking = otel.Instruments("client")
        instruments = self._asking
        span = instruments.start(method, otel.CLIENT, otel.current(), screen(attributes), start_ns)
        params = request.get("params")
        sent: dict[str, Any] | None = params if isinstance(params, dict) else None
        meta = dict(sent["_meta"]) if sent is not None and type(sent.get("_meta")) is dict else {}
        instruments.inject(meta, span, baggage=False)
        if meta:  # else nothing to carry (no tracer provider): the ask goes as it was
            sent = {**(sent or {}), "_meta": meta}
        metric = metric_of(attributes)
        answered = False
        try:
            answer = await send(sent)
            answered = True
            return answer
        except PeerGone:  # no answer came at all: no status code to name
            span.set_attribute(names.ERROR_TYPE, "PeerGone")
            metric = failed(metric, "PeerGone")
            raise
        except PeerError as exc:
            error = error_type(exc.code)  # the client's code: bounded (P78)
            span.set_attributes({names.ERROR_TYPE: error, names.RPC_STATUS_CODE: error})
            metric = failed(metric, error)
            raise
        except BaseException as exc:
            span.set_attribute(names.ERROR_TYPE, type(exc).__qualname__)
            metric = failed(metric, type(exc).__qualname__)
            raise
        finally:
            instruments.finish(span, start_ns, metric, not answered)


class Served:
    """One request's span in the making: its common attributes at once, its span once the parent is known, and
    the rest of its attributes only if that span is recording (a sampled-out request builds none,
    protocol.md P66)."""

    __slots__ = (
        "_responses",
        "client",
        "common",
        "extra",
        "msg",
        "observer",
        "rounds",
        "session",
        "single_use",
        "span",
        "start_ns",
        "token",
        "transport",
    )

    def __init__(self, observer: ServerObserver, msg: Message, exchange: Exchange, session: ServerSession | None):
        self.start_ns = otel.now_ns()
        self.observer = observer
        self.msg = msg
        self.transport = exchange.info
        self.session = session
        self.span: otel.Span | None = None
        self.extra: dict[str, Any] | None = None  # the span's other attributes, when it records
        self.token: object = None
        self.rounds = 0
        self.single_use: str | None = None
        self._responses: Sequence[str] = ()
        params = msg.params
        meta = params.get("_meta")
        # Method, target and version are bounded (`common.get`): the client is not authenticated yet (P78).
        method = msg.method
        version = meta.get(META_PROTOCOL_VERSION) if type(meta) is dict else None
        if session is not None:
            version = session.version
        elif type(version) is not str:
            version = params.get("protocolVersion") if method == "initialize" else None
            version = version if type(version) is str else None
        name = params.get("name") if method in _NAMED else None
        target = None if not isinstance(name, str) else name if name in observer.registry[method] else names.OTHER
        transport = names.TRANSPORT_TCP if exchange.info.transport == "http" else names.TRANSPORT_PIPE
        self.common = observer.common.get(method, target, version, transport)
        self.client = otel.from_meta(meta)  # None at once when `_meta` has no traceparent

    def _request(self) -> dict[str, Any]:
        """The attributes of this request alone (its id, URI, peers), built only for a recording span."""
        msg = self.msg
        extra: dict[str, Any] = {}
        if msg.id is not None:
            extra[names.JSONRPC_REQUEST_ID] = str(msg.id)
        if msg.method.startswith("resources/"):
            uri = msg.params.get("uri")
            extra[names.MCP_RESOURCE_URI] = uri if isinstance(uri, str) else None
        info = self.transport
        if info.transport == "http":
            extra[names.NETWORK_PROTOCOL] = "http"
            host = info.headers.get("host") if info.headers is not None else None
            if host:
                address, port = self.observer.server_of(host)
                extra[names.SERVER_ADDRESS] = address
                if port is not None:
                    extra[names.SERVER_PORT] = port
            if info.client is not None:
                extra[names.CLIENT_ADDRESS], extra[names.CLIENT_PORT] = info.client
        session = self.session
        if session is not None and session.id:
            extra[names.MCP_SESSION_ID] = session_digest(session.id)
        return extra

    def round(self, method: str, params: dict[str, Any], state: FlowState, arguments: dict[str, Any]) -> None:
        """A round's state is open: the span starts now, under the flow; its number, the answers it carries."""
        self.rounds += 1
        if self.span is None:
            self.start(flowtrace.decode(state.journal.trace) if state.journal.trace else None)
        elif self.extra is not None:  # a 2025-11-25 request runs its rounds itself, in this one span
            self.extra[names.ROUNDS] = self.rounds
        extra = self.extra
        if extra is None:  # sampled out: nothing more to know
            return
        responses = params.get("inputResponses")
        self._responses = list(responses) if isinstance(responses, dict) and responses else []
        if self.rounds == 1:
            extra[names.ROUND] = state.round + 1
            token = params.get("requestState")
            if isinstance(token, str):
                extra[names.STATE_IN] = len(token)
            if method == "tools/call" and self.observer.arguments:
                extra[names.GENAI_TOOL_ARGUMENTS] = arguments

    def played(self, asks: dict[str, Ask], state: FlowState) -> None:
        """The round's answers by key and outcome, its asks by key and mode; the flow's trace, sampled or not, goes
        into the state about to be sealed, so later rounds keep round 1's sampling decision (protocol.md P67)."""
        if asks and self.span is not None:
            state.journal.trace = otel.flow_of(self.span)
        extra = self.extra
        if extra is None:
            return
        if self._responses:
            # Only the keys the flow asked are named: the client chose the others, any number (P62).
            recorded = state.journal.answers
            answers = extra.setdefault(names.ANSWERS, [])
            unsolicited = 0
            for key in self._responses:
                if key in asks:
                    outcome = "invalid"
                elif key in recorded:
                    answer = recorded[key][1]
                    action = answer.get("action") if isinstance(answer, dict) else None
                    outcome = _OUTCOMES.get(action, "accepted") if isinstance(action, str) else "accepted"
                else:
                    unsolicited += 1
                    continue
                answers.append(f"{key}:{outcome}")
            if unsolicited:
                extra[names.UNSOLICITED] = extra.get(names.UNSOLICITED, 0) + unsolicited
        if asks:
            extra[names.ASKS] = [f"{key}:{ask_kinds(ask.request)[0]}" for key, ask in asks.items()]

    def start(self, flow: flowtrace.FlowTrace | None, *, current: bool = True) -> None:
        """Start the span (at the request's arrival) under its parent; `current`: the handler's spans nest in it.
        A later round of a flow sampled out in round 1 asks no sampler and builds no parent or link (P108)."""
        span = otel.sampled_out(flow) if flow is not None else None
        if span is None:
            parent, links = otel.parent_of_round(self.client, flow)
            common = self.common
            span = self.observer.instruments.start(common.name, otel.SERVER, parent, common.start, self.start_ns, links)
            if span.is_recording():
                self.extra = self._request()
        self.span = span
        if current:
            self.token = otel.attach(span)

    def end(self, reply: Reply | Subscription | tuple[Reply, Any] | None, exc: BaseException | None) -> None:
        if self.span is None:  # no round ran: a list, an error before the state opened, ...
            self.start(None, current=False)
        span = self.span
        assert span is not None
        extra = self.extra
        error: str | None = None
        if exc is not None:
            error = type(exc).__qualname__
        elif isinstance(reply, Reply):
            if reply.code is not None:
                error = error_type(reply.code)
                if extra is not None:
                    extra[names.RPC_STATUS_CODE] = error
            else:
                result = reply.body.get("result")
                if isinstance(result, dict):
                    if result.get("isError") is True:
                        error = names.TOOL_ERROR
                    if extra is not None:
                        extra[names.RESULT_TYPE] = result.get("resultType", "complete")
                        state = result.get("requestState")
                        if isinstance(state, str):
                            extra[names.STATE_OUT] = len(state)
        recording = False
        if extra is not None and span.is_recording():  # a span the handler ended itself is left as it is
            recording = True
            if error is not None:
                extra[names.ERROR_TYPE] = error
            if self.single_use is not None:
                extra[names.SINGLE_USE] = self.single_use
            span.set_attributes(screen(extra, arguments=self.observer.arguments))
        if self.token is not None:
            otel.detach(self.token)
            self.token = None
        metric = self.common.metric
        self.observer.instruments.finish(
            span,
            self.start_ns,
            metric if error is None else failed(metric, error),
            error is not None,
            recording,
        )
