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
from ..protocol.constants import LEGACY_VERSION, SERVER_REQUEST_METHODS
from ..protocol.errors import McpError
from ..telemetry import names, otel
from ..telemetry.common import known_method, known_version
from ..telemetry.never import error_type, screen

FLOWS_KEPT = 256
"""Open flows whose next round's parent the client remembers (the least recently used forgotten first)."""

Send = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]
Answer = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]


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

    async def leg(self, method: str, body: dict[str, Any], send: Send, version: str) -> dict[str, Any]:
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
        if method in ("tools/call", "prompts/get", "resources/read") and version != LEGACY_VERSION:
            attributes[names.ROUND] = number + 1
        started = screen(attributes, arguments=self.arguments)
        span = self.instruments.start(names.span_name(method, target), otel.CLIENT, parent, started, start_ns)
        context = otel.context_with(span)
        meta = body.get("_meta")
        if type(meta) is dict:
            otel.inject(meta, context)  # the leg's own fresh dict (Client._leg, Session)
        else:
            meta = {}
            otel.inject(meta, context)
            if meta:  # nothing to carry (no tracer provider, only a meter's): no `_meta` added
                body["_meta"] = meta
        failed = True
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
            if not failed:
                failed = self._read(result, attributes, context, number + 1)
            kept = screen(attributes, arguments=self.arguments)
            span.set_attributes({k: v for k, v in kept.items() if started.get(k) != v})  # the SDK cleans each again
            if failed:
                span.set_status(otel.ERROR)
            end_ns = otel.now_ns()
            span.end(end_time=end_ns)
            if self.instruments.metered:
                self.instruments.record(
                    (end_ns - start_ns) / 1e9, {k: v for k, v in kept.items() if k in names.METRIC_ATTRIBUTES}
                )
        return result

    async def answering(self, message: dict[str, Any], answer: Answer) -> dict[str, Any]:
        """Answer one server request of a 2025-11-25 session (`answer`: the JSON-RPC response) inside its span."""
        start_ns = otel.now_ns()
        method = known_method(message.get("method"), SERVER_REQUEST_METHODS)  # the server's text names nothing
        params = message.get("params")
        parent = otel.from_meta(params.get("_meta") if isinstance(params, dict) else None)
        attributes: dict[str, Any] = {names.MCP_METHOD: method, names.MCP_PROTOCOL_VERSION: LEGACY_VERSION}
        attributes[names.NETWORK_TRANSPORT] = self.network.get(names.NETWORK_TRANSPORT)
        rid = message.get("id")
        if isinstance(rid, str | int) and not isinstance(rid, bool):
            attributes[names.JSONRPC_REQUEST_ID] = str(rid)
        if self._answering is None:
            self._answering = otel.Instruments("server")
        instruments = self._answering
        span = instruments.start(method, otel.SERVER, parent, screen(attributes), start_ns)
        error: str | None = None
        try:
            response = await answer(message)
        except BaseException as exc:
            error = type(exc).__qualname__
            raise
        else:
            failure = response.get("error")
            if isinstance(failure, dict):
                error = error_type(failure["code"])  # `answer` made it: its code is an int
                span.set_attribute(names.RPC_STATUS_CODE, error)
        finally:
            if error is not None:
                span.set_attribute(names.ERROR_TYPE, error)
                span.set_status(otel.ERROR)
            end_ns = otel.now_ns()
            span.end(end_time=end_ns)
            if instruments.metered:
                metric = {k: v for k, v in attributes.items() if k in names.METRIC_ATTRIBUTES and v is not None}
                if error is not None:
                    metric[names.ERROR_TYPE] = error
                instruments.record((end_ns - start_ns) / 1e9, metric)
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
