"""The live side of `baton dev`: one `Client` on the target, its calls, their questions, and the event log.

Everything the page shows is an event (a JSON object with a `seq`): the connection (protocol version,
server info, instructions, the lists with their argument forms), each call's rounds as they happen,
the questions a round asks and the answers sent, progress and log notifications, the result. A page
that connects, or connects again, is sent every event so far, then each new one: it rebuilds its view
from them, so a reload of the page loses nothing.

Every call runs through Baton's `Client`, which answers the server's questions through the handlers
here: each question becomes a `question` event and waits for the page's answer (`answer`); a form
answer is read from the page's form data by `baton.render.html.form_values` and checked by the
client's own `Question.answer` before it is sent, so an answer the page let through but the schema
refuses is sent back to the page with the reason, and the question stays open. The client's
`on_message` hook records every JSON-RPC message of the call for the raw view (masked on the way out,
`baton.devui.masking`), and tells the rounds apart: a 2026-07-28 leg answered `input_required` is a
round (its asks, the size of `requestState`, never decoded, and its time); on 2025-11-25 each
`elicitation/create` on the call's stream is shown the same way. A call the server makes a task (the client
declares the Tasks extension) is followed to its end, each status of the task on the timeline.

The client declares what the page can answer (protocol.md P128): elicitation in form and URL mode
(fewer with `--elicitation`, to see what a host without them gets: protocol.md P148),
and the deprecated sampling, answered by the person typing the model's reply (marked deprecated on the
page). Not roots: the page has none to give, so a server that asks for them gets the client's plain
"not declared" error, which the page shows, rather than an empty list that pretends.

A server file or command runs as a child whose stderr is read here (protocol.md P127): each line still
goes to the terminal, and the page gets it too, as the output of the latest call (a handler's
traceback), or, while connecting, as the reason the connection failed (the file's load error).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import itertools
import logging
import sys
import time
import warnings
from collections import deque
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from ..client import Accepted, Cancelled, Client, ClientError, Declined, InvalidReply, Question, Skill
from ..client.core import MODES
from ..client.errors import listed
from ..client.probe import AUTO, STDIO_PROBE_S, ProtocolChoice
from ..client.stdio_transport import StdioTransport
from ..client.tap import Direction
from ..forms.answers import Answer
from ..forms.url_safety import check_url, format_for_display
from ..protocol import skills as skills_wire
from ..protocol.constants import HANDSHAKE_VERSION, META_LOG_LEVEL, META_SERVER_INFO
from ..protocol.errors import McpError
from ..protocol.tasks import TASKS
from ..render.html import form_html, form_values
from .apps import HOST_EXTENSIONS, AppPageError, AppPages
from .arguments import (
    ArgumentForm,
    PageArgumentError,
    expand_template,
    read_arguments,
    string_form,
    template_variables,
    tool_form,
)
from .dev_target import DevTarget
from .masking import masked, shown_answer

log = logging.getLogger("baton.dev")
CallKind = Literal["tool", "resource", "prompt"]
METHODS: dict[CallKind, str] = {"tool": "tools/call", "resource": "resources/read", "prompt": "prompts/get"}
MAX_EVENTS = 20_000
"""Events kept for a page that connects later; the oldest go first (a long session keeps its recent calls)."""
MAX_MESSAGES = 500
"""Raw messages kept per call."""
DEFAULT_DEADLINE_S = 3600.0
"""How long one call may take in `baton dev`: long, as a person answers its questions at their own pace."""
BATON_PROBE_S = 60.0
"""How long a `baton serve` child may take to answer the 2026-07-28 probe (a loaded machine imports slowly):
it speaks 2026-07-28, so waiting is right, where another command's silence may mean 2025-11-25 only."""
MAX_OUTPUT_LINES = 200
"""Lines of the server's stderr kept while connecting, to show if the connection fails (the last ones)."""
MODERN_LISTS = {"tools": "toolsListChanged", "prompts": "promptsListChanged", "resources": "resourcesListChanged"}

_CALL: contextvars.ContextVar[PageCall | None] = contextvars.ContextVar("baton_dev_call", default=None)


class DevError(Exception):
    """A request from the page that cannot be done (unknown call, bad arguments); the message says why."""


@dataclass(slots=True)
class Waiting:
    """A question of a call, shown on the page, waiting for the person."""

    kind: Literal["form", "url", "sampling"]
    question: Question | None
    future: asyncio.Future[Any]


@dataclass(slots=True)
class PageCall:
    """One call, read or get from the page, with its raw messages and what it is waiting for."""

    id: str
    kind: CallKind
    method: str
    name: str
    started: float
    messages: list[tuple[float, Direction, dict[str, Any]]] = field(default_factory=list)
    waiting: dict[str, Waiting] = field(default_factory=dict)
    leg_ids: dict[Any, float] = field(default_factory=dict)  # request id of a leg -> when it was sent
    rounds: int = 0
    task: asyncio.Task[None] | None = None
    shown_task: tuple[Any, Any] | None = None  # the last (status, statusMessage) of its task the page saw


class DevSession:
    """The target's client, the calls made from the page, and the events the page is built from."""

    def __init__(
        self,
        target: DevTarget,
        *,
        auth: Any = None,
        deadline_s: float = DEFAULT_DEADLINE_S,
        protocol: ProtocolChoice = AUTO,
        elicitation: tuple[str, ...] = MODES,
    ) -> None:
        self.target = target
        self.auth = auth
        self.protocol = protocol  # `baton dev --protocol`: the era, or auto (probe)
        # `baton dev --elicitation`: the modes declared, to act as a host that shows fewer questions (P148)
        self.elicitation = elicitation
        self.deadline_s = deadline_s
        self.client: Client | None = None
        self.calls: dict[str, PageCall] = {}
        self.forms: dict[tuple[CallKind, str], ArgumentForm] = {}
        self.templates: dict[str, str] = {}  # template name -> uriTemplate
        self.skills: dict[str, Skill] = {}  # the listed skills by SKILL.md URI
        self._events: deque[dict[str, Any]] = deque(maxlen=MAX_EVENTS)
        self._seq = itertools.count(1)
        self._listeners: set[asyncio.Queue[dict[str, Any]]] = set()
        self._ids = itertools.count(1)
        self._refreshing: asyncio.Task[None] | None = None
        self._listen: asyncio.Task[None] | None = None
        self.completions = False
        self._output: deque[str] = deque(maxlen=MAX_OUTPUT_LINES)  # stderr since the last connect began
        self._latest: PageCall | None = None  # the call the server's stderr is shown with
        self.app_pages = AppPages()

    # -- events -----------------------------------------------------------------------------------------

    def publish(self, event: dict[str, Any]) -> None:
        event = {"seq": next(self._seq), **event}
        self._events.append(event)
        for queue in self._listeners:
            queue.put_nowait(event)

    async def events(self) -> AsyncIterator[dict[str, Any]]:
        """Every event so far, then each new one as it comes (until the caller stops iterating)."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        backlog = list(self._events)
        self._listeners.add(queue)
        try:
            for event in backlog:
                yield event
            while True:
                yield await queue.get()
        finally:
            self._listeners.discard(queue)

    # -- the connection ---------------------------------------------------------------------------------

    async def connect(self) -> None:
        """Connect to the target (a fresh client) and publish what it offers; a failure is an event too."""
        self.publish({"type": "status", "state": "connecting", "text": f"connecting to {self.target.shown}"})
        self._output.clear()
        self._latest = None
        target: str | StdioTransport = self.target.url or StdioTransport(
            self.target.command or (), on_stderr=self._stderr
        )
        with warnings.catch_warnings():  # sampling is declared on purpose: the page answers it (P128)
            warnings.simplefilter("ignore", DeprecationWarning)
            client = Client(
                target,
                on_form=self._on_question if "form" in self.elicitation else None,
                on_url=self._on_question if "url" in self.elicitation else None,
                on_sampling=self._on_sampling,
                name="baton-dev",
                protocol=self.protocol,
                deadline_s=self.deadline_s,
                cache=False,
                auth=self.auth,
                stdio_probe_s=BATON_PROBE_S if self.target.baton else STDIO_PROBE_S,
                on_message=self._tap,
                # the page lists and loads skills (docs/skills.md), renders tools' app pages (MCP Apps, apps.py),
                # and follows a task the server makes, on the timeline (P173)
                extensions={skills_wire.EXTENSION: {}, **HOST_EXTENSIONS, TASKS: {}},
                on_task=self._on_task,
            )
        self.client = client
        try:
            era = await client.settle_era()
            info = await self._server_info(client, era)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.client = None
            with contextlib.suppress(Exception):
                await client.close()  # a child that did start is stopped (and its stderr read to the end)
            said = "".join(self._output).rstrip()
            self.publish({"type": "status", "state": "failed", "text": self._cannot_connect(exc), "output": said})
            return
        self.completions = "completions" in (info.get("capabilities") or {})
        self.publish({"type": "connected", **info})
        await self.refresh()
        if era != HANDSHAKE_VERSION:
            self._listen = asyncio.ensure_future(self._listen_for_changes(info.get("capabilities") or {}))

    def _cannot_connect(self, exc: BaseException) -> str:
        text = f"cannot connect to {self.target.shown}: {_reason(exc)}"
        if self.target.command is not None and not self._output:
            text += "; the server's own messages are in the terminal where baton dev runs"
        if self.target.watch is not None:
            text += "; save a change to the file to try again"
        return text

    async def _server_info(self, client: Client, era: str) -> dict[str, Any]:
        if era == HANDSHAKE_VERSION:
            result = client.initialize_result or {}
        else:
            result = await client.discover()
        server = _object(result.get("serverInfo")) or _object(_object(result.get("_meta")).get(META_SERVER_INFO))
        return {
            "version": era,
            "server": server,
            "instructions": result.get("instructions") if isinstance(result.get("instructions"), str) else "",
            "capabilities": result.get("capabilities") if isinstance(result.get("capabilities"), dict) else {},
            "target": self.target.shown,
        }

    async def refresh(self) -> None:
        """Read every list again and publish them with their argument forms (a server without one offers none)."""
        client = self.client
        if client is None:
            return
        lists: dict[str, Any] = {}
        forms: dict[tuple[CallKind, str], ArgumentForm] = {}
        try:
            tools = await listed(client.list_tools)
            prompts = await listed(client.list_prompts)
            resources = await listed(client.list_resources)
            templates = await listed(client.list_resource_templates)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            self.publish(
                {"type": "status", "state": "failed", "text": f"cannot list the server's offer: {_reason(exc)}"}
            )
            return
        lists["tools"] = []
        for n, tool in enumerate(tools or []):
            form = tool_form(tool.input_schema)
            forms["tool", tool.name] = form
            lists["tools"].append({**tool.raw, "form": form.html(f"tool{n}", f"Arguments of {tool.name}", "Call")})
        lists["prompts"] = []
        for n, prompt in enumerate(prompts or []):
            form = string_form([(a.name, a.required, a.description) for a in prompt.arguments])
            forms["prompt", prompt.name] = form
            lists["prompts"].append(
                {**prompt.raw, "form": form.html(f"prompt{n}", f"Arguments of {prompt.name}", "Get")}
            )
        lists["resources"] = [dict(r.raw) for r in resources or []]
        lists["templates"] = []
        self.templates = {}
        for n, template in enumerate(templates or []):
            uri = template.raw.get("uriTemplate")
            if not isinstance(uri, str):
                continue
            form = string_form([(v, True, None) for v in template_variables(uri)])
            forms["resource", f"template:{template.name}"] = form
            self.templates[template.name] = uri
            lists["templates"].append(
                {**template.raw, "form": form.html(f"template{n}", f"Variables of {template.name}", "Read")}
            )
        self.forms = forms
        self.skills = await self._skills(client)
        lists["skills"] = [skill.raw for skill in self.skills.values()]
        self.publish({"type": "lists", **lists})

    async def _skills(self, client: Client) -> dict[str, Skill]:
        """The server's skills by URI (none when it does not declare the extension or cannot list them)."""
        try:
            if skills_wire.EXTENSION not in await client.server_extensions():
                return {}
            return {skill.uri: skill for skill in await client.list_skills()}
        except (McpError, ClientError) as exc:
            self.publish({"type": "notice", "text": f"cannot list the server's skills: {_reason(exc)}"})
            return {}

    async def load_skill(self, uri: str) -> dict[str, Any]:
        """A listed skill's SKILL.md, fetched and verified against its entry (protocol.md P183); DevError
        saying which check failed when it differs."""
        skill = self.skills.get(uri)
        if self.client is None or skill is None:
            raise DevError(f"no skill {uri!r} is listed; refresh the lists")
        try:
            data = await self.client.read_skill_file(skill)
        except (McpError, ClientError) as exc:
            raise DevError(_reason(exc)) from None
        return {"text": data.decode("utf-8")}

    def refresh_soon(self) -> None:
        """Refresh the lists once, in the background (a list-changed notification)."""
        if self._refreshing is None or self._refreshing.done():
            self._refreshing = asyncio.ensure_future(self.refresh())

    async def _listen_for_changes(self, capabilities: Mapping[str, Any]) -> None:
        """2026-07-28: a `subscriptions/listen` stream for the lists the server says can change."""
        wanted = {
            flag: True
            for name, flag in MODERN_LISTS.items()
            if isinstance(capabilities.get(name), dict) and capabilities[name].get("listChanged")
        }
        if not wanted or self.client is None:
            return

        async def heard(message: dict[str, Any]) -> None:
            if str(message.get("method", "")).endswith("/list_changed"):
                self.publish({"type": "notice", "text": f"the server said: {message['method']}"})
                self.refresh_soon()

        with contextlib.suppress(Exception):
            await self.client.request("subscriptions/listen", {"notifications": wanted}, progress=heard)

    async def close(self) -> None:
        """Stop every call and the client (its child process, if any)."""
        tasks = [c.task for c in self.calls.values()] + [self._listen, self._refreshing]
        for task in tasks:
            if task is not None:
                task.cancel()
        client, self.client = self.client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.close()

    async def restart(self, why: str) -> None:
        """Connect again from scratch (the server file changed): running calls end, the lists are read again."""
        self.publish({"type": "status", "state": "restarting", "text": why})
        for call in list(self.calls.values()):
            if call.task is not None and not call.task.done():
                call.task.cancel()
        await self.close()
        await self.connect()

    # -- calls ------------------------------------------------------------------------------------------

    def start_call(self, kind: CallKind, name: str, pairs: Mapping[str, Sequence[str]]) -> str:
        """Start a call, read or get from the page's form; its id (the call runs on, as events)."""
        if self.client is None:
            raise DevError("not connected to the server")
        key = f"template:{name}" if kind == "resource" and name in self.templates else name
        form = self.forms.get((kind, key))
        arguments: dict[str, Any] = {}
        if form is not None:
            try:
                arguments = _read(form, pairs)
            except PageArgumentError as exc:
                raise DevError(str(exc)) from None
        if kind == "resource" and name in self.templates:
            name = expand_template(self.templates[name], {k: str(v) for k, v in arguments.items()})
        elif kind == "resource" and not name:
            raise DevError("name the resource's URI")
        return self._begin(kind, name, arguments, {})

    def _begin(self, kind: CallKind, name: str, arguments: dict[str, Any], shown: dict[str, Any]) -> str:
        call = PageCall(f"c{next(self._ids)}", kind, METHODS[kind], name, time.monotonic())
        self.calls[call.id] = call
        self._latest = call
        shown |= {"uri": name} if kind == "resource" else {"name": name, "arguments": arguments}
        self.publish({"type": "call", "call": call.id, "kind": kind, "method": call.method, **shown})
        call.task = asyncio.ensure_future(self._run(call, arguments))
        return call.id

    # -- app pages (MCP Apps) ---------------------------------------------------------------------------

    async def render_app(self, call_id: str) -> dict[str, Any]:
        """Read the app page of the tool call `call_id` and keep it for its frame (protocol.md P188)."""
        call = self._call(call_id)
        tool = next((t for t in self._tools() if t.get("name") == call.name), None)
        uri = app_uri(tool) if call.kind == "tool" and tool is not None else None
        if uri is None or self.client is None:
            raise DevError(f"{call.name} has no app page to show")
        listed = next((r for r in self._listed("resources") if r.get("uri") == uri), None)
        try:
            return await self.app_pages.render(self.client, uri, listed)
        except AppPageError as exc:
            raise DevError(str(exc)) from None
        except McpError as exc:
            raise DevError(f"reading the app page {uri} failed: {exc.message}") from None

    def start_app_call(self, from_call: str, method: str, params: Mapping[str, Any]) -> str:
        """Relay an app page's `tools/call` or `resources/read` as a call of its own, shown as the app's
        (protocol.md P189): a tool whose `_meta.ui.visibility` leaves out "app" is refused."""
        self._call(from_call)
        if self.client is None:
            raise DevError("not connected to the server")
        if method == "resources/read":
            uri = params.get("uri")
            if not isinstance(uri, str) or not uri:
                raise DevError("resources/read needs a uri")
            return self._begin("resource", uri, {}, {"from": from_call})
        if method != "tools/call":
            raise DevError(f"an app page may relay tools/call and resources/read, not {method}")
        name, arguments = params.get("name"), params.get("arguments", {})
        if not isinstance(name, str) or not isinstance(arguments, dict):
            raise DevError("tools/call needs a name and an arguments object")
        tool = next((t for t in self._tools() if t.get("name") == name), None)
        if tool is None:
            raise DevError(f"the server offers no tool {name!r}")
        if "app" not in app_visibility(tool):
            raise DevError(f"{name} is not for apps to call: its _meta.ui.visibility leaves out 'app'")
        return self._begin("tool", name, arguments, {"from": from_call})

    async def _run(self, call: PageCall, arguments: dict[str, Any]) -> None:
        client = self.client
        assert client is not None
        _CALL.set(call)
        started = time.monotonic()
        try:
            # every log level, as the deprecated logLevel asks (a 2025-11-25 session gets every level anyway)
            params: dict[str, Any] = {"_meta": {META_LOG_LEVEL: "debug"}}
            params.update(
                {"uri": call.name} if call.kind == "resource" else {"name": call.name, "arguments": arguments}
            )
            result = await client.drive(call.method, params, progress=self._notified(call))
            if call.kind == "tool":
                self.publish({"type": "result", "call": call.id, **self._tool_result(call.name, result)})
            else:
                self.publish({"type": "result", "call": call.id, "result": masked_result(result)})
        except asyncio.CancelledError:
            self.publish({"type": "failed", "call": call.id, "text": "stopped"})
        except McpError as exc:
            self.publish({"type": "failed", "call": call.id, "code": exc.code, "text": exc.message})
        except Exception as exc:
            self.publish({"type": "failed", "call": call.id, "text": _reason(exc)})
        finally:
            for waiting in call.waiting.values():
                if not waiting.future.done():
                    waiting.future.cancel()
            self.publish({"type": "done", "call": call.id, "ms": round((time.monotonic() - started) * 1000, 1)})

    def _tool_result(self, name: str, raw: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {"result": masked_result(raw)}
        schema = next((t.get("outputSchema") for t in self._tools() if t.get("name") == name), None)
        if isinstance(schema, dict) and not raw.get("isError"):
            out["structuredCheck"] = structured_check(schema, raw.get("structuredContent"))
        return out

    def _tools(self) -> list[dict[str, Any]]:
        return self._listed("tools")

    def _listed(self, kind: str) -> list[dict[str, Any]]:
        for event in reversed(self._events):
            if event.get("type") == "lists":
                items = event.get(kind)
                return [i for i in items if isinstance(i, dict)] if isinstance(items, list) else []
        return []

    def stop(self, call_id: str) -> None:
        call = self._call(call_id)
        if call.task is not None:
            call.task.cancel()

    def _call(self, call_id: str) -> PageCall:
        call = self.calls.get(call_id)
        if call is None:
            raise DevError(f"no call {call_id!r}")
        return call

    def _notified(self, call: PageCall) -> Callable[[dict[str, Any]], Any]:
        async def notified(message: dict[str, Any]) -> None:
            method = message.get("method")
            params = _object(message.get("params"))
            if method == "notifications/progress":
                self.publish(
                    {
                        "type": "progress",
                        "call": call.id,
                        "progress": params.get("progress"),
                        "total": params.get("total"),
                        "message": params.get("message") if isinstance(params.get("message"), str) else "",
                    }
                )
            elif method == "notifications/message":
                self.publish(
                    {
                        "type": "log",
                        "call": call.id,
                        "level": str(params.get("level", "info")),
                        "logger": str(params.get("logger") or ""),
                        "data": params.get("data"),
                    }
                )
            elif isinstance(method, str) and method.endswith("/list_changed"):
                self.refresh_soon()

        return notified

    def _on_task(self, task: dict[str, Any]) -> None:
        """A status of the task a call became: on the call's timeline when it changed."""
        call = _CALL.get()
        now = (task.get("status"), task.get("statusMessage"))
        if call is None or now == call.shown_task:
            return
        call.shown_task = now
        status, message = now
        self.publish(
            {
                "type": "task",
                "call": call.id,
                "taskId": str(task.get("taskId", "")),
                "status": str(status),
                "message": message if isinstance(message, str) else "",
            }
        )

    # -- the wire, as the client's `on_message` sees it ----------------------------------------------------

    def _tap(self, direction: Direction, message: dict[str, Any]) -> None:
        call = _CALL.get()
        if call is None:
            running = [c for c in self.calls.values() if c.task is not None and not c.task.done()]
            call = running[0] if len(running) == 1 else None
        method = message.get("method")
        if call is None:
            if direction == "received" and isinstance(method, str) and method.endswith("/list_changed"):
                self.publish({"type": "notice", "text": f"the server said: {method}"})
                self.refresh_soon()
            return
        now = time.monotonic()
        if len(call.messages) < MAX_MESSAGES:
            call.messages.append((now, direction, message))
        if direction == "sent" and method == call.method and "id" in message:
            call.leg_ids[message["id"]] = now
        elif direction == "received" and "id" in message and message["id"] in call.leg_ids:
            self._leg_done(call, message, now - call.leg_ids.pop(message["id"]))
        elif direction == "received" and isinstance(method, str) and "id" in message:
            params = _object(message.get("params"))
            self.publish({"type": "ask", "call": call.id, "key": str(message["id"]), **_ask_summary(method, params)})

    def _leg_done(self, call: PageCall, reply: dict[str, Any], seconds: float) -> None:
        call.rounds += 1
        result = reply.get("result")
        event: dict[str, Any] = {
            "type": "round",
            "call": call.id,
            "number": call.rounds,
            "ms": round(seconds * 1000, 1),
        }
        if isinstance(result, dict) and result.get("resultType") == "input_required":
            asks = _object(result.get("inputRequests"))
            state = result.get("requestState")
            event["outcome"] = "input_required"
            event["asks"] = [
                {"key": key, **_ask_summary(a.get("method"), a.get("params") or {})}
                for key, a in asks.items()
                if isinstance(a, dict)
            ]
            event["stateBytes"] = len(state.encode()) if isinstance(state, str) else None
        elif "error" in reply:
            event["outcome"] = "error"
        else:
            event["outcome"] = "complete"
        self.publish(event)

    def _stderr(self, line: bytes) -> None:
        """One line of the child's stderr: to the terminal as before, and to the page (P127)."""
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.buffer.write(line)
            sys.stderr.buffer.flush()
        text = line.decode(errors="replace")
        if self.client is None or self._latest is None:
            self._output.append(text)  # connecting: the reason it fails, if it does
        else:
            self.publish({"type": "output", "call": self._latest.id, "text": text})

    def exchange(self, call_id: str) -> list[dict[str, Any]]:
        """The call's raw messages so far, masked, with the milliseconds since the call began."""
        call = self._call(call_id)
        return [
            {"ms": round((at - call.started) * 1000, 1), "direction": d, "message": masked(m)}
            for at, d, m in call.messages
        ]

    # -- questions ----------------------------------------------------------------------------------------

    async def _on_question(self, question: Question) -> Answer[Any]:
        call = self._current()
        waiting = Waiting(question.mode, question, asyncio.get_running_loop().create_future())
        event: dict[str, Any] = {
            "type": "question",
            "call": call.id if call else None,
            "key": question.key,
            "mode": question.mode,
            "message": question.message,
        }
        if question.mode == "form":
            assert question.form is not None
            event["form"] = form_html(
                question.form, prefix=f"q-{call.id if call else 'x'}-{_safe(question.key)}", label=question.message
            )
        else:
            event["url"] = _url_view(question.url or "")
        return await self._wait(call, question.key, waiting, event)  # type: ignore[no-any-return]

    async def _on_sampling(self, params: dict[str, Any]) -> dict[str, Any]:
        call = self._current()
        key = f"sampling-{next(self._ids)}"
        waiting = Waiting("sampling", None, asyncio.get_running_loop().create_future())
        event = {
            "type": "question",
            "call": call.id if call else None,
            "key": key,
            "mode": "sampling",
            "request": params,
        }
        text = await self._wait(call, key, waiting, event)
        if not isinstance(text, str):  # sampling has no "decline": the call stops here, and says why
            raise ClientError("the sampling request was declined in baton dev")
        return {
            "role": "assistant",
            "content": {"type": "text", "text": text},
            "model": "a person, in baton dev",
            "stopReason": "endTurn",
        }

    def _current(self) -> PageCall | None:
        call = _CALL.get()
        if call is None:
            running = [c for c in self.calls.values() if c.task is not None and not c.task.done()]
            call = running[0] if len(running) == 1 else None
        return call

    async def _wait(self, call: PageCall | None, key: str, waiting: Waiting, event: dict[str, Any]) -> Any:
        if call is None:
            return Cancelled()  # no call to show it with: nobody can answer
        call.waiting[key] = waiting
        self.publish(event)
        try:
            return await waiting.future
        except asyncio.CancelledError:
            self.publish({"type": "answered", "call": call.id, "key": key, "action": "withdrawn"})
            raise
        finally:
            call.waiting.pop(key, None)

    def answer(self, call_id: str, key: str, action: str, pairs: Mapping[str, Sequence[str]]) -> None:
        """Answer a waiting question; DevError (the question stays open) when the answer does not fit."""
        call = self._call(call_id)
        waiting = call.waiting.get(key)
        if waiting is None or waiting.future.done():
            raise DevError("that question is no longer waiting")
        reply: Any
        sent: dict[str, Any] | None = None  # what the timeline shows was sent, secrets masked
        if waiting.kind == "sampling":
            reply = next(iter(pairs.get("text", ())), "") if action == "accept" else None
            shown = action
        elif action == "decline":
            reply, shown = Declined(), "decline"
        elif action == "cancel":
            reply, shown = Cancelled(), "cancel"
        elif action == "accept":
            question = waiting.question
            assert question is not None
            content = form_values(question.form, pairs) if question.form is not None else None
            reply = Accepted(content)
            try:
                question.answer(reply)  # the client's own check, whatever the page checked
            except InvalidReply as exc:
                raise DevError(str(exc)) from None
            shown = "accept"
            sent = shown_answer(question.form, content) if question.form is not None else None
        else:
            raise DevError(f"an answer is accept, decline or cancel, not {action!r}")
        waiting.future.set_result(reply)
        event: dict[str, Any] = {"type": "answered", "call": call.id, "key": key, "action": shown}
        if waiting.kind == "sampling" and isinstance(reply, str):
            sent = {"reply": reply}
        if sent is not None:
            event["sent"] = sent
        self.publish(event)

    async def complete(self, ref: dict[str, Any], name: str, value: str, context: dict[str, str]) -> list[str]:
        """The server's completions for one argument (none when it offers none)."""
        if self.client is None or not self.completions:
            return []
        params: dict[str, Any] = {"ref": ref, "argument": {"name": name, "value": value}}
        if context:
            params["context"] = {"arguments": context}
        try:
            result = await self.client.request("completion/complete", params)
        except (McpError, ClientError, OSError):
            return []
        values = (result.get("completion") or {}).get("values")
        return [v for v in values if isinstance(v, str)][:100] if isinstance(values, list) else []


def app_uri(tool: Mapping[str, Any]) -> str | None:
    """The `ui://` page a listed tool names: `_meta.ui.resourceUri`, or the drafts' flat key."""
    meta = _object(tool.get("_meta"))
    uri = _object(meta.get("ui")).get("resourceUri", meta.get("ui/resourceUri"))
    return uri if isinstance(uri, str) else None


def app_visibility(tool: Mapping[str, Any]) -> list[str]:
    """Who may call a listed tool (`_meta.ui.visibility`): both the model and apps when it says nothing."""
    seen = _object(_object(tool.get("_meta")).get("ui")).get("visibility")
    return [v for v in seen if isinstance(v, str)] if isinstance(seen, list) else ["model", "app"]


def _read(form: ArgumentForm, pairs: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    arguments = read_arguments(form, pairs)
    try:
        form.form.validate({k: v for k, v in arguments.items() if k in {f.name for f in form.form.fields}})
    except ValueError as exc:
        raise PageArgumentError(str(exc)) from None
    return arguments


def _object(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _ask_summary(method: Any, params: dict[str, Any]) -> dict[str, Any]:
    """What the timeline shows of one ask: its method, its mode and message, and whether it is deprecated."""
    out: dict[str, Any] = {"method": str(method)}
    if method == "elicitation/create":
        out["mode"] = "url" if params.get("mode") == "url" else "form"
        out["message"] = params.get("message") if isinstance(params.get("message"), str) else ""
    else:
        out["deprecated"] = method in ("sampling/createMessage", "roots/list")
    return out


def _url_view(url: str) -> dict[str, Any]:
    """A URL as the page shows it: every segment with its style, the site, and Baton's URL-safety verdict."""
    report = check_url(url, allow_http_loopback=True)
    return {
        "url": url,
        "ok": report.ok,
        "segments": [{"text": text, "style": style} for text, style in format_for_display(report)],
        "site": report.registrable_domain or report.display_host,
        "host": report.display_host,
        "errors": [i.message for i in report.errors],
        "warnings": [i.message for i in report.warnings],
    }


def masked_result(raw: dict[str, Any]) -> dict[str, Any]:
    """A result as the page may show it: bearer tokens masked, like the raw exchange."""
    return masked({"result": raw, "id": 0})["result"]  # type: ignore[no-any-return]


def structured_check(schema: dict[str, Any], structured: Any) -> str:
    """ "ok", or what is wrong with a tool's `structuredContent` against its `outputSchema` (JSON Schema)."""
    if structured is None:
        return "the tool has an outputSchema but sent no structuredContent"
    import jsonschema  # noqa: PLC0415 (150 ms, only once a tool with an outputSchema answered)

    try:
        validator = jsonschema.validators.validator_for(schema)(schema)
        errors = sorted(validator.iter_errors(structured), key=lambda e: list(e.path))
    except jsonschema.exceptions.SchemaError as exc:
        return f"the outputSchema itself is invalid: {exc.message}"
    if not errors:
        return "ok"
    first = errors[0]
    where = "/".join(str(p) for p in first.path) or "(top level)"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return f"does not match the outputSchema at {where}: {first.message}{more}"


def _reason(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if isinstance(exc, (ClientError, McpError, OSError)) else f"{text} ({type(exc).__name__})"


def _safe(key: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in key)[:40]
