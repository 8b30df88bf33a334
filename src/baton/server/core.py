"""`Server`: configuration, registration of handlers, and the dispatcher that answers one request.

Validation runs in the order of protocol.md P1: `_meta` (-32602) → headers (-32020) → version
(-32022) → method (-32601) → params. The dispatcher never touches sockets: transports hand it a
parsed `Message` and an `Exchange`, and get back a `Reply` (or a `Subscription` for
`subscriptions/listen`). The method handlers live in `methods.py`, the replay engine in `replay.py`.
"""

from __future__ import annotations

import contextlib
import difflib
import getpass
import inspect
import logging
import os
from collections.abc import Callable
from typing import Any, Literal, TypedDict, TypeVar, Unpack, overload
from urllib.parse import urlsplit

from ..protocol import headers as hdr
from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import META_SERVER_INFO, SUPPORTED_VERSIONS
from ..protocol.errors import INTERNAL_ERROR, McpError, method_not_found
from ..protocol.messages import Message, check_meta, check_version, error_response, result_response
from ..state.keys import KeyRing
from ..state.ledger import Ledger, LedgerError
from ..state.ledger_url import ledger_from_url
from ..state.seal import DEFAULT_MAX_BYTES, DEFAULT_TTL_S, Sealer
from ..state.store_url import parse_store_url
from .context import Context
from .exchange import Exchange, PrincipalHook, Reply, RequestInfo
from .form_check import check_forms
from .guard import Guard, ResourceAuth
from .handshake import REMOVED_METHODS, HandshakeEra, handshake_error, removed_method
from .methods import Methods
from .observe import instrument
from .outbound import Stream
from .parts import ConnectPart
from .problems import registering
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
from .replay import ReplayEngine
from .results import prompt_result, structured_tool_result, tool_result
from .scopes import required_for, scope_list
from .sessions import DEFAULT_SESSION_TTL_S, ServerSession, SessionSeal
from .signature import inspect_handler
from .single_use import SingleUse
from .startup import AUTH_SETTING, LEDGER_SETTING, ConfigurationError, check_startup, load_key_ring
from .subscriptions import ListenHub, Subscription

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


_TOOL_OPTIONS = frozenset(ToolOptions.__annotations__)


def _check_options(options: dict[str, Any], where: str) -> None:
    """Refuse an unknown option where it is written (at the decorator), with the closest known name."""
    for key in options:
        if key not in _TOOL_OPTIONS:
            close = difflib.get_close_matches(key, sorted(_TOOL_OPTIONS), n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f"; the options are {', '.join(sorted(_TOOL_OPTIONS))}"
            raise TypeError(f"{where}: unknown option {key!r}{hint}")


class Server:
    """An MCP server: stateless 2026-07-28, and 2025-11-25 sessions from the same handlers (protocol.md P28).
    Register handlers with the decorators, then serve it.

    `server.asgi()` gives the HTTP app; `baton serve file.py` runs it; `serve_stdio(server)` speaks stdio.
    `session_ttl_s` is how long a 2025-11-25 session id opens; `ask_timeout_s` how long a 2025-11-25
    request waits for the client's answer to one of its asks. `trace_arguments` puts tools' arguments on
    their spans (`gen_ai.tool.call.arguments`, docs/observability.md); off by default.

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
        trace_arguments: bool = False,
    ) -> None:
        if public_url is not None:
            _check_public_url(public_url)
        if isinstance(ledger, str):
            try:
                parse_store_url(ledger, "ledger")
            except ValueError as exc:
                raise ConfigurationError(str(exc), setting=LEDGER_SETTING) from None
        self.name = name
        self.version = version
        self.title = title
        self.instructions = instructions
        info: dict[str, Any] = {"name": name, "version": version}
        if title:
            info["title"] = title
        self._result_meta = {META_SERVER_INFO: info}
        self._keys = state_keys
        self.audience = audience or name
        self.state_ttl_s = state_ttl_s
        self.state_max_bytes = state_max_bytes
        self._sealer: Sealer | None = None
        if auth is not None and principal is not None:
            raise ConfigurationError(
                "give Server(auth=...) or Server(principal=...), not both: auth= already names the caller "
                "(<issuer>|<sub> of a verified token); for another identity, return a baton.server.exchange.Grant "
                "from your own principal hook instead",
                setting=AUTH_SETTING,
            )
        self.auth = auth  # the OAuth protected resource (HTTP only), see guard.py
        self._guard = Guard(self, auth.authenticate if auth is not None else principal)
        self.list_ttl_ms = list_ttl_ms
        # Lists that may differ per caller must not be shared by caches (protocol.md P18).
        self.cache_scope = cache_scope or ("private" if principal or auth else "public")
        self.page_size = page_size
        self._ledger = ledger
        self.single_use = single_use
        self.public_url = public_url  # where browsers reach this server (the connect kit's pages)
        self._connect = connect
        self.connect_declared = connect is not None  # the author gave a kit: it is in use (startup.py)
        self.session_ttl_s = session_ttl_s  # how long a 2025-11-25 session id opens (protocol.md P30)
        self.ask_timeout_s = ask_timeout_s  # how long a 2025-11-25 request waits for an answer (P29)
        self.trace_arguments = trace_arguments  # tool arguments on spans, off by default (protocol.md P64)
        self._sessions: SessionSeal | None = None
        self.tools: dict[str, RegisteredTool] = {}
        self.resources: dict[str, RegisteredResource] = {}
        self.templates: dict[str, RegisteredTemplate] = {}
        self.prompts: dict[str, RegisteredPrompt] = {}
        self.completion_handler: Handler | None = None
        self.hub = ListenHub()
        self._capabilities: dict[str, Any] | None = None
        self._warned: set[str] = set()
        self._checked: set[str] = set()  # transports check_startup passed for
        self._os_user: str | None = None
        self._single_use = SingleUse(lambda: self.ledger)
        engine = ReplayEngine(lambda: self.sealer, self._single_use, lambda: self.connect_kit, lambda: self.single_use)
        self._engine = engine  # telemetry gives it an observer (observe.py)
        self._methods = Methods(self, engine).table()
        self._handshake = HandshakeEra(self, self._methods)

    # -- configuration ------------------------------------------------------------------------------

    @property
    def key_ring(self) -> KeyRing:
        """The state key ring: as configured, else `BATON_STATE_KEYS`, else the data-directory key file
        (`ConfigurationError`, naming which, when it cannot be loaded)."""
        if self._keys is None:
            self._keys = load_key_ring()  # or a ConfigurationError naming the key file or $BATON_STATE_KEYS
            log.info("requestState keys: %s", self._keys.source)
        return self._keys

    @property
    def ledger(self) -> Ledger:
        """The single-use ledger: as configured (a Ledger or a URL), else `$BATON_LEDGER`, else the
        SQLite file in the data directory (one host; use `redis://…` for many)."""
        if not isinstance(self._ledger, Ledger):
            self._ledger = ledger_from_url(self.ledger_url or "sqlite:")
        return self._ledger

    @property
    def ledger_url(self) -> str | None:
        """The URL the single-use ledger is made from (None when it was given as a `Ledger`)."""
        if isinstance(self._ledger, Ledger):
            return None
        return self._ledger or os.environ.get("BATON_LEDGER") or "sqlite:"

    @property
    def has_principal_hook(self) -> bool:
        return self._guard.active

    def use_auth(self, auth: ResourceAuth) -> None:
        """Protect this server with `auth` after it was made (what `baton serve --auth-issuer` does); refused
        when it already has a principal hook or auth (`ConfigurationError`)."""
        if self._guard.active:
            raise ConfigurationError(
                "this server already names its callers (Server(principal=...) or Server(auth=...)); "
                "configure OAuth in one place only",
                setting=AUTH_SETTING,
            )
        self.auth = auth
        self._guard = Guard(self, auth.authenticate)
        if self.cache_scope == "public":
            self.cache_scope = "private"
        self._checked.clear()

    def check_startup(self, transport: Literal["http", "stdio"] = "http") -> None:
        """Refuse, with a `ConfigurationError` that says what to set, configuration that could only fail on
        a later request: keys that cannot be loaded, an unreachable ledger when single use is on, the
        connect kit without a public URL, or over HTTP without a principal hook (see `baton.server.startup`).

        `baton serve` and `server.asgi()` call it once the connect kit is mounted; call it yourself
        before serving the server another way.
        """
        if transport not in self._checked:  # until a handler is added or removed
            check_startup(self, transport)
            self._checked.add(transport)
        instrument(self)  # spans and metrics when OpenTelemetry is configured (protocol.md P60)

    @property
    def sealer(self) -> Sealer:
        if self._sealer is None:
            self._sealer = Sealer(self.key_ring, self.audience, ttl_s=self.state_ttl_s, max_bytes=self.state_max_bytes)
        return self._sealer

    @property
    def sessions(self) -> SessionSeal:
        """Mints and opens the sealed `Mcp-Session-Id` of 2025-11-25 sessions (under the state key ring)."""
        if self._sessions is None:
            self._sessions = SessionSeal(self.key_ring, self.audience, self.session_ttl_s)
        return self._sessions

    @property
    def has_connect_kit(self) -> bool:
        return self._connect is not None

    def mount_connect(self, kit: ConnectPart) -> None:
        """Mount the connect kit behind `ctx.secret` / `ctx.connect` (the serving layer mounts a default
        `baton.connect.ConnectKit` when the server was given none)."""
        if self._connect is not None and self._connect is not kit:
            raise ValueError("this server already has a connect kit")
        self._connect = kit

    @property
    def connect_kit(self) -> ConnectPart:
        """The mounted connect kit, attached to this server's key ring and public URL on first use."""
        if self._connect is None:
            raise ConfigurationError(
                "no connect kit is mounted: pass Server(connect=baton.connect.ConnectKit(...)), or serve the server"
                " (baton serve, server.asgi(), serve_stdio), which mounts the default one",
                setting="Server(connect=...)",
            )
        if not self._connect.attached:
            self._connect.attach(self.key_ring, self.public_url)
        return self._connect

    async def aclose(self) -> None:
        """Release what the server holds open (the ledger, the connect kit, the auth's HTTP client);
        transports call it at shutdown."""
        self.hub.shutdown()
        closer = getattr(self.auth, "aclose", None)  # optional on a ResourceAuth (OAuthResource has one)
        if closer is not None:
            await closer()
        self._single_use.cancel()
        if self._connect is not None:
            await self._connect.aclose()
        if isinstance(self._ledger, Ledger):
            with contextlib.suppress(LedgerError):
                await self._ledger.close()

    # -- registration -------------------------------------------------------------------------------

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
        tool = make_tool(
            fn,
            Context,
            name=options.get("name"),
            description=options.get("description"),
            title=options.get("title"),
            annotations=options.get("annotations"),
            input_schema=options.get("input_schema"),
            structured=options.get("structured"),
            meta=options.get("meta"),
        )
        check_forms(fn, tool.signature.context_param)  # the forms it asks, where its source names them (P97)
        finish = structured_tool_result if tool.output_schema is not None else tool_result
        context_param = tool.signature.context_param
        tool.flow = Flow("tools/call", fn, context_param, finish, tool_errors=True, single_use=single_use)
        tool.scopes = scopes
        return self._add(self.tools, "tools", "tool named", tool.name, tool)

    def resource_updated(self, uri: str) -> None:
        """Tell the 2025-11-25 sessions subscribed to `uri` that it changed (`notifications/resources/updated`)."""
        self.hub.updated(uri)

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
        needed = scope_list(scopes, "@server.resource(scopes=...)")

        def register(fn: F) -> F:
            registering(fn, f"resource {uri}", lambda: add(fn))
            return fn

        def add(fn: F) -> None:
            desc = description if description is not None else (inspect.getdoc(fn) or None)
            sig = inspect_handler(fn, Context)
            if is_template(uri):
                self.templates[uri] = RegisteredTemplate(
                    uri, name or fn.__name__, fn, sig, template_pattern(uri), title, desc, mime_type, ttl_ms, needed
                )
                self._changed("resources")
            else:
                resource = RegisteredResource(uri, name or fn.__name__, fn, sig, title, desc, mime_type, ttl_ms, needed)
                self._add(self.resources, "resources", "resource", uri, resource)

        return register

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
        prompt = RegisteredPrompt(name or fn.__name__, fn, sig, prompt_arguments(sig), title, desc)
        prompt.flow = Flow("prompts/get", fn, sig.context_param, lambda value: prompt_result(value, desc))
        prompt.scopes = needed
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
        self.completion_handler = fn
        self._capabilities = None
        return fn

    def find_resource(self, uri: str) -> tuple[RegisteredResource | RegisteredTemplate, dict[str, Any]] | None:
        """The resource `uri` names, or the first template it matches with its variables; None if neither."""
        resource = self.resources.get(uri)
        if resource is not None:
            return resource, {}
        for template in self.templates.values():
            variables = template.match(uri)
            if variables is not None:
                return template, dict(variables)
        return None

    def _add(self, registry: dict[str, R], kind: str, what: str, key: str, item: R) -> R:
        """Put `item` in a registry under a key not yet taken; open listen streams are told the list changed."""
        if key in registry:
            raise ValueError(f"a {what} {key!r} is already registered")
        registry[key] = item
        self._changed(kind)
        return item

    def _changed(self, kind: str) -> None:
        self._capabilities = None
        self._checked.clear()
        self.hub.publish(kind)

    def run(self, transport: Literal["stdio", "http"] = "stdio", *, host: str = "127.0.0.1", port: int = 8000) -> None:
        """Serve this server from `python server.py`, as `baton serve` does: the same start-up checks (a
        refusal is one line and exit status 2), the same banner (one line on stdio), a clean end (Ctrl-C is
        exit status 130, no traceback). `transport="stdio"` (the default, what a host starts) or `"http"`
        (Streamable HTTP at http://host:port/mcp). Blocks; exits the process with a non-zero status.
        """
        from ..serve.run import run  # the serving layer, when asked for, as `asgi` imports it

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
        `baton-instance` response header) to `$BATON_INSTANCE`, else `host:pid`.
        """
        # The one import from a layer above: the serving layer, imported when asked for (architecture.md).
        from ..serve.http import DEFAULT_MAX_BODY, HttpApp

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

    # -- capabilities -------------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities, derived from what is registered (cached until that changes)."""
        if self._capabilities is None:
            caps: dict[str, Any] = {}
            if self.tools:
                caps["tools"] = {"listChanged": True}
            if self.resources or self.templates:
                caps["resources"] = {"listChanged": True}
            if self.prompts:
                caps["prompts"] = {"listChanged": True}
            if self.completion_handler is not None:
                caps["completions"] = {}
            self._capabilities = caps
        return self._capabilities

    def offered_lists(self) -> frozenset[str]:
        caps = self.capabilities()
        return frozenset(k for k in ("tools", "resources", "prompts") if k in caps)

    # -- dispatch -----------------------------------------------------------------------------------

    async def handle(self, msg: Message, exchange: Exchange) -> Reply | Subscription:
        """Answer one request. Notifications are the transport's business and never reach here."""
        rid = msg.id
        # Unauthenticated HTTP is "anonymous", the default, unless the request needs scopes: a handler
        # given scopes at run time is then refused (403) as in a session, never silently open (protocol.md P41).
        if self._guard.active or exchange.info.transport != "http" or required_for(self, msg.method, msg.params):
            refusal = await self._guard.admit(msg, exchange)  # 401 / 403 (guard.py)
            if refusal is not None:
                return refusal
        try:
            params = msg.params
            version, raw_caps = check_meta(params)
            headers = exchange.info.headers
            if headers is not None:
                hdr.check_standard(headers, msg.method, params, version)
            if version not in SUPPORTED_VERSIONS:
                check_version(version)
            method = self._methods.get(msg.method)
            if method is None:
                if msg.method == "subscriptions/listen" and self.offered_lists():
                    return self.hub.open(rid, params, self.offered_lists())
                raise removed_method(msg.method) if msg.method in REMOVED_METHODS else method_not_found(msg.method)
            caps = ClientCapabilities.parse(raw_caps)
            if caps.sampling or caps.roots:
                self._warn_deprecated(caps.deprecated)
            result = await method(msg, exchange, caps)
        except McpError as exc:
            return Reply(error_response(rid, exc), exc.code)
        except Exception as exc:
            error = _internal(msg.method, exc)
            return Reply(error_response(rid, error), INTERNAL_ERROR)
        meta = result.get("_meta")
        result["_meta"] = {**self._result_meta, **meta} if meta else self._result_meta
        return Reply(result_response(rid, result))

    # -- the 2025-11-25 era (protocol.md P28) --------------------------------------------------------

    def initialize(self, msg: Message, exchange: Exchange) -> tuple[Reply, ServerSession | None]:
        """Answer a handshake-era `initialize` (the transport has set `exchange.principal`): the reply, and
        the session it opened (None when the request was refused). HTTP gives the session a sealed id."""
        try:
            result, session = self._handshake.initialize(msg, exchange.principal)
            if exchange.info.transport == "http":
                session.id = self.sessions.mint(session)
        except McpError as exc:
            return Reply(error_response(msg.id, exc), exc.code), None
        # No deprecation warning here: sampling and roots are current features of 2025-11-25.
        return Reply(result_response(msg.id, result)), session

    async def handle_handshake(self, msg: Message, exchange: Exchange, session: ServerSession, stream: Stream) -> Reply:
        """Answer one request of an initialized 2025-11-25 session; asks go out on `stream` (protocol.md P29).

        Errors keep the 2025-11-25 codes (`handshake_error`); the transport sends every one with HTTP 200.
        """
        try:
            result = await self._handshake.handle(msg, exchange, session, stream)
        except McpError as exc:
            error = handshake_error(exc)
            return Reply(error_response(msg.id, error), error.code)
        except Exception as exc:
            error = _internal(msg.method, exc)
            return Reply(error_response(msg.id, error), INTERNAL_ERROR)
        return Reply(result_response(msg.id, result))

    def _warn_deprecated(self, names: tuple[str, ...]) -> None:
        for name in names:
            if name not in self._warned:
                self._warned.add(name)
                log.warning(
                    "a client declared the %r capability, deprecated in MCP 2026-07-28 (SEP-2577); "
                    "it still works, but plan to move off it",
                    name,
                )

    async def principal_of(self, info: RequestInfo) -> str:
        """Who is calling, from the transport only (never from what the client says about itself).

        The hook may raise `Unauthenticated` to refuse the request (HTTP 401).
        """
        return (await self._guard.grant(info)).principal

    async def admit(self, msg: Message | None, exchange: Exchange) -> Reply | None:
        """Authenticate the request and check its scopes: None to go on, else the 401/403 reply (guard.py)."""
        return await self._guard.admit(msg, exchange)

    def os_principal(self) -> str:
        """`os:<user>`, the principal of a stdio caller."""
        if self._os_user is None:
            self._os_user = "os:" + getpass.getuser()
        return self._os_user


def _internal(method: str, exc: Exception) -> McpError:
    """The -32603 of a request that failed outside any handler. A `ConfigurationError` (keys that cannot be
    loaded, no connect kit) names the setting to fix; anything else is logged and hidden."""
    if isinstance(exc, ConfigurationError):
        log.error("cannot answer %s: %s", method, exc)
        return McpError(INTERNAL_ERROR, f"Internal error while answering {method}: the server needs {exc.setting}")
    log.exception("internal error answering %s", method, exc_info=exc)
    return McpError(INTERNAL_ERROR, f"Internal error while answering {method}")


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
