"""The client span of each leg and the `mcp.client.operation.duration` histogram (docs/observability.md).

Each request the client sends (each round of a flow) is a CLIENT span named `{mcp.method.name} {target}`;
its context goes into `params._meta` (`traceparent`, `tracestate`, `baggage`; SEP-414). A later round of
the same flow is the child of the round before it (found by the `requestState` it carries back), so a
flow is one trace on the client side too (protocol.md P63). In a 2025-11-25 session, each request the server
sends the client (`elicitation/create`, ...) is a SERVER span, the child of the server's span that sent it when
its `_meta` carries that context, and a point of `mcp.server.operation.duration`, as the conventions ask of the
side that receives a request. Imported only when telemetry is on.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

from ..protocol.capabilities import ask_kinds
from ..protocol.constants import HANDSHAKE_VERSION, SERVER_REQUEST_METHODS
from ..protocol.errors import McpError
from ..telemetry import names, otel
from ..telemetry.common import failed as failed_metric
from ..telemetry.common import known_method, known_version, metric_of
from ..telemetry.never import error_type, screen

FLOWS_KEPT = 256
"""Open flows whose next round's parent the client remembers (the least recently used forgotten first)."""

SendRequest = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Responder = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


class ClientObserver:
    def __init__(self, target: object, arguments: bool = False) -> None:
        self.instruments = otel.Instruments("client")
        self.arguments = arguments  # tool arguments and full resource URIs on spans: the caller's opt-in (P64)
        network: dict[str, Any] = {}
        if isinstance(target, str):
            url = urlsplit(target)
            network[names.NETWORK_TRANSPORT] = names.TRANSPORT_TCP
            network[names.NETWORK_PROTOCOL] = "http"
            network[names.SERVER_ADDRESS] = url.hostname
            network[names.SERVER_PORT] = url.port or (443 if url.scheme == "https" else 80)
        elif isinstance(target, (list, tuple)):  # a command: stdio
            network[names.NETWORK_TRANSPORT] = names.TRANSPORT_PIPE
        self.network = network
        self._answering: otel.Instruments | None = None  # the server side's histogram, made on first use
        self._flows: OrderedDict[str, tuple[otel.Context, int]] = OrderedDict()

    async def leg(self, method: str, body: dict[str, Any], send: SendRequest, version: str) -> dict[str, Any]:
        """Send one request (`send`) inside its span, its context injected into `body["_meta"]` (made if absent:
        `body` is the leg's own dict). `version`: the protocol version it is sent in; in a 2025-11-25 session a
        request is one span however many questions the server asks inside it, and has no round number."""
        start_ns = otel.now_ns()
        method = known_method(method)  # a made-up method names no span or metric point (protocol.md P78)
        attributes: dict[str, Any] = {names.MCP_METHOD: method, **self.network}
        attributes[names.MCP_PROTOCOL_VERSION] = known_version(version)
        target = body.get("name") if method in ("tools/call", "prompts/get") else None
        target = target if isinstance(target, str) else None
        if method == "tools/call":
            attributes[names.GENAI_TOOL] = target
            attributes[names.GENAI_OPERATION] = names.EXECUTE_TOOL
            if self.arguments:
                attributes[names.GENAI_TOOL_ARGUMENTS] = body.get("arguments")
        elif method == "prompts/get":
            attributes[names.GENAI_PROMPT] = target
        elif method.startswith("resources/") and isinstance(body.get("uri"), str):
            attributes[names.MCP_RESOURCE_URI] = body["uri"]
        state = body.get("requestState")
        flow = self._flows.pop(state, None) if isinstance(state, str) else None
        parent, number = flow if flow is not None else (otel.current(), 0)
        if isinstance(state, str):
            attributes[names.STATE_OUT] = len(state)
        if method in ("tools/call", "prompts/get", "resources/read") and version != HANDSHAKE_VERSION:
            attributes[names.ROUND] = number + 1
        started = screen(attributes, arguments=self.arguments)
        instruments = self.instruments
        span = instruments.start(names.span_name(method, target), otel.CLIENT, parent, started, start_ns)
        meta = body.get("_meta")
        if type(meta) is dict:
            instruments.inject(meta, span)  # the leg's own fresh dict (Client._leg, Session)
        else:
            meta = {}
            instruments.inject(meta, span)
            if meta:  # else nothing to carry (no tracer provider, only a meter's): no `_meta` added
                body["_meta"] = meta
        failed = True
        token = otel.attach(span)  # current while sent: a session opened again, and the asks on its stream, nest in it
        context = otel.current()  # the span's context: a later round of the flow is its child
        try:
            result = await send(body)
            failed = False
        except McpError as exc:
            attributes[names.ERROR_TYPE] = attributes[names.RPC_STATUS_CODE] = error_type(exc.code)
            raise
        except BaseException as exc:
            attributes[names.ERROR_TYPE] = type(exc).__qualname__
            raise
        finally:
            otel.detach(token)
            if not failed:
                failed = self._read(result, attributes, context, number + 1)
            kept = screen(attributes, arguments=self.arguments)
            span.set_attributes({k: v for k, v in kept.items() if started.get(k) != v})  # the SDK cleans each again
            instruments.finish(span, start_ns, metric_of(kept), failed)
        return result

    async def answering(self, message: dict[str, Any], answer: Responder) -> dict[str, Any]:
        """Answer one server request of a 2025-11-25 session (`answer`: the JSON-RPC response) inside its span,
        current while the host answers (its own spans nest in it). Its parent is the server's span when `_meta`
        carries its context, else the call whose stream brought it (`open_current`), else none. A `ping` is
        answered untraced: a keep-alive, not an operation of anyone's."""
        method = message.get("method")
        if method == "ping":
            return await answer(message)
        start_ns = otel.now_ns()
        method = known_method(method, SERVER_REQUEST_METHODS)  # the server's text names no span (P78)
        params = message.get("params")
        parent = otel.from_meta(params.get("_meta") if isinstance(params, dict) else None) or otel.open_current()
        attributes: dict[str, Any] = {names.MCP_METHOD: method, names.MCP_PROTOCOL_VERSION: HANDSHAKE_VERSION}
        attributes[names.NETWORK_TRANSPORT] = self.network.get(names.NETWORK_TRANSPORT)
        rid = message.get("id")
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            attributes[names.JSONRPC_REQUEST_ID] = str(rid)
        if self._answering is None:
            self._answering = otel.Instruments("server")
        instruments = self._answering
        span = instruments.start(method, otel.SERVER, parent, screen(attributes), start_ns)
        metric = metric_of(attributes)
        failed = True
        token = otel.attach(span)
        try:
            response = await answer(message)
            failure = response.get("error")
            if isinstance(failure, dict):
                error = error_type(failure.get("code"))
                span.set_attributes({names.ERROR_TYPE: error, names.RPC_STATUS_CODE: error})
                metric = failed_metric(metric, error)
            else:
                failed = False
        except BaseException as exc:
            span.set_attribute(names.ERROR_TYPE, type(exc).__qualname__)
            metric = failed_metric(metric, type(exc).__qualname__)
            raise
        finally:
            otel.detach(token)
            instruments.finish(span, start_ns, metric, failed)
        return response

    def _read(self, result: dict[str, Any], attributes: dict[str, Any], context: otel.Context, number: int) -> bool:
        """Attributes from a result; remembers a flow's next parent. Whether the result is an error."""
        kind = result.get("resultType", "complete")
        attributes[names.RESULT_TYPE] = kind
        if kind == "input_required":
            asks = result.get("inputRequests")
            if isinstance(asks, dict):
                attributes[names.ASKS] = [
                    f"{key}:{ask_kinds(ask)[0]}"
                    for key, ask in asks.items()
                    if isinstance(ask, dict) and "method" in ask
                ]
            state = result.get("requestState")
            if isinstance(state, str):
                attributes[names.STATE_IN] = len(state)
                self._flows[state] = (context, number)
                while len(self._flows) > FLOWS_KEPT:
                    self._flows.popitem(last=False)
        if result.get("isError") is True:
            attributes[names.ERROR_TYPE] = names.TOOL_ERROR
            return True
        return False
