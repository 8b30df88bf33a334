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
from types import CoroutineType
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from ..forms import FormError
from ..protocol.capabilities import ClientCapabilities, cannot_ask
from ..protocol.constants import HANDSHAKE_VERSION, LOG_LEVELS, META_CLIENT_INFO, META_LOG_LEVEL
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_STATE_MESSAGE,
    CapabilityMissing,
    McpError,
    UsageError,
    invalid_params,
)
from ..protocol.extensions import Extensions, negotiated
from ..protocol.messages import Message, log_level
from ..protocol.tasks import TASKS, required_error
from ..state.seal import FlowState, InvalidState, Sealer, StateTooLarge
from ..telemetry.never import resource_uri
from .apps import renders_apps
from .ask_app import waiting_result
from .context import Checkpoint, Context, Escalate, Suspended, TaskStatus
from .exchange import Exchange
from .ladder import PAGE_RUNGS, ask_then_call_again, rung, seen
from .lifespan import Lifespan
from .parts import ConnectPart, PageFlow
from .registry import Flow
from .results import ToolError, error_result, ready, tool_result
from .single_use import RoundRun, SingleUse
from .startup import ConfigurationError
from .tasks import Settled, TaskBoard, TaskJob, detached

if TYPE_CHECKING:
    from .observe import RoundObserver
    from .settings import ServerSettings

log = logging.getLogger("baton.server")

RETURNABLE = (
    "return text, content blocks, JSON values (dict, list, str, numbers, bool, None), dataclasses or pydantic models"
)
_EMPTY: dict[str, Any] = {}


class EngineHost(Protocol):
    """What the engine reads of the server's runtime, each when first needed (the sealer loads the key ring)."""

    single_use: SingleUse
    settings: ServerSettings  # `single_use` (every flow single-use) and `host_quirks`, read per request
    extensions: Extensions  # what the server declared

    @property
    def sealer(self) -> Sealer: ...

    @property
    def connect_kit(self) -> ConnectPart: ...

    lifespan: Lifespan | None
    tasks: TaskBoard


class ReplayEngine:
    """Runs rounds for one server: its sealer, its single-use ledger and its connect kit, read from `host`
    (the server's runtime), and whether the server makes every flow single-use."""

    def __init__(self, host: EngineHost) -> None:
        self._host = host
        self.observer: RoundObserver | None = None  # set when telemetry is on (observe.py, protocol.md P60)

    def run(
        self,
        flow: Flow,
        target: str,
        arguments: dict[str, Any],
        kwargs: dict[str, Any],
        msg: Message,
        ex: Exchange,
        caps: ClientCapabilities,
    ) -> RoundRun:
        """The coroutine that runs one round of `flow` for this request: `target` is the tool or prompt name
        or the resource URI, `arguments` what requestState is bound to with the method and target, `kwargs`
        the handler's checked arguments.

        Every check that can refuse the request (inputResponses, logLevel, requestState) runs now, before
        the coroutine is made and before a single-use token is claimed.
        """
        params = msg.params
        tasked = False
        if flow.task is not None:  # protocol.md P165: a task when both sides declared the extension
            if ex.protocol_version == HANDSHAKE_VERSION:  # P205: a 2025-11-25 session asks per call (params.task)
                tasked = isinstance(params.get("task"), dict) and TASKS in self._host.extensions
            else:
                tasked = negotiated(self._host.extensions, caps.extensions, TASKS) is not None
            if not tasked and flow.task == "required":
                if ex.protocol_version == HANDSHAKE_VERSION:  # a session: a tool error the model can relay (P96)
                    return ready(error_result(f"Tool {target} runs only as a task, which this client cannot follow."))
                raise required_error(f"tool {target}")
        responses = params.get("inputResponses", _EMPTY)
        if type(responses) is not dict and not isinstance(responses, dict):
            raise invalid_params('Invalid params: "inputResponses" must be an object mapping keys to answers')
        level = log_level(params) if META_LOG_LEVEL in params["_meta"] else ex.log_level
        if level is not None and level not in LOG_LEVELS:
            raise invalid_params(f"Invalid params: unknown log level {level!r}")
        digest = request_binding(flow.method, target, arguments)
        solicited = "requestState" in params  # present means it must open: null or a number fails closed too
        if solicited:
            token = params["requestState"]
            try:
                state = self._host.sealer.open(token, ex.principal, digest)
            except InvalidState as exc:
                log.warning("rejected requestState for %s %r: %s", flow.method, _logged(flow, target), exc.reason)
                raise McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE) from None
        else:
            state = FlowState()
        if self.observer is not None:
            self.observer.round(flow.method, params, state, arguments)
        lifespan = self._host.lifespan
        quirks = self._host.settings.host_quirks
        if quirks:  # protocol.md P140: what the host really shows, by its clientInfo (opt-in)
            info = ex.client_info if ex.client_info is not None else params["_meta"].get(META_CLIENT_INFO)
            caps = seen(caps, info, quirks)
        job: TaskJob | None = None
        if tasked:
            job = TaskJob(
                flow=flow, target=target, kwargs=kwargs, params=params, exchange=detached(ex), caps=caps, state=state
            )
            if flow.task_start == "call":  # protocol.md P167: the task exists before the handler runs
                return self._host.tasks.create(job)
        on_page = flow.when_unasked in PAGE_RUNGS
        page = self._page_flow(flow, caps, ex.principal, digest) if on_page else None
        # Positional: a class called with keywords builds a dict of them on every request (bench/README.md).
        ctx = Context(
            msg,  # request
            ex,  # exchange
            caps,  # capabilities
            state,
            level,  # log_level
            self._connect_kit,  # connect
            None if lifespan is None else lifespan.value,  # lifespan
            flow.when_unasked,
            self._host.extensions,  # offered
            page,
            "none" if job is None else "ready",  # task_mode
        )
        session = ex.protocol_version == HANDSHAKE_VERSION
        play = self._play(flow, target, kwargs, ctx, state, digest, session, solicited, job)
        if solicited and (flow.single_use or self._host.settings.single_use):
            return self._host.single_use.run(str(token), ex.principal, state.expires, play)
        return play

    def _connect_kit(self) -> ConnectPart:
        return self._host.connect_kit

    def _page_flow(self, flow: Flow, caps: ClientCapabilities, principal: str, digest: bytes) -> PageFlow | None:
        """The call's flow on the server's own page (P145): for a flow declared `when_unasked="page"` whose
        client cannot show every kind of question, when a connect kit with a public URL serves the pages."""
        if flow.when_unasked not in PAGE_RUNGS or (caps.form and caps.url):
            return None
        try:
            kit = self._host.connect_kit
        except ConfigurationError:  # not served over HTTP: no page to give; the error rung answers
            return None
        apps = flow.when_unasked == "app" and renders_apps(self._host.extensions, caps.extensions)
        deliver = functools.partial(rung, caps, when_unasked=flow.when_unasked, yes_no=False, apps=apps)
        return kit.page_flow(principal, digest, deliver, apps)

    async def _play(
        self,
        flow: Flow,
        target: str,
        kwargs: dict[str, Any],
        ctx: Context,
        state: FlowState,
        digest: bytes,
        session: bool = False,
        solicited: bool = False,
        job: TaskJob | None = None,
    ) -> dict[str, Any]:
        """Run the handler once for this round, with the journal opened from the state (or, on the page
        rung, from what an identical earlier call left, P145). With a `job`, the handler may call
        `ctx.start_task()`: the call then becomes that task (protocol.md P167)."""
        page = ctx.page_flow if flow.when_unasked in PAGE_RUNGS else None  # only they have one (P145, P213)
        if page is not None:
            try:
                resumed = await page.resume()
            except Exception as exc:  # the ledger unreachable, or too many flows: said as the handler's would be
                return _failure(exc, flow, target, session)
            if isinstance(resumed, tuple):  # still unanswered: the same link (or ask app) again, nothing runs
                if not solicited:
                    return waiting_result(target, resumed, again=True)
            elif not solicited:
                state.journal = resumed
                ctx.resume(resumed)
        if flow.context_param is not None:
            kwargs[flow.context_param] = ctx
        failure: Exception | None = None
        value: Any = None
        escalated = False
        try:
            value = flow.handler(**kwargs)
            if type(value) is CoroutineType or inspect.isawaitable(value):  # an async def handler, usually
                value = await value
        except Suspended:
            pass
        except Escalate:
            escalated = True
        except Exception as exc:
            failure = exc
        # Whatever the handler did with a suspension, pending asks win: an ask never fails open.
        asks, error = ctx.outcome()
        if self.observer is not None:
            self.observer.played(asks, state)
        if error is not None:
            raise error
        if ctx.relay is not None:  # protocol.md P139: the model asks the user, then calls with confirm=true
            return tool_result(ask_then_call_again(target, ctx.relay))
        if ctx.parked is not None:  # protocol.md P145, P213: the user answers on the page or in the ask app
            return waiting_result(target, ctx.parked)
        if asks:
            state.round += 1
            pending: dict[str, str] = {}
            requests: dict[str, Any] = {}
            for key, ask in asks.items():
                pending[key] = ask.digest
                requests[key] = ask.request
            state.journal.pending = pending
            try:
                sealed = self._host.sealer.seal(state, ctx.principal, digest)
            except StateTooLarge as exc:
                return _too_large(exc, flow, target, state)
            return {"resultType": "input_required", "inputRequests": requests, "requestState": sealed}
        if escalated and job is not None:  # the answers gathered so far go into the task's journal
            return await self._host.tasks.create(job)
        if page is not None:
            await page.finish()
        if failure is not None:
            return _failure(failure, flow, target, session)
        try:
            result = flow.finish(value)
        except (TypeError, ValueError) as exc:  # orjson's JSONEncodeError is a TypeError, pydantic's a ValueError
            return _unsendable(exc, value, flow, target)
        if "cacheScope" in result and (state.round or state.journal.answers):
            # What the user answered shapes this result: no cache may share it with another caller (P18).
            result["cacheScope"] = "private"
        return result

    async def task_round(
        self, job: TaskJob, responses: dict[str, Any], status: TaskStatus, checkpoint: Checkpoint
    ) -> Settled:
        """Run one round of a task (protocol.md P165): the handler from the top over the task's journal, with
        the answers `tasks/update` gathered for the asks pending. Where it ends: its asks (the task waits in
        `input_required`), its result (a tool error included), or the protocol error it raised ("failed")."""
        flow = job.flow
        # requestState present (None): an answer counts only for an ask the last round left pending.
        params = {**job.params, "inputResponses": responses, "requestState": None}
        lifespan = self._host.lifespan
        ctx = Context(
            request=Message(flow.method, params, None, True),
            exchange=job.exchange,
            capabilities=job.caps,
            state=job.state,
            connect=self._connect_kit,
            lifespan=None if lifespan is None else lifespan.value,
            when_unasked=flow.when_unasked,
            offered=self._host.extensions,
            task_mode="task",
            task_status=status,
            task_checkpoint=checkpoint,
        )
        kwargs = dict(job.kwargs)
        if flow.context_param is not None:
            kwargs[flow.context_param] = ctx
        failure: Exception | None = None
        value: Any = None
        try:
            value = flow.handler(**kwargs)
            if inspect.isawaitable(value):
                value = await value
        except Suspended:
            pass
        except Exception as exc:
            failure = exc
        asks, error = ctx.outcome()
        try:
            if error is not None:
                raise error
            if ctx.relay is not None:
                return "completed", tool_result(ask_then_call_again(job.target, ctx.relay))
            if asks:
                job.state.journal.pending = {key: ask.digest for key, ask in asks.items()}
                return "input_required", {key: ask.request for key, ask in asks.items()}
            if failure is not None:
                session = job.exchange.protocol_version == HANDSHAKE_VERSION
                return "completed", _failure(failure, flow, job.target, session)
            try:
                return "completed", flow.finish(value)
            except (TypeError, ValueError) as exc:
                return "completed", _unsendable(exc, value, flow, job.target)
        except McpError as exc:  # a protocol error, not a tool's: the task failed (SEP-2663)
            return "failed", exc.to_dict()


def _logged(flow: Flow, target: str) -> str:
    """A flow's target as a log line names it: a resource URI without userinfo, query or fragment (P64)."""
    return resource_uri(target) if flow.method == "resources/read" else target


def _too_large(exc: StateTooLarge, flow: Flow, target: str, state: FlowState) -> dict[str, Any]:
    """The state to seal outgrew its cap (protocol.md P102). When the client's answers take the room the
    overflow needs, either one answer takes at least half of that room, and the client sent too much: a tool
    error (invalid params elsewhere) naming the answer, and a warning line; or the flow asked so many questions
    that their answers together outgrew the cap: the flow's design, said as such with what the author can do.
    Otherwise the author's `ctx.once` results did it: a server fault, logged without a traceback."""
    journal = state.journal
    biggest = journal.largest_answer()
    total = journal.answers_size()
    if biggest is None or total * 4 // 3 < exc.size - exc.cap:  # base64 adds a third
        log.error("%s %r: %s", flow.method, _logged(flow, target), exc)
        raise McpError(INTERNAL_ERROR, f"Cannot answer {flow.method} {target}: its state outgrew the server's cap")
    key, field, size = biggest
    if size * 2 < total:  # no answer stands out: their number did it
        return _too_many(exc, flow, target, len(journal.answers), total)
    named = f"answer {key!r}" + (f", field {field!r}," if field else "")
    said = (
        f"The {named} is too large ({size} bytes): the server carries at most {exc.cap} bytes of state between "
        "questions. Answer with less."
    )
    log.warning("%s %r: the client sent too much: %s", flow.method, _logged(flow, target), said)
    if flow.tool_errors:
        return error_result(said)
    raise invalid_params(f"Invalid params: {said}")


def _too_many(exc: StateTooLarge, flow: Flow, target: str, count: int, total: int) -> dict[str, Any]:
    """A flow whose answers, each small, outgrew the state cap together (protocol.md P102): an error line for
    the author, and a tool error (-32603 elsewhere) that says the call asked too many questions."""
    what = f"Tool {target}" if flow.tool_errors else f"{flow.method} {target}"
    said = (
        f"{what} cannot go on: it has asked {count} questions in this call, and with their answers its state would "
        f"be {exc.size} bytes, over the {exc.cap} bytes the server carries between questions. It asks too many "
        "questions in one call."
    )
    log.error(
        "%s %r: the flow's answers outgrew the requestState cap after %d answers (%d bytes; the state would be "
        "%d bytes, the cap is %d): ask fewer questions in one call (one form with several fields, ctx.elicit with "
        "a dataclass, rather than a question per item), split the work across calls, or raise "
        "Server(state_max_bytes=...)",
        flow.method,
        _logged(flow, target),
        count,
        total,
        exc.size,
        exc.cap,
    )
    if flow.tool_errors:
        return error_result(said)
    raise McpError(INTERNAL_ERROR, said)


def _unsendable(exc: Exception, value: Any, flow: Flow, target: str) -> dict[str, Any]:
    """A handler returned what cannot be made its result (a set, an object, ...): for a tool, a tool error
    naming the tool and the type; for a resource or prompt, -32603 naming it; the log says which and what to
    return instead, without a traceback (Baton's own frames would say nothing more)."""
    kind = type(value).__name__
    said = f"returned {'an' if kind[:1].lower() in 'aeiou' else 'a'} {kind} that Baton cannot send ({exc})"
    hint = RETURNABLE if flow.tool_errors else "see docs/server.md for what its handler may return"
    log.error("%s %r %s: %s", flow.method, _logged(flow, target), said, hint)
    if flow.tool_errors:
        return error_result(f"Tool {target} failed: it {said}")
    raise McpError(INTERNAL_ERROR, f"Cannot answer {flow.method} {target}: its handler {said}")


def _failure(exc: Exception, flow: Flow, target: str, session: bool) -> dict[str, Any]:
    """What a handler's exception answers (protocol.md P17): a `CapabilityMissing` in a tool, a tool error a
    model can relay (P96); its own McpError as is; a `FormError` (a form the wire cannot carry), what is
    wrong with the form (P97); a `ConfigurationError` names the setting to fix (a tool error, or -32603
    for a resource or prompt); a `ToolError` or a `ValueError` of the author's becomes, for a tool, a
    tool error the model reads, for a resource or prompt, invalid params (-32602) with its message;
    anything else (Baton's own `UsageError` included) is logged and answered as an internal error that
    hides the details."""
    if isinstance(exc, CapabilityMissing) and flow.tool_errors:
        # protocol.md P96: in a 2025-11-25 session, a tool result the model can relay; 2026-07-28 requires
        # -32021 (the conformance suite checks it), so there the error stays and its message says the same.
        required = exc.data["requiredCapabilities"] if isinstance(exc.data, dict) else {}
        log.info("tool %s needs %s, which the client did not declare", target, required)
        said = f"Tool {target} needs {cannot_ask(required)}."
        if session:
            return error_result(said)
        raise McpError(exc.code, f"{said} {exc.message}.", exc.data)
    if isinstance(exc, McpError):
        raise exc
    if isinstance(exc, FormError):
        # protocol.md P97: a form the wire cannot express, found when the tool asks it: say what is wrong.
        log.error("%s %r asked a form the wire cannot express: %s", flow.method, _logged(flow, target), exc)
        if flow.tool_errors:
            return error_result(f"Tool {target} cannot ask its question: {exc}")
        raise McpError(INTERNAL_ERROR, f"Cannot answer {flow.method} {target}: {exc}")
    if isinstance(exc, ConfigurationError):
        log.error("%s %r cannot run: %s", flow.method, _logged(flow, target), exc)
        if flow.tool_errors:
            return error_result(f"Tool {target} cannot run: {exc}")
        raise McpError(INTERNAL_ERROR, f"Cannot answer {flow.method} {target}: {exc}")
    if isinstance(exc, ToolError) or (isinstance(exc, ValueError) and not isinstance(exc, UsageError)):
        if flow.tool_errors:
            return error_result(str(exc))
        data = {"uri": target} if flow.method == "resources/read" else None
        raise invalid_params(str(exc) or f"Invalid params for {flow.method} {target}", data)
    log.error("%s %r raised", flow.method, _logged(flow, target), exc_info=exc)
    if flow.tool_errors:
        return error_result(f"Tool {target} failed with an internal error ({type(exc).__name__})")
    raise McpError(INTERNAL_ERROR, f"Internal error while answering {flow.method} {target}")


def request_binding(method: str, target: str, arguments: dict[str, Any]) -> bytes:
    """What a requestState is bound to: the method, its target and the canonical arguments, length-prefixed.

    These bytes go into AES-GCM's associated data as they are (GHASH is cheaper than a hash first).
    """
    return _binding_prefix(method, target) + orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)


@functools.lru_cache(maxsize=1024)  # by (method, target): the same few come again and again
def _binding_prefix(method: str, target: str) -> bytes:
    m, t = method.encode(), target.encode()
    return len(m).to_bytes(4, "big") + m + len(t).to_bytes(4, "big") + t
