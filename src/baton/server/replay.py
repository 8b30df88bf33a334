"""The replay engine: runs one round of a handler that may ask, and answers its result or `input_required`.

A handler runs from the top on every round. Before any user code runs, the request's `requestState`
(if present) is opened: authenticity, expiry, principal and the binding to this method, target and
arguments. The handler then runs with a `Context` over the journal the state carries; each ask
returns its recorded answer or suspends the handler. Afterwards the engine reads the Context's
outcome, whatever the handler did: pending asks go out with a freshly sealed `requestState` (an
unanswered ask never fails open); otherwise the handler's value becomes the method's result. A
single-use flow's rounds go through `SingleUse` first.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from dataclasses import dataclass
from types import CoroutineType
from typing import Any

import orjson

from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import LOG_LEVELS, META_LOG_LEVEL
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError, UsageError, invalid_params
from ..protocol.messages import Message, log_level
from ..state.seal import FlowState, InvalidState, Sealer
from .context import Context, Suspended
from .exchange import Exchange
from .parts import ConnectPart
from .registry import Handler
from .results import ToolError, error_result
from .single_use import INVALID_STATE_MESSAGE, Round, SingleUse

log = logging.getLogger("baton.server")


@dataclass(slots=True)
class Flow:
    """One call of a handler that may ask: what runs, what its requestState is bound to, and how the
    handler's value becomes the method's result."""

    method: str
    target: str  # the tool or prompt name, or the resource URI
    arguments: dict[str, Any]  # bound into requestState with the method and target
    handler: Handler
    context_param: str | None  # the handler's parameter that receives the Context, if any
    kwargs: dict[str, Any]  # the handler's arguments, already checked
    finish: Callable[[Any], dict[str, Any]]  # the handler's value -> the complete result
    tool_errors: bool = False  # a tools/call: failures the model can act on become tool errors
    single_use: bool = False


class ReplayEngine:
    """Runs rounds for one server: its sealer, its single-use ledger and its connect kit, all given lazily."""

    def __init__(
        self, sealer: Callable[[], Sealer], single_use: SingleUse, connect: Callable[[], ConnectPart]
    ) -> None:
        self._sealer = sealer
        self.single_use = single_use
        self._connect = connect

    def run(self, flow: Flow, msg: Message, ex: Exchange, caps: ClientCapabilities) -> Round:
        """The coroutine that runs one round of `flow` for this request.

        The request's own checks (inputResponses, requestState) run now, before the coroutine is made.
        """
        params = msg.params
        responses = params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise invalid_params('Invalid params: "inputResponses" must be an object mapping keys to answers')
        meta = params["_meta"]
        level = log_level(params) if META_LOG_LEVEL in meta else None
        if level is not None and level not in LOG_LEVELS:  # refused before a single-use token is claimed
            raise invalid_params(f"Invalid params: unknown log level {level!r}")
        digest = request_binding(flow.method, flow.target, flow.arguments)
        solicited = "requestState" in params  # present means it must open: null or a number fails closed too
        if solicited:
            token = params["requestState"]
            try:
                state = self._sealer().open(token, ex.principal, digest)
            except InvalidState as exc:
                log.warning("rejected requestState for %s %r: %s", flow.method, flow.target, exc.reason)
                raise McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE) from None
        else:
            state = FlowState()
        play = self._play(flow, msg, ex, caps, state, digest, level)
        if flow.single_use and solicited:
            return self.single_use.run(str(token), ex.principal, state.expires, play)
        return play

    async def _play(
        self,
        flow: Flow,
        msg: Message,
        ex: Exchange,
        caps: ClientCapabilities,
        state: FlowState,
        digest: bytes,
        level: str | None,
    ) -> dict[str, Any]:
        """Run the handler once for this round, with the journal opened from the state."""
        params = msg.params
        ctx = Context(
            method=flow.method,
            request_id=msg.id,
            principal=ex.principal,
            capabilities=caps,
            meta=params["_meta"],
            journal=state.journal,
            responses=params.get("inputResponses", {}),
            solicited="requestState" in params,
            emit=ex.emit,
            log_level=level,
            flow_id=state.flow_id,
            connect=self._connect,
        )
        kwargs = flow.kwargs
        if flow.context_param is not None:
            kwargs[flow.context_param] = ctx
        failure: Exception | None = None
        value: Any = None
        try:
            value = flow.handler(**kwargs)
            if type(value) is CoroutineType or inspect.isawaitable(value):  # an async def handler, usually
                value = await value
        except Suspended:
            pass
        except Exception as exc:
            failure = exc
        # Whatever the handler did with a suspension, pending asks win: an ask never fails open.
        asks, error = ctx.outcome()
        if error is not None:
            raise error
        if asks:
            state.round += 1
            pending: dict[str, str] = {}
            requests: dict[str, Any] = {}
            for key, ask in asks.items():
                pending[key] = ask.digest
                requests[key] = ask.request
            state.journal.pending = pending
            return {
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": self._sealer().seal(state, ex.principal, digest),
            }
        if failure is not None:
            return _failure(failure, flow)
        return flow.finish(value)


def _failure(exc: Exception, flow: Flow) -> dict[str, Any]:
    """What a handler's exception answers: its own McpError as is; for a tool, a `ToolError` or a
    `ValueError` of the author's becomes a tool error the model reads; anything else (Baton's own
    `UsageError` included) is logged and answered as an internal error that hides the details."""
    if isinstance(exc, McpError):
        raise exc
    if flow.tool_errors and (
        isinstance(exc, ToolError) or (isinstance(exc, ValueError) and not isinstance(exc, UsageError))
    ):
        return error_result(str(exc))
    log.error("%s %r raised", flow.method, flow.target, exc_info=exc)
    if flow.tool_errors:
        return error_result(f"Tool {flow.target} failed with an internal error ({type(exc).__name__})")
    raise McpError(INTERNAL_ERROR, f"Internal error while answering {flow.method} {flow.target}")


def request_binding(method: str, target: str, arguments: dict[str, Any]) -> bytes:
    """What a requestState is bound to: the method, its target and the canonical arguments, length-prefixed.

    These bytes go into AES-GCM's associated data as they are (GHASH is cheaper than a hash first).
    """
    return _binding_prefix(method, target) + orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)


@functools.lru_cache(maxsize=1024)  # by (method, target): the same few come again and again
def _binding_prefix(method: str, target: str) -> bytes:
    m, t = method.encode(), target.encode()
    return len(m).to_bytes(4, "big") + m + len(t).to_bytes(4, "big") + t
