"""`Client`: requests with full `_meta` and standard headers, the multi round-trip driver, and the era.

The driver follows protocol.md P23: a new JSON-RPC id on every leg, `requestState` echoed byte for
byte and never invented, answers for every key asked, nothing shared between requests in flight,
bounded rounds and time, a pause before retrying a state-only round, a missing `resultType`
treated as complete and an unknown one as an error. A retry whose state the server refuses (expired
or invalid) starts the request again once, the answers given offered again (`baton.client.restart`, P122).

The era follows protocol.md P34: `"auto"` (the default) probes once with `server/discover` (`probe`)
and keeps the verdict for the client's life (a 2026 server's answer is kept as the discover result);
`protocol="2026-07-28"` speaks it without asking; `"2025-11-25"` opens a session (`handshake.ClientSession`).
Once settled, a 2026 request pays one attribute check.

The named requests return typed views over the raw results (`baton.client.results`); `request`,
`drive`, `start` and `advance` stay generic and return the raw dicts. A URL question the host
accepted is asked again only after a pause (`baton.client.pacing`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import os
import time
import warnings
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from ..forms import Accepted, Cancelled, Declined
from ..protocol.constants import (
    META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO,
    META_PROTOCOL_VERSION,
    META_SERVER_INFO,
    SUPPORTED_VERSIONS,
)
from ..protocol.errors import HEADER_MISMATCH, UNSUPPORTED_VERSION, McpError
from ..protocol.extensions import Extensions, capabilities_with, checked_extensions, negotiated, peer_extensions
from ..protocol.headers import argument_at, header_param_specs, header_text
from ..protocol.messages import request as request_message
from ..protocol.tasks import TASKS
from ..version import __version__
from . import skills
from .callbacks import RawHandler
from .deadline import Deadlines
from .errors import AuthError, ClientError, InvalidReply, result_of
from .handshake import ClientSession, SessionStdio, SessionTransport
from .http11 import HttpError
from .http_transport import HttpTransport
from .inbound import Inbound
from .observe import observer
from .pacing import DEFAULT_URL_BACKOFF_S, UrlPacing, check_backoff
from .probe import (
    AUTO,
    CHOICES,
    HANDSHAKE,
    MODERN,
    STDIO_PROBE_S,
    ProtocolChoice,
    common_versions,
    era_of_error,
    era_of_result,
)
from .questions import ElicitHandler, Question
from .restart import EarlierAnswers, restart_notice, state_refused
from .results import CallToolResult, GetPromptResult, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool
from .rounds import Round
from .session_http import SessionHttp
from .skills import Skill
from .stdio_transport import StdioTransport
from .tap import MessageTap, tapped
from .tasks import TaskWatcher, follow
from .tasks_handshake import follow_handshake, offers_tool_tasks, task_support

if TYPE_CHECKING:
    from .oauth import OAuth, ProgramLogin

log = logging.getLogger("baton.client")
Progress = Callable[[dict[str, Any]], Awaitable[None]]
Mode = Literal["form", "url"]
MODES: tuple[Mode, ...] = ("form", "url")
LISTEN = "subscriptions/listen"
"""A stream open until the client closes it: no deadline bounds it (protocol.md P199)."""
CACHED_METHODS = frozenset(
    {"server/discover", "tools/list", "prompts/list", "resources/list", "resources/templates/list"}
)
_warned_deprecated: set[str] = set()
STEP_MODE_2026 = (
    "step mode is 2026-07-28 only, and this server speaks 2025-11-25, where the server asks its questions "
    "during the call: use call_tool (or drive), which answers them through on_form and on_url"
)


class Transport(Protocol):
    """How requests reach the server: HTTP, stdio, or an object given as the target (`baton.testing`'s
    in-memory one). A given one that also speaks 2025-11-25 has `session(inbound)`, its session's transport."""

    async def request(
        self, message: dict[str, Any], version: str, notify: Progress | None, param_headers: dict[str, str]
    ) -> dict[str, Any]: ...

    async def close(self) -> None: ...


class Client:
    """A client of one MCP server: an URL (Streamable HTTP), a command (stdio subprocess), or a `Transport`.

    Capabilities are declared from the handlers given: `on_form` and `on_url` (elicitation modes,
    separately), and the deprecated `on_sampling` / `on_roots`; `declare=("form", "url")` declares
    modes without a handler, for step mode, where the host answers each `Round` itself. `protocol` is
    the era: `"auto"` (probe once, the default), `"2026-07-28"` (stateless), or `"2025-11-25"` (an
    `initialize` session). `url_backoff_s` is `(first_s, max_s)`, the pause before a URL the host
    accepted is asked again in the same request (`baton.client.pacing`). `auth=OAuth(...)` (or
    `ClientCredentials(...)` for a program with no person)
    (`baton.client.oauth`) logs in when an HTTP server answers 401, and sends the token with every request.
    `trace_arguments=True` puts tool arguments and full resource URIs on its spans when OpenTelemetry is
    configured (off by default: a URI is traced without userinfo, query and fragment; protocol.md P64).
    `on_message(direction, message)` sees every JSON-RPC message sent or read (`baton.client.tap`).
    With `extensions={"io.modelcontextprotocol/tasks": {}}` a call the server makes a task is followed to its
    end (polled, its questions answered by the same callbacks, cancelled if the caller is), and `on_task`
    sees each status it polls (protocol.md P173).
    """

    def __init__(
        self,
        target: str | Sequence[str] | Transport,
        *,
        on_form: ElicitHandler | None = None,
        on_url: ElicitHandler | None = None,
        on_sampling: RawHandler | None = None,
        on_roots: RawHandler | None = None,
        declare: Iterable[Mode] = (),
        name: str = "baton-client",
        version: str = __version__,
        max_rounds: int = 10,
        deadline_s: float = 300.0,
        answer_timeout_s: float | None = None,
        stdio_probe_s: float = STDIO_PROBE_S,
        headers: dict[str, str] | None = None,
        env: dict[str, str] | None = None,
        cache: bool = True,
        protocol: ProtocolChoice = AUTO,
        url_backoff_s: tuple[float, float] = DEFAULT_URL_BACKOFF_S,
        auth: OAuth | ProgramLogin | None = None,
        trace_arguments: bool = False,
        on_message: MessageTap | None = None,
        extensions: Mapping[str, Mapping[str, Any] | None] | None = None,
        on_task: TaskWatcher | None = None,
    ) -> None:
        if protocol not in CHOICES:
            raise ValueError(f"protocol is one of {', '.join(map(repr, CHOICES))}, not {protocol!r}")
        declared = frozenset(declare if not isinstance(declare, str) else (declare,))
        if not declared <= set(MODES):
            raise ValueError(f"declare takes elicitation modes, 'form' and 'url', not {sorted(declared - set(MODES))}")
        self.url_backoff_s = check_backoff(url_backoff_s)
        self.protocol: ProtocolChoice = protocol
        self._modern = protocol == MODERN  # the era check of every request: settled and 2026-07-28
        self._session: ClientSession | None = None
        self._task_support: dict[str, str] = {}  # 2025-11-25 tools' execution.taskSupport (protocol.md P210)
        self.on_session_reopened: Callable[[], Awaitable[None]] | None = None
        """Awaited when a 2025-11-25 session the server ended (HTTP 404: it restarted) was opened again, before
        the request that found it gone is sent again: the place to restore what the old session held (P162)."""
        self._era_lock = asyncio.Lock()
        self._opening: asyncio.Future[ClientSession] | None = None  # a handshake under way
        self._probe_answer = ""  # what the probe got, for the message if the handshake fails too
        self._probe_late = False  # the stdio probe timed out (its answer may still come)
        self.transport: Transport
        if isinstance(target, str):
            if not target.startswith(("http://", "https://")):
                raise ValueError(f"a client target is an http(s) URL or a command list, not {target!r}")
            # No cap of its own on a 2026 leg: deadline_s bounds each one, paused for a person (protocol.md P90)
            self.transport = HttpTransport(target, headers=headers, auth=auth, timeout=None)
            self.http = True
        elif isinstance(target, Sequence):
            if auth is not None:  # MCP: a stdio server takes its credentials from the environment
                raise ValueError("auth= is for HTTP servers; a stdio server takes credentials from its environment")
            self.transport = StdioTransport(target, env=None if env is None else {**os.environ, **env})
            self.http = False
        else:
            self.transport, self.http = target, False
        self.on_form, self.on_url = on_form, on_url
        self.on_sampling, self.on_roots = on_sampling, on_roots
        caps: dict[str, Any] = {}
        modes: dict[str, Any] = {
            mode: {}
            for mode, handler in (("form", on_form), ("url", on_url))
            if handler is not None or mode in declared
        }
        self.declared: frozenset[Mode] = frozenset(mode for mode in MODES if mode in modes)
        if modes:
            caps["elicitation"] = modes
        for capability, handler in (("sampling", on_sampling), ("roots", on_roots)):
            if handler is not None:
                caps[capability] = {}
                if capability not in _warned_deprecated and protocol != HANDSHAKE:  # current in 2025-11-25
                    _warned_deprecated.add(capability)
                    warnings.warn(
                        f"the MCP {capability} capability is deprecated in 2026-07-28 (SEP-2577)",
                        DeprecationWarning,
                        stacklevel=2,
                    )
        # Declared in every request's `_meta` (2026-07-28) and in `initialize` (2025-11-25) (protocol.md P142).
        self.extensions: dict[str, dict[str, Any]] = checked_extensions(extensions, "Client(extensions=...)")
        self.capabilities = capabilities_with(caps, self.extensions)
        self.on_message = on_message
        self.on_task = on_task
        self.client_info = {"name": name, "version": version}
        self.protocol_version = SUPPORTED_VERSIONS[0]
        self.max_rounds = max_rounds
        self.deadlines = Deadlines(deadline_s, answer_timeout_s)
        self.stdio_probe_s = stdio_probe_s  # a stdio server that starts slowly needs more (protocol.md P34)
        self.server_name: str | None = None
        self._ids = itertools.count(1)
        self._header_params: dict[str, dict[str, tuple[str, ...]]] = {}
        self._cache: dict[tuple[str, str | None], tuple[float, dict[str, Any]]] | None = {} if cache else None
        # None unless OpenTelemetry is configured (protocol.md P60); `trace_arguments` as the server's (P64)
        self._observer = observer(target, trace_arguments)

    @property
    def deadline_s(self) -> float:
        """How long one request may wait for the server, time spent answering its questions not counted."""
        return self.deadlines.deadline_s

    @deadline_s.setter
    def deadline_s(self, seconds: float) -> None:
        self.deadlines.deadline_s = seconds

    async def __aenter__(self) -> Client:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        if self._opening is not None:
            self._opening.cancel()
            await asyncio.gather(self._opening, return_exceptions=True)
        if self._session is not None:
            await self._session.close()
        await self.transport.close()

    # -- the era (protocol.md P34) ------------------------------------------------------------------

    @property
    def era(self) -> str | None:
        """The protocol version in use, `"2026-07-28"` or `"2025-11-25"`; None until the probe has run."""
        if self._modern:
            return MODERN
        return HANDSHAKE if self._session is not None else None

    @property
    def initialize_result(self) -> dict[str, Any] | None:
        """The server's `InitializeResult` in a 2025-11-25 session (capabilities, serverInfo, instructions)."""
        return self._session.result if self._session is not None else None

    async def settle_era(self) -> str:
        """Probe now (if not done yet) and open the session if the server speaks 2025-11-25; the era."""
        if not self._modern and self._session is None:
            async with self._era_lock:
                if not self._modern and self._session is None:
                    if self.protocol == AUTO and await self._probe() == MODERN:
                        self._modern = True
                    else:
                        # Shielded: a caller cancelled mid-handshake leaves it running for the next caller, so
                        # the server never gets `initialize` twice.
                        if self._opening is None:
                            self._opening = asyncio.ensure_future(self._open_session())
                            self._opening.add_done_callback(_read_outcome)
                        opening = self._opening
                        try:
                            self._session = await asyncio.shield(opening)
                        except _ServesModern:
                            self._modern = True
                        finally:
                            if opening.done():
                                self._opening = None
        return MODERN if self._modern else HANDSHAKE

    async def _probe(self) -> str:
        """`server/discover` with the 2026 envelope; the era its answer shows (`probe`)."""
        async with self.deadlines.running("server/discover"):  # a leg of its own (protocol.md P90)
            return await self._discover()

    async def _discover(self) -> str:
        try:
            async with asyncio.timeout(None if self.http else self.stdio_probe_s):
                result = await self._leg("server/discover", None, None)
        except TimeoutError:
            self._probe_answer = f"no answer within {self.stdio_probe_s:g} s"
            self._probe_late = True
            return HANDSHAKE
        except McpError as exc:
            self._probe_answer = f"error {exc.code} ({exc.message})"
            era = era_of_error(exc.code, exc.data)
            if era == MODERN and exc.code == UNSUPPORTED_VERSION:
                self._renegotiate(exc.data)
            return era
        except HttpError as exc:
            if exc.status >= 500:
                raise
            self._probe_answer = str(exc)
            return HANDSHAKE
        except AuthError:  # the login failed: the handshake would only ask again (protocol.md P48)
            raise
        except ClientError as exc:  # a reply without a result object
            self._probe_answer = str(exc)
            return HANDSHAKE
        era = era_of_result(result)
        if era == MODERN:
            self._remember(("server/discover", None), result)
        else:
            self._probe_answer = "a result that is not a DiscoverResult naming 2026-07-28"
        return era

    async def _open_session(self) -> ClientSession:
        inbound = Inbound(
            self.on_form,
            self.on_url,
            self.on_sampling,
            self.on_roots,
            declared=self.declared,
            observer=self._observer,
            tap=self.on_message,
            deadlines=self.deadlines,
        )
        transport: SessionTransport
        if isinstance(self.transport, HttpTransport):
            transport = SessionHttp(self.transport, inbound)
        elif isinstance(self.transport, StdioTransport):
            transport = SessionStdio(self.transport, inbound)
        else:
            opener = getattr(self.transport, "session", None)
            if opener is None:
                raise ClientError("this transport speaks only 2026-07-28: it has no session(inbound)")
            transport = opener(inbound)
        session = ClientSession(
            transport,
            inbound,
            capabilities=self.capabilities,
            client_info=self.client_info,
            ids=self._ids,
            deadlines=self.deadlines,
            url_retries=self.max_rounds,
            url_backoff_s=self.url_backoff_s,
            observer=self._observer,
            tap=self.on_message,
        )
        session.on_reopened = self._session_reopened
        try:
            await session.open()
        except McpError as exc:
            if self.protocol != AUTO:
                raise
            if self._probe_late and era_of_error(exc.code, exc.data) == MODERN:
                # A stdio server slow to start answered the probe after it gave up: it took `server/discover`
                # and serves 2026-07-28 on this connection now, so the client does too (protocol.md P144).
                raise _ServesModern from exc
            raise ClientError(
                f"the server speaks neither 2026-07-28 nor 2025-11-25: server/discover got {self._probe_answer}, "
                f"initialize got error {exc.code} ({exc.message})"
            ) from exc
        self.server_name = session.server_name
        return session

    async def _session_reopened(self) -> None:
        if self.on_session_reopened is not None:
            await self.on_session_reopened()

    async def _in_session(
        self, method: str, params: dict[str, Any] | None, progress: Progress | None
    ) -> dict[str, Any]:
        """A request sent before the era is known, or in a 2025-11-25 session."""
        await self.settle_era()
        if self._session is None:
            return await self.request(method, params, progress=progress)
        return await self._session.request(method, params, progress)

    # -- one leg ------------------------------------------------------------------------------------

    async def request(
        self, method: str, params: dict[str, Any] | None = None, *, progress: Progress | None = None
    ) -> dict[str, Any]:
        """Send one request (one leg) and return its result; a server error raises its McpError.

        A -32022 answer is retried once with a version the server supports.
        """
        if not self._modern:
            return await self._in_session(method, params, progress)
        key = (method, (params or {}).get("cursor"))
        if self._cache is not None and method in CACHED_METHODS:
            hit = self._cache.get(key)
            if hit is not None and time.monotonic() < hit[0]:
                return hit[1]
        for attempt in (1, 2):
            try:
                if method == LISTEN:  # open until the client closes it: waiting is its point, no deadline (P199)
                    result = await self._leg(method, params, progress)
                    break
                async with self.deadlines.running(method):  # each leg its own deadline (protocol.md P90)
                    result = await self._leg(method, params, progress)
                break
            except McpError as exc:
                if attempt == 2:
                    raise
                if exc.code == UNSUPPORTED_VERSION and self._renegotiate(exc.data):
                    continue
                if exc.code == HEADER_MISMATCH and method == "tools/call" and self.http:
                    # The tool's header annotations may have changed: re-read them, then retry once.
                    if self._cache is not None:
                        self._cache.pop(("tools/list", None), None)
                    await self.list_tools()
                    continue
                raise
        if self._cache is not None and method in CACHED_METHODS:
            self._remember(key, result)
        return result

    def _remember(self, key: tuple[str, str | None], result: dict[str, Any]) -> None:
        if self._cache is not None and result.get("resultType", "complete") == "complete":
            ttl = result.get("ttlMs")
            ttl = ttl if isinstance(ttl, int) and ttl > 0 else 0  # missing or negative: stale at once
            if ttl:
                self._cache[key] = (time.monotonic() + ttl / 1000, result)

    def _renegotiate(self, data: Any) -> bool:
        common = common_versions(data)
        if not common:
            return False
        self.protocol_version = common[0]
        return True

    async def _leg(self, method: str, params: dict[str, Any] | None, progress: Progress | None) -> dict[str, Any]:
        body = dict(params or {})
        body["_meta"] = {
            META_PROTOCOL_VERSION: self.protocol_version,
            META_CLIENT_CAPABILITIES: self.capabilities,
            META_CLIENT_INFO: self.client_info,
            **body.get("_meta", {}),
        }
        if self._observer is not None:  # a span per leg, its context in _meta (protocol.md P63)
            return await self._observer.leg(
                method, body, lambda traced: self._send(method, traced, progress), self.protocol_version
            )
        return await self._send(method, body, progress)

    async def _send(self, method: str, body: dict[str, Any], progress: Progress | None) -> dict[str, Any]:
        message = request_message(next(self._ids), method, body)
        headers: dict[str, str] = {}
        if method == "tools/call" and self.http:
            arguments = body.get("arguments") or {}
            for name, path in self._header_params.get(str(body.get("name")), {}).items():
                text = header_text(argument_at(arguments, path))
                if text is not None:
                    headers[name] = text
        tap = self.on_message
        if tap is not None:
            tap("sent", message)
            progress = tapped(tap, progress)
        reply = await self.transport.request(message, self.protocol_version, progress, headers)
        if tap is not None:
            tap("received", reply)
        result = result_of(reply, method)
        info = (result.get("_meta") or {}).get(META_SERVER_INFO)
        if isinstance(info, dict) and isinstance(info.get("name"), str):
            self.server_name = info["name"]
        return result

    # -- discovery and lists ------------------------------------------------------------------------

    async def server_extensions(self) -> Extensions:
        """The extensions the server declared (identifier -> settings): from `server/discover` (2026-07-28,
        the probe's answer when it is still fresh) or from the session's `InitializeResult` (2025-11-25)."""
        if not self._modern and await self.settle_era() == HANDSHAKE:
            caps = (self.initialize_result or {}).get("capabilities")
        else:
            caps = (await self.discover()).get("capabilities")
        return peer_extensions(caps if isinstance(caps, dict) else {})

    async def extension(self, name: str) -> Mapping[str, Any] | None:
        """The server's settings for extension `name` if this client and the server both declared it, else
        None: the extension is then not used and the core behaviour applies (protocol.md P141)."""
        if name not in self.extensions:
            return None
        return negotiated(self.extensions, await self.server_extensions(), name)

    async def discover(self) -> dict[str, Any]:
        """The server's `DiscoverResult` (2026-07-28); a 2025-11-25 server has `initialize_result` instead."""
        if not self._modern and await self.settle_era() == HANDSHAKE:
            raise ClientError("server/discover is 2026-07-28 only; this server speaks 2025-11-25 (initialize_result)")
        return await self.request("server/discover")

    async def _all(self, method: str, key: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        cursor = None
        for _ in range(1000):
            result = await self.request(method, {"cursor": cursor} if cursor is not None else None)
            page = result.get(key)
            if isinstance(page, list):  # an item that is not an object describes nothing: left out
                items.extend(item for item in page if isinstance(item, dict))
            cursor = result.get("nextCursor")
            if cursor is None:
                return items
        raise ClientError(f"{method}: more than 1000 pages")

    async def _as_handshake_task(self, name: Any) -> bool:
        """Whether a 2025-11-25 `tools/call` of `name` goes as a task (protocol.md P210): this client declared
        the tasks extension, the server task-augmented `tools/call`, and the tool's `taskSupport` allows it
        (the tools are listed once for it, and again for a name not seen)."""
        if TASKS not in self.extensions or not offers_tool_tasks(self.initialize_result):
            return False
        if name not in self._task_support:
            self._task_support = {str(t.get("name")): task_support(t) for t in await self._all("tools/list", "tools")}
        return self._task_support.get(name, "forbidden") != "forbidden"

    async def list_tools(self) -> list[Tool]:
        """The server's tools; on HTTP, a tool with an invalid `x-mcp-header` annotation is dropped (2026)."""
        tools: list[Tool] = []
        for tool in await self._all("tools/list", "tools"):
            if self._session is not None:  # x-mcp-header means nothing in a 2025-11-25 session
                tools.append(Tool(tool))
                continue
            try:
                specs = header_param_specs(tool.get("inputSchema") or {})
            except ValueError as exc:
                if self.http:
                    log.warning("dropping tool %r: %s", tool.get("name"), exc)
                    continue
                specs = {}
            self._header_params[str(tool.get("name"))] = specs
            tools.append(Tool(tool))
        return tools

    async def list_prompts(self) -> list[Prompt]:
        """The server's prompts, every page."""
        return [Prompt(item) for item in await self._all("prompts/list", "prompts")]

    async def list_resources(self) -> list[Resource]:
        """The server's resources, every page (templates are in `list_resource_templates`)."""
        return [Resource(item) for item in await self._all("resources/list", "resources")]

    async def list_resource_templates(self) -> list[ResourceTemplate]:
        """The server's resource templates (RFC 6570 URI templates), every page."""
        return [ResourceTemplate(item) for item in await self._all("resources/templates/list", "resourceTemplates")]

    # -- skills (SEP-2640, client/skills.py) ---------------------------------------------------------

    async def list_skills(self) -> list[Skill]:
        """The skills the server lists, every page; no skill file is fetched (protocol.md P183)."""
        return await skills.list_skills(self)

    async def get_skill(self, uri: str) -> Skill:
        """One skill's entry by the URI of its SKILL.md (`skills/get`)."""
        return await skills.get_skill(self, uri)

    async def read_skill_file(self, skill: Skill, uri: str | None = None) -> bytes:
        """One file of `skill` (its SKILL.md by default), verified against the entry: size, digest and, for
        the SKILL.md, frontmatter; `SkillVerificationError` on any difference."""
        return await skills.read_skill_file(self, skill, uri)

    async def load_skill(self, skill: Skill) -> dict[str, bytes]:
        """Every file of `skill`, SKILL.md first, each verified: URI -> bytes; stops at the first that fails."""
        return await skills.load_skill(self, skill)

    # -- multi round-trip requests ------------------------------------------------------------------

    async def call_tool(
        self, name: str, arguments: dict[str, Any] | None = None, *, progress: Progress | None = None
    ) -> CallToolResult:
        """Call a tool, answering every round of questions until the result is complete.

        A tool's own failure is a result with `is_error` set, not an exception; the server refusing the
        call (an unknown tool, invalid arguments) raises its `McpError`.
        """
        return CallToolResult(
            await self.drive("tools/call", {"name": name, "arguments": arguments or {}}, progress=progress)
        )

    async def read_resource(self, uri: str, *, progress: Progress | None = None) -> ReadResourceResult:
        """Read a resource, answering every round of questions until the result is complete."""
        return ReadResourceResult(await self.drive("resources/read", {"uri": uri}, progress=progress))

    async def get_prompt(
        self, name: str, arguments: dict[str, str] | None = None, *, progress: Progress | None = None
    ) -> GetPromptResult:
        """Get a prompt, answering every round of questions until the result is complete."""
        return GetPromptResult(
            await self.drive("prompts/get", {"name": name, "arguments": arguments or {}}, progress=progress)
        )

    async def start(
        self, method: str, params: dict[str, Any], *, progress: Progress | None = None
    ) -> Round | dict[str, Any]:
        """Step mode (2026-07-28 only): send the first leg; returns the complete result, or a `Round` to answer."""
        if not self._modern and await self.settle_era() == HANDSHAKE:
            raise ClientError(STEP_MODE_2026)
        return self._classify(method, params, await self.request(method, params, progress=progress), 1)

    async def advance(
        self, round_: Round, answers: dict[str, Any], *, progress: Progress | None = None
    ) -> Round | dict[str, Any]:
        """Step mode: answer a round and send the retry; returns the next `Round` or the result.

        `answers` maps each key asked to a reply (`Accepted`/`Declined`/`Cancelled` for elicitation,
        a raw result dict for the deprecated sampling and roots asks).
        """
        if not self._modern and await self.settle_era() == HANDSHAKE:
            raise ClientError(STEP_MODE_2026)
        responses = _responses(round_, answers)
        params = dict(round_.params)
        if responses:
            params["inputResponses"] = responses
        if round_.request_state is not None:
            params["requestState"] = round_.request_state  # byte for byte, never invented
        if not round_.input_requests:
            await asyncio.sleep(0.05)  # state only: the server shed load, so pause before retrying
        result = await self.request(round_.method, params, progress=progress)
        return self._classify(round_.method, round_.params, result, round_.number + 1)

    def _classify(
        self, method: str, params: dict[str, Any], result: dict[str, Any], number: int
    ) -> Round | dict[str, Any]:
        kind = result.get("resultType", "complete")  # absent: a pre-2026 server, complete
        if kind == "complete" or (kind == "task" and TASKS in self.extensions):  # a task: drive follows it (P173)
            return result
        if kind != "input_required":
            raise ClientError(f"{method}: unknown resultType {kind!r}")
        asks = result.get("inputRequests") or {}
        state = result.get("requestState")
        if not isinstance(asks, dict) or (state is not None and not isinstance(state, str)):
            raise ClientError(f"{method}: malformed input_required result")
        if not asks and state is None:
            raise ClientError(f"{method}: input_required with neither inputRequests nor requestState")
        return Round(
            method=method,
            params=params,
            input_requests=asks,
            request_state=state,
            number=number,
            server=self.server_name,
        )

    async def drive(self, method: str, params: dict[str, Any], *, progress: Progress | None = None) -> dict[str, Any]:
        """The whole loop for one request, answering through the handlers; bounded in rounds and time.

        In a 2025-11-25 session it is one request, and the server's questions come during it.
        Each leg to the server has its own `deadline_s`; answering is the person's time (protocol.md P90).
        A state the server refuses on a retry starts the request again, once (protocol.md P122).
        """
        if not self._modern and await self.settle_era() == HANDSHAKE:
            assert self._session is not None
            if method == "tools/call" and await self._as_handshake_task(params.get("name")):  # protocol.md P210
                session = self._session

                async def leg(name: str, sent: dict[str, Any]) -> dict[str, Any]:
                    return await session.request(name, sent, progress if name == "tasks/result" else None)

                created = await leg(method, {**params, "task": {}})
                return await follow_handshake(leg, created, self.on_task) if "task" in created else created
            return await self._session.request(method, params, progress)  # paused while the person answers
        earlier = EarlierAnswers()
        step = await self.start(method, params, progress=progress)
        pacing = UrlPacing(self.url_backoff_s)
        rounds = 0
        while isinstance(step, Round):
            if rounds == self.max_rounds:
                raise ClientError(f"{method}: the server still asked after {self.max_rounds} rounds")
            rounds += 1
            await pacing.wait(_urls_asked(step))  # a URL accepted before: give its flow time
            answers = {
                key: await self._answer(key, ask, step, pacing, earlier) for key, ask in step.input_requests.items()
            }
            try:
                step = await self.advance(step, answers, progress=progress)
            except McpError as exc:
                if earlier.restarted or not state_refused(exc):
                    raise
                # Expired or invalid (the server never says which): once, from the start (protocol.md P122).
                log.warning("%s", restart_notice(method, params))
                earlier.restarted, rounds = True, 0
                step = await self.start(method, params, progress=progress)
        if step.get("resultType") == "task":
            pacing, earlier = UrlPacing(self.url_backoff_s), EarlierAnswers()

            async def answers_for(asked: Round) -> dict[str, Any]:
                replies = {
                    k: await self._answer(k, ask, asked, pacing, earlier) for k, ask in asked.input_requests.items()
                }
                return _responses(asked, replies)

            return await follow(_Driver(self, answers_for), method, step, self.on_task)
        return step

    async def _answer(self, key: str, ask: Any, step: Round, pacing: UrlPacing, earlier: EarlierAnswers) -> Any:
        if not isinstance(ask, dict):
            raise ClientError(f"input request {key!r} is not an object")
        method = ask.get("method")
        params = ask.get("params") or {}
        if method == "elicitation/create":
            question = Question.from_params(key, params, step.server)
            handler = self.on_url if question.mode == "url" else self.on_form
            if handler is None:
                return Cancelled()  # not declared, so a conforming server never asks this
            offered = earlier.offer(question)  # after a restart, the answers given before as defaults (P122)
            reply = await self.deadlines.answering(handler(offered))
            sent = offered.answer(reply)  # validate now, so a bad reply fails before anything is sent
            if offered is not question and isinstance(reply, Accepted):
                reply = Accepted(sent["content"])  # a field left out takes the default offered, as the host saw it
            earlier.remember(question, reply)
            if question.mode == "url" and isinstance(reply, Accepted):
                pacing.accepted(question.url)
            return reply
        if method == "sampling/createMessage" and self.on_sampling is not None:
            return await self.deadlines.answering(self.on_sampling(params), limited=False)
        if method == "roots/list" and self.on_roots is not None:
            return await self.deadlines.answering(self.on_roots(params), limited=False)
        raise ClientError(f"the server asked {method!r}, which this client did not declare")


class _Driver:
    """The client as `follow` (client/tasks.py) uses it: one leg at a time, and the answers to a round."""

    def __init__(self, client: Client, answers_for: Callable[[Round], Awaitable[dict[str, Any]]]) -> None:
        self.server_name = client.server_name
        self.request = client.request
        self.answers_for = answers_for


def _responses(round_: Round, answers: dict[str, Any]) -> dict[str, Any]:
    """The `inputResponses` of a round from the host's replies (every key asked must be answered)."""
    missing = [key for key in round_.input_requests if key not in answers]
    if missing:
        raise ClientError(f"answer every question before retrying; missing: {', '.join(missing)}")
    responses: dict[str, Any] = {}
    questions = {q.key: q for q in round_.questions()}
    for key in round_.input_requests:
        reply = answers[key]
        responses[key] = questions[key].answer(reply) if key in questions else reply
    return responses


def _read_outcome(future: asyncio.Future[Any]) -> None:
    """A handshake's failure is read here too, so that one nobody awaits any more is not logged as lost."""
    if not future.cancelled():
        future.exception()


class _ServesModern(Exception):
    """The handshake was refused by a server that took the late probe and serves 2026-07-28 (P144)."""


def _urls_asked(step: Round) -> Iterator[str]:
    """The URLs this round asks the user to open."""
    for ask in step.input_requests.values():
        params = ask.get("params") if isinstance(ask, dict) and ask.get("method") == "elicitation/create" else None
        if isinstance(params, dict) and params.get("mode") == "url" and isinstance(params.get("url"), str):
            yield params["url"]


__all__ = ["Client", "ClientError", "Declined", "InvalidReply", "Question", "Round"]
