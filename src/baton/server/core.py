"""`Server`: registries, configuration, and the dispatcher that answers one request at a time.

Validation follows digest §2.5: `_meta` (-32602) → headers (-32020) → version (-32022) → method
(-32601) → params. The dispatcher never touches sockets: transports hand it a parsed `Message`
and an `Exchange`, and get back a `Reply` (or a `Subscription` for `subscriptions/listen`).
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import getpass
import inspect
import logging
import os
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from types import CoroutineType
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import orjson

from ..protocol import headers as hdr
from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import LOG_LEVELS, META_LOG_LEVEL, META_SERVER_INFO, SUPPORTED_VERSIONS
from ..protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    McpError,
    invalid_params,
    method_not_found,
)
from ..protocol.messages import Message, check_meta, check_version, log_level
from ..state.background import Retries
from ..state.keys import KeyRing
from ..state.ledger import ClaimStatus, Ledger, LedgerError, LedgerUnavailable, ledger_from_url, token_id
from ..state.seal import DEFAULT_MAX_BYTES, DEFAULT_TTL_S, FlowState, InvalidState, Sealer
from .context import CapabilityMissing, Context, Emit, Suspended
from .registry import (
    Handler,
    Prompt,
    Resource,
    ResourceTemplate,
    Tool,
    is_template,
    make_tool,
    prompt_arguments,
    template_pattern,
)
from .results import ToolError, error_result, prompt_result, resource_contents, structured_tool_result, tool_result
from .signature import ArgumentError, inspect_handler
from .subscriptions import ListenHub, Subscription

if TYPE_CHECKING:
    from ..connect import ConnectKit

log = logging.getLogger("baton.server")
F = TypeVar("F", bound=Handler)
INVALID_STATE_MESSAGE = "Invalid or expired requestState"
LEDGER_UNAVAILABLE_MESSAGE = "The single-use ledger is unavailable, so the request was not run; try again later"
LEDGER_RECORD_MESSAGE = (
    "The request ran, but the single-use ledger could not record its result; "
    "retry the same request later to receive it (it will not be run again)"
)
LEDGER_SKEW_S = 60  # clock skew allowed between instances when a ledger entry expires


@dataclass(slots=True)
class RequestInfo:
    """What the transport knows about who sent a request; the principal hook reads it."""

    transport: Literal["http", "stdio"]
    headers: hdr.Headers | None = None
    client: tuple[str, int] | None = None


class Unauthenticated(Exception):
    """Raised by a principal hook: no acceptable credentials. HTTP answers 401 with `www_authenticate`."""

    def __init__(self, message: str, *, error: str = "invalid_token") -> None:
        super().__init__(message)
        self.message = message
        safe = message.replace('"', "'")
        self.www_authenticate = f'Bearer error="{error}", error_description="{safe}"'


@dataclass(slots=True)
class Exchange:
    """One request's link to its transport: where it came from and how to notify on its stream."""

    info: RequestInfo
    emit: Emit | None = None
    principal: str = "anonymous"


@dataclass(slots=True)
class Reply:
    """A JSON-RPC response to one request, as a dict, with the JSON-RPC error code if it is an error.

    `www_authenticate` is set when the request was refused for want of credentials (HTTP 401).
    """

    body: dict[str, Any]
    code: int | None = None
    www_authenticate: str | None = None


PrincipalHook = Callable[[RequestInfo], "str | Awaitable[str | None] | None"]


class Server:
    """A stateless MCP 2026-07-28 server. Register handlers with the decorators, then serve it.

    `server.asgi()` gives the HTTP app; `baton serve file.py` runs it; `serve_stdio(server)` speaks stdio.
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
        list_ttl_ms: int = 60_000,
        cache_scope: Literal["public", "private"] | None = None,
        page_size: int = 100,
        ledger: Ledger | str | None = None,
        single_use: bool = False,
        public_url: str | None = None,
        connect: ConnectKit | None = None,
    ) -> None:
        self.name = name
        self.version = version
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
        self._principal = principal
        self.list_ttl_ms = list_ttl_ms
        # Lists that may differ per caller must not be shared by caches (digest §11.1).
        self.cache_scope = cache_scope or ("private" if principal else "public")
        self.page_size = page_size
        self._ledger = ledger
        self.single_use = single_use
        self.public_url = public_url  # where browsers reach this server (the connect kit's pages)
        self._connect = connect
        self.tools: dict[str, Tool] = {}
        self.resources: dict[str, Resource] = {}
        self.templates: dict[str, ResourceTemplate] = {}
        self.prompts: dict[str, Prompt] = {}
        self._completion: Handler | None = None
        self.hub = ListenHub()
        self._capabilities: dict[str, Any] | None = None
        self._warned: set[str] = set()
        self._os_user: str | None = None
        self._connect_kit_getter: Callable[[], ConnectKit] = lambda: self.connect_kit
        self._retries = Retries()  # replies still to be recorded in the ledger
        self._methods: dict[str, Callable[[Message, Exchange, ClientCapabilities], Awaitable[Any]]] = {
            "server/discover": self._discover,
            "tools/list": self._lister("tools", "tools", lambda: self.tools),
            "tools/call": self._tools_call,
            "resources/list": self._lister("resources", "resources", lambda: self.resources),
            "resources/templates/list": self._lister("resources", "resourceTemplates", lambda: self.templates),
            "resources/read": self._resources_read,
            "prompts/list": self._lister("prompts", "prompts", lambda: self.prompts),
            "prompts/get": self._prompts_get,
            "completion/complete": self._complete,
        }

    # -- configuration ------------------------------------------------------------------------------

    @property
    def key_ring(self) -> KeyRing:
        """The state key ring: as configured, else `BATON_STATE_KEYS`, else the data-directory key file."""
        if self._keys is None:
            self._keys = KeyRing.default()
            log.info("requestState keys: %s", self._keys.source)
        return self._keys

    @property
    def ledger(self) -> Ledger:
        """The single-use ledger: as configured (a Ledger or a URL), else `$BATON_LEDGER`, else the
        SQLite file in the data directory (one host; use `redis://…` for many)."""
        if not isinstance(self._ledger, Ledger):
            self._ledger = ledger_from_url(self._ledger or os.environ.get("BATON_LEDGER") or "sqlite:")
        return self._ledger

    @property
    def connect_kit(self) -> ConnectKit:
        """The connect kit (`ctx.secret`, the `/connect/` pages): as configured, else the default one."""
        if self._connect is None:
            from ..connect import ConnectKit  # the connect layer sits above this one

            self._connect = ConnectKit()
        if not self._connect.attached:
            self._connect.attach(self.key_ring, self.public_url)
        return self._connect

    async def aclose(self) -> None:
        """Release what the server holds open (the ledger, the connect kit); transports call it at shutdown."""
        self.hub.shutdown()
        self._retries.cancel_all()
        if self._connect is not None:
            await self._connect.aclose()
        if isinstance(self._ledger, Ledger):
            with contextlib.suppress(LedgerError):
                await self._ledger.close()

    @property
    def sealer(self) -> Sealer:
        if self._sealer is None:
            self._sealer = Sealer(self.key_ring, self.audience, ttl_s=self.state_ttl_s, max_bytes=self.state_max_bytes)
        return self._sealer

    # -- registration -------------------------------------------------------------------------------

    @overload
    def tool(self, fn: F, /) -> F: ...
    @overload
    def tool(
        self,
        fn: None = None,
        /,
        *,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        input_schema: dict[str, Any] | None = None,
        structured: bool | None = None,
        meta: dict[str, Any] | None = None,
        single_use: bool = False,
    ) -> Callable[[F], F]: ...

    def tool(self, fn: Any = None, /, **options: Any) -> Any:
        """Register a tool. Its parameters (except the Context) become its input schema."""
        if fn is not None:
            self.add_tool(fn)
            return fn

        def register(f: F) -> F:
            self.add_tool(f, **options)
            return f

        return register

    def add_tool(
        self,
        fn: Handler,
        *,
        name: str | None = None,
        description: str | None = None,
        title: str | None = None,
        annotations: dict[str, Any] | None = None,
        input_schema: dict[str, Any] | None = None,
        structured: bool | None = None,
        meta: dict[str, Any] | None = None,
        single_use: bool = False,
    ) -> Tool:
        """Register a tool now; open listen streams are told the list changed.

        `single_use=True` makes each round of its flows run at most once (a ledger claims every round
        token before user code runs; duplicates get the recorded reply).
        """
        tool = make_tool(
            fn,
            Context,
            name=name,
            description=description,
            title=title,
            annotations=annotations,
            input_schema=input_schema,
            structured=structured,
            meta=meta,
        )
        tool.single_use = single_use
        if tool.name in self.tools:
            raise ValueError(f"a tool named {tool.name!r} is already registered")
        self.tools[tool.name] = tool
        self._changed("tools")
        return tool

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
    ) -> Callable[[F], F]:
        """Register a resource, or a resource template when `uri` holds `{variables}`."""

        def register(fn: F) -> F:
            desc = description if description is not None else (inspect.getdoc(fn) or None)
            if is_template(uri):
                sig = inspect_handler(fn, Context)
                self.templates[uri] = ResourceTemplate(
                    uri, name or fn.__name__, fn, sig, template_pattern(uri), title, desc, mime_type, ttl_ms
                )
            else:
                if uri in self.resources:
                    raise ValueError(f"a resource {uri!r} is already registered")
                sig = inspect_handler(fn, Context)
                self.resources[uri] = Resource(uri, name or fn.__name__, fn, sig, title, desc, mime_type, ttl_ms)
            self._changed("resources")
            return fn

        return register

    def prompt(
        self, name: str | None = None, *, title: str | None = None, description: str | None = None
    ) -> Callable[[F], F]:
        """Register a prompt; its string parameters become its arguments."""

        def register(fn: F) -> F:
            self.add_prompt(fn, name=name, title=title, description=description)
            return fn

        return register

    def add_prompt(
        self,
        fn: Handler,
        *,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
    ) -> Prompt:
        sig = inspect_handler(fn, Context)
        desc = description if description is not None else (inspect.getdoc(fn) or None)
        prompt = Prompt(name or fn.__name__, fn, sig, prompt_arguments(sig), title, desc)
        if prompt.name in self.prompts:
            raise ValueError(f"a prompt named {prompt.name!r} is already registered")
        self.prompts[prompt.name] = prompt
        self._changed("prompts")
        return prompt

    def remove_prompt(self, name: str) -> None:
        del self.prompts[name]
        self._changed("prompts")

    def completion(self, fn: F) -> F:
        """Register the `completion/complete` handler: `(ref, argument, context) -> list[str]`."""
        self._completion = fn
        self._capabilities = None
        return fn

    def _changed(self, kind: str) -> None:
        self._capabilities = None
        self.hub.publish(kind)

    def asgi(
        self,
        *,
        path: str = "/mcp",
        allowed_hosts: list[str] | None = None,
        allowed_origins: list[str] | None = None,
        max_body_bytes: int | None = None,
        instance: str | None = None,
    ) -> Any:
        """The Streamable HTTP ASGI app for this server, mountable in any ASGI framework.

        `allowed_hosts` defaults to loopback names (DNS rebinding protection; `["*"]` admits any),
        `allowed_origins` to loopback origins; `max_body_bytes` to 4 MiB; `instance` (the
        `baton-instance` response header) to `$BATON_INSTANCE`, else `host:pid`.
        """
        from ..serve.http import DEFAULT_MAX_BODY, HttpApp  # the serving layer sits above this one

        return HttpApp(
            self,
            path=path,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            max_body_bytes=max_body_bytes or DEFAULT_MAX_BODY,
            instance=instance,
        )

    # -- capabilities -------------------------------------------------------------------------------

    def capabilities(self) -> dict[str, Any]:
        """The server capabilities, derived from what is registered (cached until that changes)."""
        if self._capabilities is None:
            self._capabilities = self._derive_capabilities()
        return self._capabilities

    def _derive_capabilities(self) -> dict[str, Any]:
        caps: dict[str, Any] = {}
        if self.tools:
            caps["tools"] = {"listChanged": True}
        if self.resources or self.templates:
            caps["resources"] = {"listChanged": True}
        if self.prompts:
            caps["prompts"] = {"listChanged": True}
        if self._completion is not None:
            caps["completions"] = {}
        return caps

    def offered_lists(self) -> frozenset[str]:
        caps = self.capabilities()
        return frozenset(k for k in ("tools", "resources", "prompts") if k in caps)

    # -- dispatch -----------------------------------------------------------------------------------

    async def handle(self, msg: Message, exchange: Exchange) -> Reply | Subscription:
        """Answer one request. Notifications are the transport's business and never reach here."""
        rid = msg.id
        if self._principal is not None or exchange.info.transport != "http":  # else "anonymous", the default
            try:
                exchange.principal = await self.principal_of(exchange.info)
            except Unauthenticated as exc:
                error = McpError(INVALID_REQUEST, f"Unauthorized: {exc.message}")
                body = {"jsonrpc": "2.0", "id": rid, "error": error.to_dict()}
                return Reply(body, INVALID_REQUEST, exc.www_authenticate)
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
                raise method_not_found(msg.method)
            caps = ClientCapabilities.parse(raw_caps)
            if caps.sampling or caps.roots:
                self._warn_deprecated(caps.deprecated)
            result = await method(msg, exchange, caps)
        except McpError as exc:
            return Reply({"jsonrpc": "2.0", "id": rid, "error": exc.to_dict()}, exc.code)
        except Exception:
            log.exception("internal error answering %s", msg.method)
            error = McpError(INTERNAL_ERROR, f"Internal error while answering {msg.method}")
            return Reply({"jsonrpc": "2.0", "id": rid, "error": error.to_dict()}, INTERNAL_ERROR)
        meta = result.get("_meta")
        result["_meta"] = {**self._result_meta, **meta} if meta else self._result_meta
        return Reply({"jsonrpc": "2.0", "id": rid, "result": result})

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
        if self._principal is not None:
            who = self._principal(info)
            if inspect.isawaitable(who):
                who = await who
            if who:
                return who
            return "anonymous"
        if info.transport == "stdio":
            if self._os_user is None:
                self._os_user = "os:" + getpass.getuser()
            return self._os_user
        return "anonymous"

    def _cacheable(self, result: dict[str, Any], ttl_ms: int | None = None) -> dict[str, Any]:
        result["ttlMs"] = self.list_ttl_ms if ttl_ms is None else ttl_ms
        result["cacheScope"] = self.cache_scope
        return result

    def _page(self, params: dict[str, Any], items: list[dict[str, Any]], key: str) -> dict[str, Any]:
        cursor = params.get("cursor")
        start = 0
        if cursor is not None:
            try:
                start = int(base64.urlsafe_b64decode(cursor.encode()).decode()) if cursor else 0
            except (binascii.Error, ValueError, AttributeError, UnicodeDecodeError):
                raise invalid_params(f"Invalid params: cursor {cursor!r} is not one this server gave") from None
            if start < 0 or start > len(items):
                raise invalid_params(f"Invalid params: cursor {cursor!r} is out of range")
        end = start + self.page_size
        result: dict[str, Any] = {"resultType": "complete", key: items[start:end]}
        if end < len(items):
            result["nextCursor"] = base64.urlsafe_b64encode(str(end).encode()).decode()
        return self._cacheable(result)

    def _require(self, kind: str, method: str) -> None:
        if kind not in self.capabilities():
            raise method_not_found(method)

    async def _discover(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(SUPPORTED_VERSIONS),
            "capabilities": self.capabilities(),
        }
        if self.instructions:
            result["instructions"] = self.instructions
        return self._cacheable(result)

    def _lister(
        self, kind: str, key: str, registry: Callable[[], dict[str, Any]]
    ) -> Callable[[Message, Exchange, ClientCapabilities], Awaitable[dict[str, Any]]]:
        """The handler of one list method: a page of what the registry holds, if the capability is offered."""

        async def handler(msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
            self._require(kind, msg.method)
            return self._page(msg.params, [item.describe() for item in registry().values()], key)

        return handler

    def _tools_call(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> Awaitable[dict[str, Any]]:
        # A plain function that returns the round's coroutine: one coroutine less per call (the hot path).
        params = msg.params
        name = params.get("name")
        tool = self.tools.get(name) if isinstance(name, str) else None
        if tool is None:  # (a server with a tool offers tools: the capability check is needed only here)
            self._require("tools", msg.method)
            if not isinstance(name, str):
                raise invalid_params('Invalid params: tools/call needs "name" (a string)')
            raise invalid_params(f"Unknown tool: {name}")
        name = tool.name
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        elif not isinstance(arguments, dict):
            raise invalid_params('Invalid params: "arguments" must be an object')
        headers = ex.info.headers
        if headers is not None and tool.header_params:
            hdr.check_params(headers, arguments, tool.header_params)
        try:
            kwargs = tool.signature.bind(arguments)
        except ArgumentError as exc:
            # Ambiguity A9: arguments that fail the input schema are a tool error the model can fix.
            return _ready(error_result(f"Invalid arguments for tool {name}: {exc}"))
        structured = tool.output_schema is not None
        return self._run_flow(
            msg,
            ex,
            caps,
            tool.fn,
            tool.signature.context_param,
            kwargs,
            name,
            arguments,
            structured_tool_result if structured else tool_result,
            tool_errors=True,
            single_use=tool.single_use or self.single_use,
        )

    async def _resources_read(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        self._require("resources", msg.method)
        uri = msg.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params('Invalid params: resources/read needs "uri" (a string)')
        resource: Resource | ResourceTemplate | None = self.resources.get(uri)
        kwargs: dict[str, Any] = {}
        if resource is None:
            for template in self.templates.values():
                variables = template.match(uri)
                if variables is not None:
                    resource, kwargs = template, variables
                    break
        if resource is None:
            raise invalid_params(f"Resource not found: {uri}", {"uri": uri})
        if resource.signature.checks:
            try:
                kwargs = resource.signature.bind(kwargs)
            except ArgumentError as exc:
                raise invalid_params(f"Invalid params: {exc}", {"uri": uri}) from None
        found = resource

        def finish(value: Any) -> dict[str, Any]:
            contents = resource_contents(uri, value, found.mime_type)
            return self._cacheable({"resultType": "complete", "contents": contents}, found.ttl_ms or 0)

        return await self._run_flow(
            msg, ex, caps, resource.fn, resource.signature.context_param, kwargs, uri, {}, finish
        )

    async def _prompts_get(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        self._require("prompts", msg.method)
        name = msg.params.get("name")
        if not isinstance(name, str):
            raise invalid_params('Invalid params: prompts/get needs "name" (a string)')
        prompt = self.prompts.get(name)
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {name}")
        arguments = msg.params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise invalid_params('Invalid params: prompt "arguments" must be an object of strings')
        try:
            kwargs = prompt.signature.bind(arguments)
        except ArgumentError as exc:
            raise invalid_params(f"Invalid params for prompt {name}: {exc}") from None
        return await self._run_flow(
            msg,
            ex,
            caps,
            prompt.fn,
            prompt.signature.context_param,
            kwargs,
            name,
            arguments,
            lambda value: prompt_result(value, prompt.description),
        )

    async def _complete(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        if self._completion is None:
            raise method_not_found(msg.method)
        ref, argument = msg.params.get("ref"), msg.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise invalid_params('Invalid params: completion/complete needs "ref" and "argument" objects')
        context = msg.params.get("context") or {}
        value = self._completion(ref, argument, context)
        if inspect.isawaitable(value):
            value = await value
        completion = value if isinstance(value, dict) else {"values": list(value or [])[:100]}
        return {"resultType": "complete", "completion": completion}

    # -- the replay engine's driver -----------------------------------------------------------------

    def _run_flow(
        self,
        msg: Message,
        ex: Exchange,
        caps: ClientCapabilities,
        fn: Handler,
        context_param: str | None,
        kwargs: dict[str, Any],
        target: str,
        arguments: dict[str, Any],
        finish: Callable[[Any], dict[str, Any]],
        *,
        tool_errors: bool = False,
        single_use: bool = False,
    ) -> Coroutine[Any, Any, dict[str, Any]]:
        """The coroutine that runs one round of a handler that may ask; it answers its result or `input_required`.

        The request's own checks (inputResponses, requestState) run now, before the coroutine is made.
        """
        params = msg.params
        responses = params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise invalid_params('Invalid params: "inputResponses" must be an object mapping keys to answers')
        token = params.get("requestState")
        principal = ex.principal
        digest = request_binding(msg.method, target, arguments)
        if "requestState" in params:  # present means it must open: null or a number fails closed too
            try:
                state = self.sealer.open(token, principal, digest)
            except InvalidState as exc:
                log.warning("rejected requestState for %s %r: %s", msg.method, target, exc.reason)
                raise McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE) from None
        else:
            state = FlowState()
        play = self._play(msg, ex, caps, fn, context_param, kwargs, target, state, digest, finish, tool_errors)
        if single_use and "requestState" in params:
            return self._once_only(str(token), principal, state.expires, play)
        return play

    async def _play(
        self,
        msg: Message,
        ex: Exchange,
        caps: ClientCapabilities,
        fn: Handler,
        context_param: str | None,
        kwargs: dict[str, Any],
        target: str,
        state: FlowState,
        digest: bytes,
        finish: Callable[[Any], dict[str, Any]],
        tool_errors: bool,
    ) -> dict[str, Any]:
        """Run the handler once for this round, with the journal opened from the state."""
        params = msg.params
        principal = ex.principal
        responses = params.get("inputResponses", {})
        meta = params["_meta"]
        level = log_level(params) if META_LOG_LEVEL in meta else None
        if level is not None and level not in LOG_LEVELS:
            raise invalid_params(f"Invalid params: unknown log level {level!r}")
        ctx = Context(
            msg.method,
            msg.id,
            principal,
            caps,
            meta,
            state.journal,
            responses,
            "requestState" in params,
            ex.emit,
            level,
            state.flow_id,
            self._connect_kit_getter,
        )
        if context_param is not None:
            kwargs[context_param] = ctx
        failure: Exception | None = None
        value: Any = None
        try:
            value = fn(**kwargs)
            if type(value) is CoroutineType or inspect.isawaitable(value):  # an async def handler, usually
                value = await value
        except Suspended:
            pass
        except Exception as exc:
            failure = exc
        # Whatever the handler did with a suspension, pending asks win: an ask never fails open.
        if ctx._error is not None:
            raise ctx._error
        if ctx._asks:
            state.round += 1
            pending: dict[str, str] = {}
            requests: dict[str, Any] = {}
            for key, ask in ctx._asks.items():
                pending[key] = ask.digest
                requests[key] = ask.request
            state.journal.pending = pending
            return {
                "resultType": "input_required",
                "inputRequests": requests,
                "requestState": self.sealer.seal(state, principal, digest),
            }
        if failure is not None:
            return self._failure(failure, msg.method, target, tool_errors)
        return finish(value)

    async def _once_only(
        self, token: str, principal: str, expires: int, play: Coroutine[Any, Any, dict[str, Any]]
    ) -> dict[str, Any]:
        """Single use (design.md §5): claim the round token in the ledger before any user code runs.

        The first claimant runs the round and records its reply (result, `input_required` or error);
        a duplicate by the same principal gets that reply again, or a state-only `input_required`
        while the round is still running; another principal is refused; no ledger, no run.
        """
        ledger = self.ledger
        tid = token_id(token)
        try:
            claim = await ledger.claim(tid, principal, expires + LEDGER_SKEW_S)
        except LedgerUnavailable as exc:
            play.close()
            log.error("single-use ledger unavailable: %s", exc)
            raise McpError(INTERNAL_ERROR, LEDGER_UNAVAILABLE_MESSAGE) from None
        if claim.status is not ClaimStatus.FRESH:
            play.close()
            if claim.status is ClaimStatus.FOREIGN:
                raise McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE)
            if claim.status is ClaimStatus.IN_PROGRESS:
                return {"resultType": "input_required", "requestState": token}  # retry shortly
            return _replayed(claim.result or b"{}")
        try:
            reply = {"r": await play}
        except McpError as exc:
            reply = {"e": exc.to_dict()}
        except BaseException:
            with contextlib.suppress(LedgerError):
                await ledger.release(tid, principal)  # no reply to replay: the round may run again
            raise
        recorded = orjson.dumps(reply)
        try:
            await ledger.record(tid, principal, recorded, expires + LEDGER_SKEW_S)
        except LedgerError as exc:
            log.error("single-use ledger could not record a round that ran: %s", exc)
            if isinstance(exc, LedgerUnavailable):
                # The round ran: keep trying to record its reply, so that a retry receives it, never a rerun.
                self._record_later(tid, principal, recorded, expires + LEDGER_SKEW_S)
            raise McpError(INTERNAL_ERROR, LEDGER_RECORD_MESSAGE) from None
        return _replayed(recorded)

    def _record_later(self, tid: bytes, principal: str, recorded: bytes, expires_at: float) -> None:
        async def attempt() -> bool:
            try:
                await self.ledger.record(tid, principal, recorded, expires_at)
            except LedgerUnavailable:
                return False
            except LedgerError as exc:
                log.error("gave up recording a round's reply: %s", exc)
                return True
            log.info("recorded a round's reply once the single-use ledger was back")
            return True

        self._retries.keep_trying("record a round's reply", attempt, expires_at)

    def _failure(self, exc: Exception, method: str, target: str, tool_errors: bool) -> dict[str, Any]:
        if isinstance(exc, (McpError, CapabilityMissing)):
            raise exc
        if tool_errors and isinstance(exc, (ToolError, ValueError)):
            return error_result(str(exc))
        log.error("%s %r raised", method, target, exc_info=exc)
        if tool_errors:
            return error_result(f"Tool {target} failed with an internal error ({type(exc).__name__})")
        raise McpError(INTERNAL_ERROR, f"Internal error while answering {method} {target}")


async def _ready(result: dict[str, Any]) -> dict[str, Any]:
    """A result already known, as the coroutine a method handler returns."""
    return result


def _replayed(recorded: bytes) -> dict[str, Any]:
    """A recorded single-use reply: the result again, or the same error raised again."""
    reply = orjson.loads(recorded)
    if "e" in reply:
        error = reply["e"]
        raise McpError(error["code"], error["message"], error.get("data"))
    return dict(reply["r"])


def request_binding(method: str, target: str, arguments: dict[str, Any]) -> bytes:
    """What a requestState is bound to: the method, its target and the canonical arguments, length-prefixed.

    These bytes go into AES-GCM's associated data as they are (GHASH is cheaper than a hash first).
    """
    prefix = _BINDING_PREFIXES.get((method, target))
    if prefix is None:
        m, t = method.encode(), target.encode()
        prefix = len(m).to_bytes(4, "big") + m + len(t).to_bytes(4, "big") + t
        if len(_BINDING_PREFIXES) >= _BINDING_PREFIXES_MAX:
            _BINDING_PREFIXES.clear()
        _BINDING_PREFIXES[(method, target)] = prefix
    return prefix + orjson.dumps(arguments, option=orjson.OPT_SORT_KEYS)


_BINDING_PREFIXES: dict[tuple[str, str], bytes] = {}  # by (method, target): the same few come again and again
_BINDING_PREFIXES_MAX = 1024
