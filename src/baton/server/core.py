"""`Server`: the author's API: configuration (`server.settings`), and registering tools, resources, prompts and
the completion handler. What the transports call (dispatch, the handshake era, keys, sessions, the ledger)
is the server's `Runtime` (`server.runtime`, runtime.py); serving it is `asgi()`, `run()` or `baton serve`.
"""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import logging
import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypedDict, TypeVar, Unpack, overload
from urllib.parse import urlsplit

from ..protocol import skills as skills_wire
from ..protocol.extensions import checked_extension, checked_extensions
from ..protocol.tasks import TASK_SUPPORT, TASKS, TaskSupport
from ..state.keys import KeyRing
from ..state.ledger import Ledger
from ..state.seal import DEFAULT_MAX_BYTES, DEFAULT_TTL_S
from ..state.store_url import parse_store_url
from .apps import APP_MIME_TYPE, APPS, App, Visibility, app_tool_meta
from .ask_app import ANSWER_SCHEMA, ANSWER_TOOL, ASK_APP, answer_question
from .card import ServerCard
from .context import Context
from .exchange import PrincipalHook
from .form_check import check_forms
from .guard import ResourceAuth
from .ladder import HostQuirk, WhenUnasked, check_when_unasked, quirk_table, with_confirm_argument
from .lifespan import Lifespan, LifespanFactory
from .observe import instrument
from .parts import ConnectPart
from .problems import refuse, registering
from .registry import (
    Flow,
    Handler,
    RegisteredPrompt,
    RegisteredResource,
    RegisteredTemplate,
    RegisteredTool,
    is_template,
    make_tool,
    prompt_arguments,
    template_pattern,
)
from .results import prompt_result, structured_tool_result, tool_result
from .runtime import Runtime
from .scopes import scope_list
from .sessions import DEFAULT_SESSION_TTL_S
from .settings import ServerSettings
from .signature import inspect_handler
from .skill_folder import FolderProblems, ServedSkill, SkillFile, read_skills
from .skills import SkillSet
from .startup import AUTH_SETTING, LEDGER_SETTING, ConfigurationError, check_startup
from .tasks import DEFAULT_LEASE_MS, DEFAULT_POLL_INTERVAL_MS, DEFAULT_TASK_LIMIT, DEFAULT_TASK_TTL_MS

log = logging.getLogger("baton.server")
F = TypeVar("F", bound=Handler)
R = TypeVar("R")


class ToolOptions(TypedDict, total=False):
    """The options of `@server.tool(...)` and `server.add_tool(fn, ...)`."""

    name: str
    """The tool's name on the wire (default: the function's name)."""
    description: str
    """Default: the function's docstring."""
    title: str
    annotations: dict[str, Any]
    """Tool annotations (`readOnlyHint`, `destructiveHint`, ...), sent as they are."""
    input_schema: dict[str, Any]
    """An explicit input schema instead of the one derived from the parameters."""
    structured: bool
    """Whether the result is structured content (default: derived from the return annotation)."""
    meta: dict[str, Any]
    """`_meta` of the tool's description."""
    single_use: bool
    """Each round of its flows runs at most once (a ledger claims every round token before user code runs)."""
    scopes: list[str] | str
    """OAuth scopes a call needs besides the server-wide ones (HTTP with `Server(auth=...)`; 403 without)."""
    app: App
    """An app page the host renders for the tool's result (MCP Apps, docs/apps.md): registers its `ui://`
    resource, stamps the tool's `_meta.ui` and declares the extension (protocol.md P185, P186)."""
    visibility: list[Visibility]
    """With `app`: who may call the tool, `["model", "app"]` (the default when omitted), or `["app"]` for a
    tool only the page calls; hosts hide an app-only tool from the model."""
    when_unasked: WhenUnasked
    """What a question the client cannot show does (default: the server's, itself "error" by default):
    "error" (-32021 / a tool error); "page": the call ends with a link to the server's own page, where the
    user answers, and the next identical call goes on (protocol.md P145; HTTP serving with a public URL);
    "app": as "page", except that in a host that renders MCP Apps a form question is shown in Baton's ask
    app with the result, answered there, and the app calls the tool again (the ask app becomes the tool's
    app; protocol.md P213); or "argument": the tool gains an optional boolean `confirm` argument that
    answers its `ctx.confirm` where the client cannot show it. A model can fill it in without asking: see
    docs/asking-in-every-host.md (protocol.md P139)."""
    task: TaskSupport
    """Whether a call may run as a task of the Tasks extension (`io.modelcontextprotocol/tasks`, declared by
    the server once a tool says so): "optional" makes it a task when the client declared the extension, and
    runs it in the request otherwise; "required" refuses a client that did not (-32021). See docs/tasks.md
    (protocol.md P165)."""
    task_start: Literal["call", "handler"]
    """Where a call becomes a task: at the "call" (the default), or where the handler awaits
    `ctx.start_task()` ("handler"): its questions before that are asked in the request itself (P167)."""


_TOOL_OPTIONS = frozenset(ToolOptions.__annotations__)
_FASTMCP_OPTIONS = {  # FastMCP's tool options with no Baton equivalent: what to write instead (protocol.md P130)
    "tags": "Baton has no tags: drop it, or put them in meta={...}",
    "output_schema": "Baton derives the output schema from the return annotation: structured=True or False",
    "version": "Baton versions the server, not a tool: Server(name, version)",
    "icons": "Baton publishes no tool icons: drop it",
    "timeout": "bound the work in the handler (asyncio.timeout); a question's wait is timeout_s= on the ask",
    "auth": "a tool's OAuth scopes are scopes=[...], with Server(auth=...)",
    "run_in_thread": "Baton calls a plain def on the event loop: write async def, and asyncio.to_thread for "
    "blocking work",
}


class ResourceOptions(TypedDict, total=False):
    """The options of `@server.resource(uri, ...)` and `server.add_resource(fn, uri, ...)`."""

    name: str | None
    title: str | None
    description: str | None
    mime_type: str | None
    ttl_ms: int | None
    scopes: list[str] | str | None


def _check_options(options: dict[str, Any], where: str) -> None:
    """Refuse an unknown option where it is written (at the decorator), with the closest known name."""
    for key in options:
        if key in _FASTMCP_OPTIONS:
            raise TypeError(f"{where}: unknown option {key!r} (FastMCP's); {_FASTMCP_OPTIONS[key]}")
        if key not in _TOOL_OPTIONS:
            close = difflib.get_close_matches(key, sorted(_TOOL_OPTIONS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the options are {', '.join(sorted(_TOOL_OPTIONS))}"
            raise TypeError(f"{where}: unknown option {key!r}{hint}")


class Server:
    """An MCP server: stateless 2026-07-28, and 2025-11-25 sessions from the same handlers (protocol.md P28).
    Register handlers with the decorators, then serve it.

    `server.asgi()` gives the HTTP app; `baton serve file.py` runs it; `serve_stdio(server)` speaks stdio.
    `session_ttl_s` is how long a 2025-11-25 session id opens; `ask_timeout_s` how long a 2025-11-25
    request waits for the client's answer to one of its asks, `resume_window_s` how long such a question
    still waits once the client closed its stream, for a `GET` with `Last-Event-ID` (protocol.md P111).
    `trace_arguments` puts tools' arguments on their spans (`gen_ai.tool.call.arguments`,
    docs/observability.md); off by default. `lifespan` is an async context manager factory
    (`@contextlib.asynccontextmanager`, called with the server, or with no argument) run once per process
    around serving: open a database pool there; handlers read what it yields as `ctx.lifespan` (protocol.md P132).
    `task_limit` is how many tasks not yet ended one principal may hold (protocol.md P208).
    `task_ttl_ms` is how long a task of the Tasks extension is kept after it was made, `task_poll_interval_ms`
    how often clients are told to poll it, `task_lease_ms` how long a task's running round is held by its
    instance without a heartbeat before another takes it over (docs/tasks.md). `when_unasked` is every tool's
    default for a question the client cannot show ("error", "page", "app" or "argument": see
    `ToolOptions.when_unasked`); `host_quirks=True` turns on the table of what known hosts really show
    (`baton.HOST_QUIRKS`), or give your own rows (protocol.md P138-P140). `card` publishes a server card
    over HTTP (`baton.ServerCard`, a draft; protocol.md P194).

    What can be judged here is refused here (`ConfigurationError`): a `public_url` that is not an
    http(s) URL, a malformed ledger URL. The rest is judged when serving starts (`check_startup`).
    """

    def __init__(
        self,
        name: str,
        version: str = "0.1.0",
        *,
        title: str | None = None,
        instructions: str | None = None,
        state_keys: KeyRing | None = None,
        audience: str | None = None,
        state_ttl_s: int = DEFAULT_TTL_S,
        state_max_bytes: int = DEFAULT_MAX_BYTES,
        principal: PrincipalHook | None = None,
        auth: ResourceAuth | None = None,
        list_ttl_ms: int = 60_000,
        cache_scope: Literal["public", "private"] | None = None,
        page_size: int = 100,
        ledger: Ledger | str | None = None,
        single_use: bool = False,
        public_url: str | None = None,
        connect: ConnectPart | None = None,
        session_ttl_s: int = DEFAULT_SESSION_TTL_S,
        ask_timeout_s: float = 600.0,
        resume_window_s: float = 30.0,
        trace_arguments: bool = False,
        lifespan: LifespanFactory | None = None,
        when_unasked: WhenUnasked = "error",
        host_quirks: bool | Sequence[HostQuirk] = False,
        extensions: Mapping[str, Mapping[str, Any] | None] | None = None,
        card: ServerCard | None = None,
        task_ttl_ms: int = DEFAULT_TASK_TTL_MS,
        task_poll_interval_ms: int = DEFAULT_POLL_INTERVAL_MS,
        task_lease_ms: int = DEFAULT_LEASE_MS,
        task_limit: int = DEFAULT_TASK_LIMIT,
    ) -> None:
        if public_url is not None:
            _check_public_url(public_url)
        if isinstance(ledger, str):
            try:
                parse_store_url(ledger, "ledger")
            except ValueError as exc:
                raise ConfigurationError(str(exc), setting=LEDGER_SETTING) from None
        if auth is not None and principal is not None:
            raise ConfigurationError(
                "give Server(auth=...) or Server(principal=...), not both: auth= already names the caller "
                "(<issuer>|<sub> of a verified token); for another identity, return a baton.server.exchange.Grant "
                "from your own principal hook instead",
                setting=AUTH_SETTING,
            )
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        self.settings = ServerSettings(
            audience=audience or name,
            state_ttl_s=state_ttl_s,
            state_max_bytes=state_max_bytes,
            auth=auth,
            list_ttl_ms=list_ttl_ms,
            # Lists that may differ per caller must not be shared by caches (protocol.md P18).
            cache_scope=cache_scope or ("private" if principal or auth else "public"),
            page_size=page_size,
            single_use=single_use,
            public_url=public_url,
            session_ttl_s=session_ttl_s,
            ask_timeout_s=ask_timeout_s,
            resume_window_s=resume_window_s,
            trace_arguments=trace_arguments,
            when_unasked=check_when_unasked(when_unasked, "Server"),
            host_quirks=quirk_table(host_quirks),
            card=card,
            task_ttl_ms=_positive_ms(task_ttl_ms, "task_ttl_ms"),
            task_poll_interval_ms=_positive_ms(task_poll_interval_ms, "task_poll_interval_ms"),
            task_lease_ms=_positive_ms(task_lease_ms, "task_lease_ms"),
            task_limit=_positive_ms(task_limit, "task_limit", "a whole number"),
        )
        self.tools: dict[str, RegisteredTool] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.templates: dict[str, RegisteredTemplate] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.skills = SkillSet()  # served by `add_skills` (protocol.md P180)

        self._apps: dict[str, App] = {}  # the app pages of its tools, by ui:// URI (MCP Apps, apps.py)
        try:  # the extensions this server offers, shown under capabilities.extensions (protocol.md P141)
            self.extensions: dict[str, dict[str, Any]] = checked_extensions(extensions, "Server(extensions=...)")
        except ValueError as exc:
            raise ConfigurationError(str(exc), setting="extensions") from None
        # What the transports need (dispatch, keys, sessions, the ledger): not the author's API.
        self.runtime = Runtime(self, state_keys=state_keys, principal=principal, ledger=ledger, connect=connect)
        if lifespan is not None:
            self.runtime.lifespan = Lifespan(lifespan, self)

    # -- configuration ------------------------------------------------------------------------------

    def use_auth(self, auth: ResourceAuth) -> None:
        """Protect this server with `auth` after it was made (what `baton serve --auth-issuer` does); refused
        when it already has a principal hook or auth (`ConfigurationError`)."""
        if self.runtime.has_principal_hook:
            raise ConfigurationError(
                "this server already names its callers (Server(principal=...) or Server(auth=...)); "
                "configure OAuth in one place only",
                setting=AUTH_SETTING,
            )
        self.settings.auth = auth
        if self.settings.cache_scope == "public":
            self.settings.cache_scope = "private"
        self.runtime.use_auth(auth)

    def check_startup(self, transport: Literal["http", "stdio"] = "http") -> None:
        """Refuse, with a `ConfigurationError` that says what to set, configuration that could only fail on
        a later request: keys that cannot be loaded, an unreachable ledger when single use is on, the
        connect kit without a public URL, or over HTTP without a principal hook (see `baton.server.startup`).

        `baton serve` and `server.asgi()` call it once the connect kit is mounted; call it yourself
        before serving the server another way.
        """
        if transport not in self.runtime.checked:  # until a handler is added or removed
            check_startup(self, transport)
            self.runtime.checked.add(transport)
        instrument(self)  # spans and metrics when OpenTelemetry is configured (protocol.md P60)

    async def aclose(self) -> None:
        """Release what the server holds open (the ledger, the connect kit, the auth's HTTP client);
        the transports call it at shutdown."""
        await self.runtime.aclose()

    # -- registration -------------------------------------------------------------------------------

    def add_extension(self, name: str, settings: Mapping[str, Any] | None = None) -> None:
        """Declare that this server offers extension `name` (`reverse.dns/name`) with these settings (`{}` for
        None), replacing an earlier declaration of it; refused with a `ConfigurationError` if malformed.

        Handlers use it only where `ctx.extension(name)` says the client declared it too (protocol.md P141).
        """
        try:
            self.extensions[name] = checked_extension(name, settings, "add_extension")
        except ValueError as exc:
            raise ConfigurationError(str(exc), setting="extensions") from None
        self.runtime.changed(None)

    def add_skills(self, folder: str | os.PathLike[str]) -> list[str]:
        """Serve the skills in `folder` (SEP-2640): one skill (the folder holds a SKILL.md) or one per subfolder.
        Returns their names. The server declares `io.modelcontextprotocol/skills` (with `directoryRead`),
        answers `skills/list`, `skills/get` and `resources/directory/read`, lists each SKILL.md in
        `resources/list` and serves every file with `resources/read` (docs/skills.md).

        The files are read now, once. A missing folder, a SKILL.md without valid frontmatter, a name that
        is not its folder's, a symbolic link: every problem is refused at once, each at its file (under
        `baton serve`, with the problems of the handlers; otherwise `HandlerProblems`).
        """
        try:
            found = read_skills(folder)
        except FolderProblems as exc:
            refuse(exc.problems, "see docs/skills.md for the layout of a skills folder")
            return []
        taken = self.skills.names() & {skill.name for skill in found}
        if taken:
            refuse([(str(folder), f"already served, a skill name is served once: {', '.join(sorted(taken))}")])
            return []
        for skill in found:
            resources = [self._skill_resource(skill, file) for file in skill.files]
            self.skills.add(skill, resources)
            self.resources.setdefault(skill.uri, resources[0])  # its SKILL.md, in resources/list
        # protocol.md P180: the extension, with the directory method, declared by serving skills.
        self.add_extension(skills_wire.EXTENSION, {"directoryRead": True})
        self._changed("resources")
        return [skill.name for skill in found]

    @staticmethod
    def _skill_resource(skill: ServedSkill, file: SkillFile) -> RegisteredResource:
        content = file.content
        fn = lambda: content  # noqa: E731 (the file's content, read once at start-up)
        manifest = file.path == skills_wire.SKILL_FILE
        name = skill.name if manifest else f"{skill.name}/{file.path}"
        description = skill.frontmatter.get("description") if manifest else None
        return RegisteredResource(
            uri=file.uri,
            name=name,
            fn=fn,
            signature=inspect_handler(fn, Context),
            description=description,
            mime_type=file.mime_type,
        )

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(self, fn: None = None, /, **options: Unpack[ToolOptions]) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, **options: Unpack[ToolOptions]) -> Any:
        """Register a tool, as `@server.tool` or `@server.tool(name=..., ...)` (see `ToolOptions`).

        Its parameters (except the Context) become its input schema.
        """
        if fn is not None:
            if not callable(fn) or options:
                raise TypeError("@server.tool takes only keyword options: @server.tool(name='...')")
            registering(fn, f"tool {getattr(fn, '__name__', '?')}", lambda: self.add_tool(fn))
            return fn
        _check_options(dict(options), "@server.tool")

        def register(f: F) -> F:
            # protocol.md P97: while `baton serve` loads its target, every tool's problems are gathered.
            registering(f, f"tool {options.get('name') or f.__name__}", lambda: self.add_tool(f, **options))
            return f

        return register

    def add_tool(self, fn: Handler, /, **options: Unpack[ToolOptions]) -> RegisteredTool:
        """Register a tool now (options as for `@server.tool`); open listen streams are told the list changed."""
        _check_options(dict(options), "add_tool")
        single_use = options.pop("single_use", False)
        scopes = scope_list(options.pop("scopes", None), "@server.tool(scopes=...)")
        own_rung = "when_unasked" in options
        when_unasked = check_when_unasked(options.pop("when_unasked", self.settings.when_unasked), "@server.tool")
        app, visibility = options.pop("app", None), options.pop("visibility", None)
        if when_unasked == "app" and app is not None:  # protocol.md P213: the host shows the tool's own app
            if own_rung:
                raise ValueError(
                    "when_unasked='app' shows questions in Baton's ask app, which is the tool's app: a tool with "
                    "its own app=... takes when_unasked='page'"
                )
            when_unasked = "page"
        meta = options.get("meta")
        if app is not None:
            meta = self._app_meta(app, meta, visibility)
        elif visibility is not None:
            raise ValueError("visibility=[...] says who may call a tool's app page: give app=App(...) with it")
        tool = make_tool(
            fn,
            Context,
            name=options.get("name"),
            description=options.get("description"),
            title=options.get("title"),
            annotations=options.get("annotations"),
            input_schema=options.get("input_schema"),
            structured=options.get("structured"),
            meta=meta,
        )
        check_forms(fn, tool.signature.context_param)  # the forms it asks, where its source names them (P97)
        finish = structured_tool_result if tool.output_schema is not None else tool_result
        context_param = tool.signature.context_param
        if context_param is None:  # a tool without a Context cannot ask: nothing to declare (P139)
            when_unasked = "error"
        schema, meta = tool.input_schema, tool.meta
        if when_unasked == "app":  # protocol.md P213: the ask app is its app, with the app-only answer tool
            app = ASK_APP
            meta = self._app_meta(app, meta, None)
        if when_unasked == "argument":  # protocol.md P139: the optional `confirm` argument, published
            schema = with_confirm_argument(tool.name, schema)
        task, task_start = self._task_options(options.get("task"), options.get("task_start"))
        flow = Flow(
            method="tools/call",
            handler=fn,
            context_param=context_param,
            finish=finish,
            tool_errors=True,
            single_use=single_use,
            when_unasked=when_unasked,
            task=task,
            task_start=task_start,
        )
        tool = dataclasses.replace(tool, input_schema=schema, meta=meta, flow=flow, scopes=scopes)
        self._add(self.tools, "tools", "tool named", tool.name, tool)
        if app is not None and app.uri not in self._apps:  # P185: one resource per App, shared by its tools
            self.add_resource(
                app.reader(),
                app.uri,
                name=app.name or app.uri,
                title=app.title,
                description=app.description,
                mime_type=APP_MIME_TYPE,
            )
            page = self.resources[app.uri]
            self.resources[app.uri] = dataclasses.replace(page, meta=app.resource_meta() or None)
            self._apps[app.uri] = app
            if APPS not in self.extensions:
                self.add_extension(APPS)
        if when_unasked == "app" and ANSWER_TOOL not in self.tools:
            self.add_tool(
                answer_question,
                name=ANSWER_TOOL,
                app=ASK_APP,
                visibility=["app"],
                when_unasked="error",
                input_schema=ANSWER_SCHEMA,
            )
        return tool

    def _app_meta(self, app: App, meta: dict[str, Any] | None, visibility: Any) -> dict[str, Any]:
        """The `_meta` of a tool with `app`, once the app is known servable (ValueError naming the problems)."""
        if not isinstance(app, App):
            raise TypeError(f"app= takes a baton.App(...), not {type(app).__name__}")
        problems = app.problems()
        if problems:
            raise ValueError("; ".join(problems))
        known = self._apps.get(app.uri)
        if known is not app and (known is not None or app.uri in self.resources):
            raise ValueError(f"the uri {app.uri} already names another resource: give each App its own ui:// URI")
        return app_tool_meta(meta, app, visibility)

    def _task_options(self, task: Any, task_start: Any) -> tuple[str | None, str]:
        """A tool's task options, checked; the tasks extension declared once a tool runs as a task (P165)."""
        if task_start is not None and task_start not in ("call", "handler"):
            raise TypeError(f'@server.tool: task_start must be "call" or "handler", not {task_start!r}')
        if task is None:
            if task_start is not None:
                raise TypeError('@server.tool: task_start needs task="optional" or task="required"')
            return None, "call"
        if task not in TASK_SUPPORT:
            hint = ' (FastMCP\'s task=True is task="optional")' if task is True else ""
            raise TypeError(f'@server.tool: task must be "optional" or "required", not {task!r}{hint}')
        if TASKS not in self.extensions:
            self.add_extension(TASKS)
        return task, task_start or "call"

    def resource_updated(self, uri: str) -> None:
        """Tell the 2025-11-25 sessions subscribed to `uri` that it changed (`notifications/resources/updated`)."""
        self.runtime.hub.updated(uri)

    def remove_tool(self, name: str) -> None:
        del self.tools[name]
        self._changed("tools")

    def resource(
        self,
        uri: str,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        mime_type: str | None = None,
        ttl_ms: int | None = None,
        scopes: list[str] | str | None = None,
    ) -> Callable[[F], F]:
        """Register a resource, or a resource template when `uri` holds `{variables}`; `scopes` are the
        OAuth scopes a read needs besides the server-wide ones."""
        if not isinstance(uri, str):
            raise TypeError("@server.resource needs the resource's URI: @server.resource('scheme://...')")
        options: ResourceOptions = {"name": name, "title": title, "description": description}
        options |= {"mime_type": mime_type, "ttl_ms": ttl_ms, "scopes": scopes}

        def register(fn: F) -> F:
            registering(fn, f"resource {uri}", lambda: self.add_resource(fn, uri, **options))
            return fn

        return register

    def add_resource(
        self, fn: Handler, /, uri: str, **options: Unpack[ResourceOptions]
    ) -> RegisteredResource | RegisteredTemplate:
        """Register a resource (or a template, when `uri` holds `{variables}`) now, options as for
        `@server.resource`; open listen streams are told the list changed."""
        needed = scope_list(options.get("scopes"), "@server.resource(scopes=...)")
        description = options.get("description")
        desc = description if description is not None else (inspect.getdoc(fn) or None)
        sig = inspect_handler(fn, Context)
        name, title = options.get("name") or fn.__name__, options.get("title")
        mime_type, ttl_ms = options.get("mime_type"), options.get("ttl_ms")
        if is_template(uri):
            template = RegisteredTemplate(
                uri_template=uri,
                name=name,
                fn=fn,
                signature=sig,
                pattern=template_pattern(uri),
                title=title,
                description=desc,
                mime_type=mime_type,
                ttl_ms=ttl_ms,
                scopes=needed,
            )
            return self._add(self.templates, "resources", "resource template", uri, template)
        resource = RegisteredResource(
            uri=uri,
            name=name,
            fn=fn,
            signature=sig,
            title=title,
            description=desc,
            mime_type=mime_type,
            ttl_ms=ttl_ms,
            scopes=needed,
        )
        return self._add(self.resources, "resources", "resource", uri, resource)

    def remove_resource(self, uri: str) -> None:
        """Unregister the resource or template registered under `uri` (KeyError if none is)."""
        if uri in self.resources:
            del self.resources[uri]
        else:
            del self.templates[uri]
        self._changed("resources")

    @overload
    def prompt(self, fn: F, /) -> F: ...
    @overload
    def prompt(
        self,
        name: str | None = None,
        /,
        *,
        title: str | None = None,
        description: str | None = None,
        scopes: list[str] | str | None = None,
    ) -> Callable[[F], F]: ...

    def prompt(
        self,
        name: Any = None,
        /,
        *,
        title: str | None = None,
        description: str | None = None,
        scopes: list[str] | str | None = None,
    ) -> Any:
        """Register a prompt, as `@server.prompt`, `@server.prompt()` or `@server.prompt("name", ...)`.

        Its string parameters become its arguments.
        """
        if callable(name):
            if title is not None or description is not None or scopes is not None:
                raise TypeError("@server.prompt: give options in the call, @server.prompt(title=...)")
            registering(name, f"prompt {getattr(name, '__name__', '?')}", lambda: self.add_prompt(name))
            return name
        if name is not None and not isinstance(name, str):
            raise TypeError(f"@server.prompt: the name must be a string, not {type(name).__name__}")

        def register(fn: F) -> F:
            add = lambda: self.add_prompt(fn, name=name, title=title, description=description, scopes=scopes)  # noqa: E731
            registering(fn, f"prompt {name or fn.__name__}", add)
            return fn

        return register

    def add_prompt(
        self,
        fn: Handler,
        /,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        scopes: list[str] | str | None = None,
    ) -> RegisteredPrompt:
        needed = scope_list(scopes, "@server.prompt(scopes=...)")
        sig = inspect_handler(fn, Context)
        desc = description if description is not None else (inspect.getdoc(fn) or None)
        prompt = RegisteredPrompt(
            name=name or fn.__name__,
            fn=fn,
            signature=sig,
            arguments=prompt_arguments(sig),
            title=title,
            description=desc,
            flow=Flow(
                method="prompts/get",
                handler=fn,
                context_param=sig.context_param,
                finish=lambda value: prompt_result(value, desc),
            ),
            scopes=needed,
        )
        return self._add(self.prompts, "prompts", "prompt named", prompt.name, prompt)

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self._changed("prompts")

    @overload
    def completion(self, fn: F, /) -> F: ...
    @overload
    def completion(self, fn: None = None, /) -> Callable[[F], F]: ...

    def completion(self, fn: Any = None, /) -> Any:
        """Register the `completion/complete` handler, as `@server.completion` or `@server.completion()`:
        `(ref, argument, context) -> list[str]` (or the completion object)."""
        if fn is None:
            return self.completion
        if not callable(fn):
            raise TypeError("@server.completion takes no arguments: @server.completion or @server.completion()")
        self.runtime.completion_handler = fn
        self.runtime.changed(None)
        return fn

    def _add(self, registry: dict[str, R], kind: str, what: str, key: str, item: R) -> R:
        """Put `item` in a registry under a key not yet taken; open listen streams are told the list changed."""
        if key in registry:
            raise ValueError(f"a {what} {key!r} is already registered")
        registry[key] = item
        self._changed(kind)
        return item

    def _changed(self, kind: str) -> None:
        self.runtime.changed(kind)

    def run(self, transport: Literal["stdio", "http"] = "stdio", *, host: str = "127.0.0.1", port: int = 8000) -> None:
        """Serve this server from `python server.py`, as `baton serve` does: the same start-up checks (a
        refusal is one line and exit status 2), the same banner (one line on stdio), a clean end (Ctrl-C is
        exit status 130, no traceback). `transport="stdio"` (the default, what a host starts) or `"http"`
        (Streamable HTTP at http://host:port/mcp). Blocks; exits the process with a non-zero status.
        """
        from ..serve.run import run  # noqa: PLC0415 (the serving layer, above this one (architecture.md))

        code = run(self, transport, host, port)
        if code:
            raise SystemExit(code)

    def asgi(
        self,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body_bytes: int | None = None,
        instance: str | None = None,
    ) -> Any:
        """The Streamable HTTP ASGI app for this server (`baton.serve.http.HttpApp`), mountable in any
        ASGI framework.

        `allowed_hosts` defaults to loopback names (DNS rebinding protection; `["*"]` admits any),
        `allowed_origins` to loopback origins; `max_body_bytes` to 4 MiB; `instance` (the
        `baton-instance` response header) to `$BATON_INSTANCE`, and no header when that is unset (protocol.md P229).
        """
        # The one import from a layer above: the serving layer, imported when asked for (architecture.md).
        from ..serve.http import DEFAULT_MAX_BODY, HttpApp  # noqa: PLC0415 (the serving layer, above this one (architecture.md))

        app = HttpApp(
            self,
            path=path,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            max_body_bytes=max_body_bytes or DEFAULT_MAX_BODY,
            instance=instance,
        )
        self.check_startup("http")  # once the app has mounted the default connect kit
        return app


def _positive_ms(value: Any, name: str, what: str = "a whole number of milliseconds") -> int:
    """A duration in integer milliseconds (or a count), at least 1 (the wire carries integers)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        said = f"{name} must be {what}, at least 1, not {value!r}"
        raise ConfigurationError(said, setting=name)
    return value


def _check_public_url(url: str) -> None:
    """A public URL is where browsers reach this server: an absolute http(s) URL, without query or fragment."""
    try:
        parts = urlsplit(url)
        valid = parts.scheme in ("http", "https") and bool(parts.hostname) and not parts.query and not parts.fragment
    except ValueError:
        valid = False
    if not valid:
        raise ConfigurationError(
            f"public_url {url!r} is not where browsers reach this server: give an absolute http(s) URL such as "
            "'https://mcp.example.com', without a query or fragment",
            setting="Server(public_url=...)",
        )
