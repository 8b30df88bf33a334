"""The handlers of the methods a server answers: discovery, the lists (paged), `tools/call`,
`resources/read`, `prompts/get` and `completion/complete`.

Each handler checks its params and resolves its target in the server's registries; the three that
may ask hand a `Flow` to the replay engine. `tools/call` is the hot path: it returns the round's
coroutine rather than awaiting it, one coroutine less per call.
"""

from __future__ import annotations

import base64
import binascii
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..protocol import headers as hdr
from ..protocol.capabilities import ClientCapabilities
from ..protocol.constants import ADVERTISED_VERSIONS
from ..protocol.errors import ResourceNotFound, invalid_params, method_not_found
from ..protocol.messages import Message
from .exchange import Exchange
from .ladder import CONFIRM_ARGUMENT, handler_arguments
from .registry import Flow
from .replay import ReplayEngine
from .results import error_result, ready, resource_contents
from .signature import ArgumentError
from .skills import skill_methods

if TYPE_CHECKING:
    from .core import Server

MethodHandler = Callable[[Message, Exchange, ClientCapabilities], Awaitable[dict[str, Any]]]


class Methods:
    """One server's method handlers, by method name (`table()`)."""

    def __init__(self, server: Server, engine: ReplayEngine) -> None:
        self.server = server
        self.engine = engine

    def table(self) -> dict[str, MethodHandler]:
        s = self.server
        return {
            "server/discover": self.discover,
            "tools/list": self._lister("tools", "tools", lambda: s.tools),
            "tools/call": self.tools_call,
            "resources/list": self._lister("resources", "resources", lambda: s.resources),
            "resources/templates/list": self._lister("resources", "resourceTemplates", lambda: s.templates),
            "resources/read": self.resources_read,
            "prompts/list": self._lister("prompts", "prompts", lambda: s.prompts),
            "prompts/get": self.prompts_get,
            "completion/complete": self.complete,
            **skill_methods(self),  # the skills extension's methods (protocol.md P180)
        }

    # -- results that caches may keep ----------------------------------------------------------------

    def cacheable(self, result: dict[str, Any], ttl_ms: int | None = None) -> dict[str, Any]:
        result["ttlMs"] = self.server.settings.list_ttl_ms if ttl_ms is None else ttl_ms
        result["cacheScope"] = self.server.settings.cache_scope
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
        end = start + self.server.settings.page_size
        result: dict[str, Any] = {"resultType": "complete", key: items[start:end]}
        if end < len(items):
            result["nextCursor"] = base64.urlsafe_b64encode(str(end).encode()).decode()
        return self.cacheable(result)

    def _require(self, kind: str, method: str) -> None:
        if kind not in self.server.runtime.capabilities():
            raise method_not_found(method)

    # -- the methods ----------------------------------------------------------------------------------

    async def discover(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        result: dict[str, Any] = {
            "resultType": "complete",
            "supportedVersions": list(ADVERTISED_VERSIONS),
            "capabilities": self.server.runtime.capabilities(),
        }
        if self.server.instructions:
            result["instructions"] = self.server.instructions
        return self.cacheable(result)

    def _lister(self, kind: str, key: str, registry: Callable[[], dict[str, Any]]) -> MethodHandler:
        """The handler of one list method: a page of what the registry holds, if the capability is offered."""

        async def handler(msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
            self._require(kind, msg.method)
            return self._page(msg.params, [item.describe() for item in registry().values()], key)

        return handler

    def tools_call(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> Awaitable[dict[str, Any]]:
        # A plain function that returns the round's coroutine: one coroutine less per call (the hot path).
        params = msg.params
        name = params.get("name")
        tool = self.server.tools.get(name) if isinstance(name, str) else None
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
        rung = tool.flow.when_unasked if tool.flow is not None else "error"
        # protocol.md P139: the argument rung's `confirm` is the Context's to read, not the handler's.
        if rung == "argument" and not isinstance(arguments.get(CONFIRM_ARGUMENT, False), bool):
            said = f"Invalid arguments for tool {name}: {CONFIRM_ARGUMENT} must be true or false"
            return ready(error_result(said))
        try:
            kwargs = tool.signature.bind(arguments if rung != "argument" else handler_arguments(rung, arguments))
        except ArgumentError as exc:
            # protocol.md P17: arguments that fail the input schema are a tool error the model can fix.
            return ready(error_result(f"Invalid arguments for tool {name}: {exc}"))
        assert tool.flow is not None  # set when the server registered it
        return self.engine.run(tool.flow, name, arguments, kwargs, msg, ex, caps)

    async def resources_read(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        self._require("resources", msg.method)
        uri = msg.params.get("uri")
        if not isinstance(uri, str):
            raise invalid_params('Invalid params: resources/read needs "uri" (a string)')
        found_target = self.server.runtime.find_resource(uri)
        if found_target is None:
            raise ResourceNotFound(uri)
        resource, kwargs = found_target
        if resource.signature.checks:
            try:
                kwargs = resource.signature.bind(kwargs)
            except ArgumentError as exc:
                raise invalid_params(f"Invalid params: {exc}", {"uri": uri}) from None
        found = resource

        def finish(value: Any) -> dict[str, Any]:
            contents = resource_contents(uri, value, found.mime_type)
            return self.cacheable({"resultType": "complete", "contents": contents}, found.ttl_ms or 0)

        flow = Flow(
            method=msg.method, handler=resource.fn, context_param=resource.signature.context_param, finish=finish
        )
        return await self.engine.run(flow, uri, {}, kwargs, msg, ex, caps)

    async def prompts_get(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        self._require("prompts", msg.method)
        name = msg.params.get("name")
        if not isinstance(name, str):
            raise invalid_params('Invalid params: prompts/get needs "name" (a string)')
        prompt = self.server.prompts.get(name)
        if prompt is None:
            raise invalid_params(f"Unknown prompt: {name}")
        arguments = msg.params.get("arguments") or {}
        if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
            raise invalid_params('Invalid params: prompt "arguments" must be an object of strings')
        try:
            kwargs = prompt.signature.bind(arguments)
        except ArgumentError as exc:
            raise invalid_params(f"Invalid params for prompt {name}: {exc}") from None
        assert prompt.flow is not None  # set when the server registered it
        return await self.engine.run(prompt.flow, name, arguments, kwargs, msg, ex, caps)

    async def complete(self, msg: Message, ex: Exchange, caps: ClientCapabilities) -> dict[str, Any]:
        completion = self.server.runtime.completion_handler
        if completion is None:
            raise method_not_found(msg.method)
        ref, argument = msg.params.get("ref"), msg.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise invalid_params('Invalid params: completion/complete needs "ref" and "argument" objects')
        context = msg.params.get("context") or {}
        problem = _completion_problem(ref, argument, context)
        if problem is not None:
            raise invalid_params(f"Invalid params: {problem}")
        value = completion(ref, argument, context)
        if inspect.isawaitable(value):
            value = await value
        result = value if isinstance(value, dict) else {"values": list(value or [])[:100]}
        return {"resultType": "complete", "completion": result}


_REF_MEMBER = {"ref/prompt": "name", "ref/resource": "uri"}


def _completion_problem(ref: dict[str, Any], argument: dict[str, Any], context: Any) -> str | None:
    """What is wrong with `completion/complete` params, by the schema's shape (protocol.md P107); None if nothing.
    The author's handler may then rely on `ref`, `argument` and `context.arguments` holding strings."""
    member = _REF_MEMBER.get(str(ref.get("type")))
    if member is None:
        return 'ref.type must be "ref/prompt" or "ref/resource"'
    if not isinstance(ref.get(member), str):
        return f"ref.{member} must be a string"
    if not isinstance(argument.get("name"), str) or not isinstance(argument.get("value"), str):
        return "argument needs a string name and a string value"
    arguments = context.get("arguments", {}) if isinstance(context, dict) else None
    if not isinstance(arguments, dict) or not all(isinstance(v, str) for v in arguments.values()):
        return "context.arguments must map names to strings"
    return None
