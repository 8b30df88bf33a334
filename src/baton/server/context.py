"""The replay engine's per-request side: `Context`, the asks a handler makes, and suspension.

A handler runs from the top on every round. Each ask either returns the answer recorded for it
(in the journal carried by `requestState`, or in this round's `inputResponses`) or suspends the
handler with `Suspended`, a BaseException so that `except Exception` cannot swallow it. Whatever
the handler does with it, the engine reads the pending asks from the Context afterwards: an
unanswered ask never fails open. Capability gating of every ask happens in `Context._ask`, and
nowhere else: it asks the ladder (`baton.server.ladder`) which rung delivers the ask (what each kind
of ask needs is the table in `baton.protocol.capabilities`).
"""

from __future__ import annotations

import binascii
import hashlib
import inspect
import logging
import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar, cast, overload

import orjson

from ..forms import Accepted, Cancelled, Declined, FormError, FormSpec, compile_form
from ..forms.answer_checks import (
    action_reader,
    form_request,
    roots_checker,
    same,
    sampling_checker,
    url_checker,
)
from ..forms.ask_guards import check_elicit_url
from ..forms.fields import BooleanField, InvalidAnswer
from ..protocol.capabilities import ASK_KINDS, ClientCapabilities, capability_for, granted, required_capability
from ..protocol.constants import LOG_LEVELS
from ..protocol.errors import INVALID_PARAMS, CapabilityMissing, McpError, UsageError
from ..protocol.extensions import NONE, Extensions, negotiated
from ..protocol.messages import Message
from ..state.journal import Journal
from ..state.seal import FlowState
from ..telemetry.logs import HANDLER_LOGGER
from .apps import shows_apps
from .exchange import Exchange
from .ladder import CONFIRM_ARGUMENT, rung
from .parts import ConnectPart, Credential, Link, PageFlow

T = TypeVar("T")
handler_log = logging.getLogger(HANDLER_LOGGER)  # ctx.log's lines: shown at info by `baton serve` (P129)

CONFIRM_FORM = FormSpec([BooleanField("confirm", title="Confirm")], build=lambda v: v["confirm"], name="confirm")
_CONFIRM = compile_form(CONFIRM_FORM)  # checked by the form guard once, here


class Suspended(BaseException):
    """Raised inside a handler to stop this round: there are asks to send, or the request is invalid."""


class Escalate(BaseException):
    """Raised by `ctx.start_task()` in a round that may become a task: the engine makes the call a task from
    here, with the answers gathered so far (protocol.md P167)."""


TaskStatus = Callable[[str], None]
"""Sets the status message of the task a round runs in (`ctx.progress` inside a task)."""

Checkpoint = Callable[[], Awaitable[None]]
"""Writes the journal of the task a round runs in (after each `ctx.once` step, protocol.md P174)."""


class BatonDeprecationWarning(UserWarning):
    """A deprecated MCP feature (sampling, roots) was used; shown once per call site."""


@dataclass(slots=True)
class Ask:
    """One question for the client: its wire key, the input request, and how to read the answer."""

    key: str
    request: dict[str, Any]
    digest: str
    read: Callable[[dict[str, Any]], Any]  # validated wire answer -> what the author receives
    check: Callable[[Any], dict[str, Any]]  # raw wire answer -> validated wire answer (raises InvalidAnswer)


class _Pending:
    """Placeholder returned for an unanswered ask inside `ctx.gather`."""


_PENDING = _Pending()
_NO_RESPONSES: dict[str, Any] = {}  # never written: answers are recorded in the journal
_KEYS = tuple(f"q{n}" for n in range(64))  # the default ask keys, made once
_TO_URL = bytes.maketrans(b"+/", b"-_")
_BLAKE2B_8 = hashlib.blake2b(digest_size=8)  # never updated: each pin starts from a copy
_FOREVER = float("inf")
_UNSET: Any = object()  # an argument not given (ctx.elicit names FastMCP's spellings to refuse them)


def _digest(blob: bytes) -> str:
    """A short digest of a question's canonical bytes, to pin its answer to it."""
    # BLAKE2b: Python's own, so no OpenSSL digest lookup per call; copied from a made one, so no keyword parsing.
    pin = _BLAKE2B_8.copy()
    pin.update(blob)
    return binascii.b2a_base64(pin.digest(), newline=False)[:11].translate(_TO_URL).decode()


class Context:
    """What a handler sees of its request, and how it asks the user (or client) for input."""

    __slots__ = (
        "_asks",
        "_batching",
        "_connect",
        "_emit",
        "_error",
        "_journal",
        "_last_progress",
        "_lifespan",
        "_lines",
        "_log_level",
        "_offered",
        "_ordinal",
        "_page",
        "_request_params",
        "_responses",
        "_solicited",
        "_task_checkpoint",
        "_task_mode",
        "_task_status",
        "_timeouts",
        "_url_done",
        "_when_unasked",
        "client_capabilities",
        "flow_id",
        "meta",
        "method",
        "parked",
        "principal",
        "protocol_version",
        "relay",
        "request_id",
        "scopes",
    )

    def __init__(  # positional in the replay engine's hot path: a call with keywords builds a dict
        self,
        request: Message,
        exchange: Exchange,
        capabilities: ClientCapabilities,
        state: FlowState,
        log_level: str | None = None,
        connect: Callable[[], ConnectPart] | None = None,
        lifespan: Callable[[], Any] | None = None,
        when_unasked: str = "error",
        offered: Extensions = NONE,
        page: PageFlow | None = None,
        task_mode: str = "none",
        task_status: TaskStatus | None = None,
        task_checkpoint: Checkpoint | None = None,
    ) -> None:
        """Made by the replay engine for each round, from the request, its exchange with the transport and
        the flow state opened from its requestState (a fresh one on the first round); `when_unasked` is the
        flow's declared rung for a question the client cannot show (`baton.server.ladder`), `page` its flow
        on the server's own page when that rung can serve this call (P145)."""
        params = request.params
        self.method = request.method
        self.request_id = request.id
        self.principal = exchange.principal
        self.scopes = exchange.scopes  # the caller's OAuth scopes (None when its credentials carry none)
        self.client_capabilities = capabilities
        self.meta = params["_meta"]
        self._request_params = params
        self._journal = state.journal
        self._responses = params.get("inputResponses", _NO_RESPONSES)
        # With a requestState, an answer counts only where this flow asked (the journal's pending asks).
        self._solicited = "requestState" in params
        self._emit = exchange.emit
        self._log_level = log_level
        self._asks: dict[str, Ask] = {}
        self._error: McpError | None = None
        self._ordinal = 0
        self._lines = 0  # ctx.log calls this round; the journal counts those earlier rounds wrote (P129)
        self._batching = False
        self._last_progress: float | None = None
        self.flow_id = state.flow_id  # the flow's random id, the same in every round (from requestState)
        self._connect = connect
        self._lifespan = lifespan
        self._offered = offered  # the server's own extensions (P141)
        # "2026-07-28", or "2025-11-25" in a session, where asks are answered while the request waits.
        self.protocol_version = exchange.protocol_version
        self._url_done = exchange.url_done
        self._timeouts = exchange.ask_timeouts  # a 2025-11-25 round's per-ask waits, by key (protocol.md P95)
        self._when_unasked = when_unasked
        # The question the model must put to the user, when the argument rung stopped the handler (P139).
        self.relay: str | None = None
        self._page = page
        # The link the user answers on, when the page rung stopped the handler (P145).
        self.parked: Link | None = None
        # "none": this call runs here; "ready": it may become a task; "task": it runs as one (P167).
        self._task_mode = task_mode
        self._task_status = task_status
        self._task_checkpoint = task_checkpoint

    # -- asking -------------------------------------------------------------------------------------

    @overload
    async def elicit(
        self,
        form: type[T],
        message: str,
        *,
        key: str | None = None,
        allow_secrets: bool = False,
        timeout_s: float | None = None,
    ) -> Accepted[T] | Declined | Cancelled: ...
    @overload
    async def elicit(
        self,
        form: list[str] | tuple[str, ...],
        message: str,
        *,
        key: str | None = None,
        allow_secrets: bool = False,
        timeout_s: float | None = None,
    ) -> Accepted[str] | Declined | Cancelled: ...
    @overload
    async def elicit(
        self,
        form: Any,
        message: str,
        *,
        key: str | None = None,
        allow_secrets: bool = False,
        timeout_s: float | None = None,
    ) -> Accepted[Any] | Declined | Cancelled: ...

    async def elicit(
        self,
        form: Any = _UNSET,
        message: Any = _UNSET,
        *,
        key: str | None = None,
        allow_secrets: bool = False,
        timeout_s: float | None = None,
        response_type: Any = _UNSET,
        schema: Any = _UNSET,
    ) -> Any:
        """Ask the user to fill in a form (form mode). Returns `Accepted(data) | Declined() | Cancelled()`.

        `form` is a form class (dataclass, TypedDict, pydantic model), or for a one-answer question a type
        (`str`, `int`, `float`, `bool`, a `Literal` or `Enum` of strings) or a list of choices
        (`["eu", "us"]`): then `Accepted.data` is the answer itself (protocol.md P131).

        A field that looks like a secret is refused (`FormError`): ask for secrets with `ctx.secret`; pass
        `allow_secrets=True` for a field that only looks like one. `timeout_s` bounds the wait for the
        answer in a 2025-11-25 session (default `Server(ask_timeout_s)`); no answer in time reads as
        `Cancelled`. A 2026-07-28 request never waits, so there it changes nothing (protocol.md P95).
        """
        if isinstance(form, str) or response_type is not _UNSET or schema is not _UNSET or message is _UNSET:
            raise FormError(fastmcp_order(form, message, response_type if schema is _UNSET else schema))
        spec = compile_form(form, allow_secrets=allow_secrets)
        params, check, read, canonical = form_request(spec, message)
        return await self._ask(key, "elicitation/create", params, check, read, canonical, timeout_s)

    async def confirm(self, message: str, *, key: str | None = None, timeout_s: float | None = None) -> bool:
        """Ask a yes/no question; True only if the user accepted and said yes (`timeout_s` as for `elicit`)."""
        params, check, read, canonical = form_request(_CONFIRM, message)
        answer = await self._ask(key, "elicitation/create", params, check, read, canonical, timeout_s, yes_no=True)
        if answer is _PENDING:  # inside ctx.gather: unanswered yet, not a "no" (gather suspends the handler)
            return cast(bool, answer)
        return isinstance(answer, Accepted) and bool(answer.data)

    async def elicit_url(
        self,
        message: str,
        url: str,
        *,
        key: str | None = None,
        development: bool = False,
        timeout_s: float | None = None,
    ) -> Any:
        """Ask the user to open a URL (URL mode). `Accepted` means only that they agreed to open it.

        The URL must be https (http to a loopback host with `development=True`) and carry no personal data
        or credentials: see `baton.forms.ask_guards.check_elicit_url`. `timeout_s` as for `elicit`.
        """
        check_elicit_url(url, development=development)
        params = {"mode": "url", "message": message, "url": url}
        return await self._ask(key, "elicitation/create", params, url_checker, action_reader(None), None, timeout_s)

    async def secret(
        self, name: str, message: str, *, key: str | None = None, timeout_s: float | None = None
    ) -> Credential:
        """A handle to the caller's credential `name`, asked for in URL mode on the server's own connect page.

        The secret never passes through the client: read it on the server with `await handle.reveal()`.
        See `baton.connect.ConnectKit`. `timeout_s` as for `elicit`.
        """
        if self._connect is None:
            raise UsageError("ctx.secret needs a connect kit: Server(connect=ConnectKit(...)), or serve the server")
        return await self._connect().secret(self, name, message, key=key, timeout_s=timeout_s)

    async def connect(
        self, provider: Any, message: str | None = None, *, key: str | None = None, timeout_s: float | None = None
    ) -> Credential:
        """A handle to the caller's OAuth token for `provider` (a third party), obtained in URL mode on the
        server's own connect page (authorization code + PKCE). `reveal()` gives the token response as JSON.
        `provider` is a provider's name or a `baton.connect.OAuthProvider`. `timeout_s` as for `elicit`.
        """
        if self._connect is None:
            raise UsageError("ctx.connect needs a connect kit: Server(connect=ConnectKit(...)), or serve the server")
        return await self._connect().connect(self, provider, message, key=key, timeout_s=timeout_s)

    async def url_completed(self, key: str) -> None:
        """Tell the client that the URL asked under `key` has been completed (2025-11-25 sessions get
        `notifications/elicitation/complete`; 2026-07-28 has no such message, and this does nothing)."""
        if self._url_done is not None:
            await self._url_done(key)

    def answered_now(self, key: str) -> bool:
        """Whether this round's `inputResponses` carries an answer at `key` (not only an earlier round)."""
        return key in self._responses

    async def sample(
        self,
        messages: list[dict[str, Any]] | str,
        *,
        max_tokens: int,
        key: str | None = None,
        timeout_s: float | None = None,
        **params: Any,
    ) -> dict[str, Any]:
        """Deprecated (SEP-2577): ask the client's model for a completion. Returns a CreateMessageResult."""
        _deprecated("ctx.sample() uses MCP sampling, deprecated in 2026-07-28; call your model provider directly")
        if isinstance(messages, str):
            messages = [{"role": "user", "content": {"type": "text", "text": messages}}]
        body = {"messages": messages, "maxTokens": max_tokens}
        for name, value in params.items():
            body[_camel(name)] = value
        answer = await self._ask(key, "sampling/createMessage", body, sampling_checker, same, None, timeout_s)
        return cast(dict[str, Any], answer)

    async def list_roots(self, *, key: str | None = None, timeout_s: float | None = None) -> list[dict[str, Any]]:
        """Deprecated (SEP-2577): ask the client for its roots; prefer a path argument checked on the server."""
        _deprecated("ctx.list_roots() uses MCP roots, deprecated in 2026-07-28; take paths as tool arguments")
        answer = await self._ask(key, "roots/list", None, roots_checker, same, None, timeout_s)
        return cast(list[dict[str, Any]], answer["roots"])

    async def gather(self, *asks: Awaitable[Any]) -> tuple[Any, ...]:
        """Ask several questions in one round; returns their answers in order once all are answered."""
        self._batching = True
        try:
            results = [await a for a in asks]
        finally:
            self._batching = False
        if any(r is _PENDING for r in results):
            raise Suspended
        return tuple(results)

    async def once(self, key: str, fn: Callable[[], Awaitable[T] | T]) -> T:
        """Run a step once per flow; later rounds get its (JSON) result from the journal."""
        once = self._journal.once
        if key in once:
            return cast(T, once[key])
        result = fn()
        if inspect.isawaitable(result):
            result = await result
        try:
            stored = orjson.loads(orjson.dumps(result))
        except TypeError as exc:
            raise TypeError(f"ctx.once({key!r}): the result must be JSON-serializable ({exc})") from None
        once[key] = stored
        if self._task_checkpoint is not None:  # in a task: written now, so a takeover does not run it again
            await self._task_checkpoint()
        return cast(T, stored)

    def can_ask(self, kind: str) -> bool:
        """Whether this request lets the server ask: 'form', 'url', 'sampling' or 'roots'."""
        if kind not in ASK_KINDS:
            raise UsageError(f"ctx.can_ask: unknown kind {kind!r}; one of {', '.join(ASK_KINDS)}")
        return granted(self.client_capabilities, kind)

    def extension(self, name: str) -> dict[str, Any] | None:
        """The client's settings for extension `name` (`{}` when it declared none) if both this server and
        the client declared it, else None: then the extension is not used and the core behaviour applies.
        The client declares it in this request's `_meta` (2026-07-28) or in its session's `initialize`
        (2025-11-25) (protocol.md P141)."""
        settings = negotiated(self._offered, self.client_capabilities.extensions, name)
        return None if settings is None else dict(settings)

    def require(self, kind: str) -> None:
        """Raise `CapabilityMissing` (-32021) now unless this request lets the server ask this kind."""
        if not self.can_ask(kind):
            raise CapabilityMissing(capability_for(kind))

    def outcome(self) -> tuple[dict[str, Ask], McpError | None]:
        """After the handler ran this round: the asks still unanswered (in order), and the request's own
        error if an answer was malformed. The engine reads it whatever the handler returned or raised,
        so an unanswered ask never fails open."""
        return self._asks, self._error

    def resume(self, journal: Journal) -> None:
        """Go on from what an identical earlier call left on the server's page (the engine calls it, P145)."""
        self._journal = journal

    @property
    def connect_part(self) -> ConnectPart | None:
        """The server's connect kit (its pages, tickets and vault), or None where none is mounted."""
        return None if self._connect is None else self._connect()

    @property
    def page_flow(self) -> PageFlow | None:
        """This call's flow on the server's own page, when the page rung can serve it."""
        return self._page

    def _unasked(self, delivery: str, request: dict[str, Any]) -> Any:
        """An ask the client cannot show, on the rung the ladder chose: the tool's `confirm` argument
        (P139: true is a yes, false a no; absent, the handler stops and the model is asked to ask), or
        `CapabilityMissing` (-32021; a tool error in a 2025-11-25 session)."""
        if delivery == "argument":
            arguments = self._request_params.get("arguments")
            given = arguments.get(CONFIRM_ARGUMENT) if isinstance(arguments, dict) else None
            if given is not None:
                return Accepted(True) if given is True else Declined()
            self.relay = str(request["params"].get("message", ""))
            raise Suspended
        raise CapabilityMissing(required_capability(request))

    async def _ask(
        self,
        key: str | None,
        method: str,
        params: dict[str, Any] | None,
        check: Callable[[Any], dict[str, Any]],
        read: Callable[[dict[str, Any]], Any],
        canonical: bytes | None = None,
        timeout_s: float | None = None,
        yes_no: bool = False,
    ) -> Any:
        self._ordinal += 1
        if timeout_s is not None and not 0 < timeout_s < _FOREVER:
            raise UsageError(f"timeout_s must be a positive number of seconds, not {timeout_s!r}")
        if key is None:
            key = _KEYS[self._ordinal] if self._ordinal < len(_KEYS) else f"q{self._ordinal}"
        request: dict[str, Any] = {"method": method}
        if params is not None:
            request["params"] = params
        # P213: whether this client renders apps decides the app rung, for a tool declared "app" (asked only then)
        apps = self._when_unasked == "app" and shows_apps(self)
        delivery = rung(self.client_capabilities, request, self._when_unasked, yes_no, apps)
        if delivery in ("page", "app") and (self._page is None or (delivery == "page" and not self._page.pages)):
            delivery = "error"  # no page serves this call (no public URL, P216; or stdio without apps)
        if delivery not in ("native", "page", "app"):
            return self._unasked(delivery, request)
        if key in self._asks:
            raise UsageError(f"two asks in one round use the key {key!r}; give each a distinct key=")
        digest = _digest(canonical or orjson.dumps(request, option=orjson.OPT_SORT_KEYS))
        recorded = self._journal.answers.get(key)
        if recorded is not None and recorded[0] == digest:
            return read(recorded[1])
        if delivery != "native":  # protocol.md P145, P213: the flow waits on the server's page or the ask app
            assert self._page is not None
            self.parked = await self._page.park(key, digest, request, self._journal, app=delivery == "app")
            raise Suspended
        if key in self._responses and (not self._solicited or self._journal.pending.get(key) == digest):
            raw = self._responses[key]
            if not isinstance(raw, dict):
                self._error = McpError(
                    INVALID_PARAMS,
                    f"Invalid params: inputResponses[{key!r}] must be an object, not {_kind(raw)}",
                )
                raise Suspended
            try:
                answer = check(raw)
            except InvalidAnswer as exc:
                if params is not None and "message" in params:
                    params = {**params, "message": f"{exc}. Please answer again.\n\n{params['message']}"}
                    request = {"method": method, "params": params}
            else:
                self._journal.answers[key] = (digest, answer)
                return read(answer)
        self._asks[key] = Ask(key, request, digest, read, check)
        if timeout_s is not None and self._timeouts is not None:
            self._timeouts[key] = timeout_s
        if self._batching:
            return _PENDING
        raise Suspended

    # -- tasks (protocol.md P167) ---------------------------------------------------------------------

    @property
    def in_task(self) -> bool:
        """Whether this call runs as a task of the Tasks extension (`io.modelcontextprotocol/tasks`)."""
        return self._task_mode == "task"

    async def start_task(self) -> None:
        """From here on, run this call as a task, when its tool supports tasks (`@server.tool(task=...)`
        with `task_start="handler"`) and the client declared the extension: the client receives the task at
        once, and this handler goes on in the background. The questions asked before it were asked in the
        request itself (input_required rounds); those asked after it put the task in `input_required`.
        Where the call cannot become a task, or already is one, it returns at once and the handler goes on."""
        if self._task_mode == "ready":
            raise Escalate

    # -- notifications ------------------------------------------------------------------------------

    async def progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """Report progress, if the request asked for it (a `progressToken`); values must increase. Inside a
        task, it sets the task's `statusMessage` (`message`, else "progress/total"), which `tasks/get` shows."""
        if self._task_status is not None:  # protocol.md P170: a task's progress is its status message
            self._task_status(message or (f"{progress:g}/{total:g}" if total is not None else f"{progress:g}"))
            return
        token = self.meta.get("progressToken")
        if token is None or self._emit is None:
            return
        if self._last_progress is not None and progress <= self._last_progress:
            raise UsageError(f"progress must increase: {progress} after {self._last_progress}")
        self._last_progress = progress
        params: dict[str, Any] = {"progressToken": token, "progress": progress}
        if total is not None:
            params["total"] = total
        if message is not None:
            params["message"] = message
        await self._emit("notifications/progress", params)

    async def log(self, level: str, data: Any, *, logger: str | None = None) -> None:
        """Log to the server log (the `baton.handler` logger); also to the client if this request carried the
        deprecated `logLevel`. A line an earlier round of this flow wrote is not written again (P129)."""
        if level not in LOG_LEVELS:
            raise UsageError(f"log level must be one of {', '.join(LOG_LEVELS)}")
        self._lines += 1
        journal = self._journal
        if self._lines <= journal.logged:  # an earlier round of this flow wrote it (protocol.md P129)
            return
        journal.logged = self._lines
        handler_log.log(_PY_LEVELS[level], "%s", data)
        wanted = self._log_level
        if wanted is None or self._emit is None or LOG_LEVELS.index(level) < LOG_LEVELS.index(wanted):
            return
        params: dict[str, Any] = {"level": level, "data": data}
        if logger is not None:
            params["logger"] = logger
        await self._emit("notifications/message", params)

    # FastMCP's spellings, as thin aliases (docs/coming-from-fastmcp.md).

    async def debug(self, data: Any, *, logger: str | None = None) -> None:
        """`ctx.log("debug", data)`."""
        await self.log("debug", data, logger=logger)

    async def info(self, data: Any, *, logger: str | None = None) -> None:
        """`ctx.log("info", data)`."""
        await self.log("info", data, logger=logger)

    async def warning(self, data: Any, *, logger: str | None = None) -> None:
        """`ctx.log("warning", data)`."""
        await self.log("warning", data, logger=logger)

    async def error(self, data: Any, *, logger: str | None = None) -> None:
        """`ctx.log("error", data)`."""
        await self.log("error", data, logger=logger)

    async def report_progress(self, progress: float, total: float | None = None, message: str | None = None) -> None:
        """`ctx.progress(progress, total, message)`."""
        await self.progress(progress, total, message)

    # -- the process -------------------------------------------------------------------------------------

    @property
    def lifespan(self) -> Any:
        """What the server's `Server(lifespan=...)` context manager yielded (protocol.md P132): a database
        pool, a client. `UsageError` when the server has no lifespan, or it is not running."""
        if self._lifespan is None:
            raise UsageError("ctx.lifespan: this server has no Server(lifespan=...)")
        return self._lifespan()


_PY_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "notice": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
    "critical": logging.CRITICAL,
    "alert": logging.CRITICAL,
    "emergency": logging.CRITICAL,
}


def fastmcp_order(form: Any, message: Any, response_type: Any) -> str:
    """What a FastMCP-shaped `ctx.elicit` call should say in Baton's order (protocol.md P130)."""
    given = [v for v in (response_type, message, form) if v is not _UNSET and not isinstance(v, str)]
    shown = (getattr(given[0], "__name__", None) or repr(given[0])) if given else "Form"
    text = next((v for v in (form, message) if isinstance(v, str)), "...")
    return (
        f"ctx.elicit takes the form first, then the message: write ctx.elicit({shown}, {text!r}) "
        "(FastMCP's ctx.elicit(message, response_type=...) order is not Baton's)"
    )


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _deprecated(message: str) -> None:
    # stacklevel 3: the author's line that called ctx.sample()/ctx.list_roots(); shown once per line.
    warnings.warn(message, BatonDeprecationWarning, stacklevel=3)
