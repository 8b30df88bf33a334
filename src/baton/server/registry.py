"""What a server offers: tools, resources, resource templates and prompts, with their wire descriptions,
and for each handler the `Flow` the replay engine runs it by."""

from __future__ import annotations

import dataclasses
import inspect
import re
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, get_type_hints

from ..protocol.headers import header_param_specs
from .results import ToolResult
from .signature import Signature, compile_type, inspect_handler, schema_checker

Handler = Callable[..., Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """How one registered handler runs under the replay engine: fixed when it is registered (for a
    resource, when its URI is resolved), so a request only adds its target, arguments and kwargs."""

    method: str  # tools/call, resources/read or prompts/get
    handler: Handler
    context_param: str | None  # the handler's parameter that receives the Context, if any
    finish: Callable[[Any], dict[str, Any]]  # the handler's value -> the complete result
    tool_errors: bool = False  # a tools/call: failures the model can act on become tool errors
    single_use: bool = False  # each round token is claimed once (the server may also say so for all)
    when_unasked: str = "error"  # a tool's rung for a question the client cannot show (ladder.py, P139)
    task: str | None = None  # a tool's task support, "optional" or "required" (tasks extension, P165)
    task_start: str = "call"  # where a call becomes a task: at the "call", or at ctx.start_task() ("handler")


_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}\Z")


def _describe(fn: Handler, description: str | None) -> str | None:
    return description if description is not None else (inspect.getdoc(fn) or None)


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredTool:
    name: str
    fn: Handler
    signature: Signature
    description: str | None = None
    title: str | None = None
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    input_schema: dict[str, Any] = field(default_factory=dict)
    header_params: dict[str, tuple[str, ...]] = field(default_factory=dict)
    meta: dict[str, Any] | None = None
    flow: Flow | None = None  # given when the server registers it
    scopes: tuple[str, ...] = ()  # OAuth scopes a call needs besides the server-wide ones (guard.py)

    @property
    def single_use(self) -> bool:
        return self.flow is not None and self.flow.single_use

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "inputSchema": self.input_schema}
        if self.title:
            out["title"] = self.title
        if self.description:
            out["description"] = self.description
        if self.output_schema is not None:
            out["outputSchema"] = self.output_schema
        if self.annotations:
            out["annotations"] = self.annotations
        if self.meta:
            out["_meta"] = self.meta
        if self.flow is not None and self.flow.task is not None:  # protocol.md P209: both eras
            out["execution"] = {"taskSupport": self.flow.task}
        return out


def make_tool(
    fn: Handler,
    context_type: type,
    *,
    name: str | None,
    description: str | None,
    title: str | None,
    annotations: dict[str, Any] | None,
    input_schema: dict[str, Any] | None,
    structured: bool | None,
    meta: dict[str, Any] | None,
) -> RegisteredTool:
    tool_name = name or fn.__name__
    if not _TOOL_NAME.match(tool_name):
        raise ValueError(f"tool name {tool_name!r} must be 1-128 characters of A-Z a-z 0-9 _ . -")
    if not inspect.iscoroutinefunction(fn) and not callable(fn):
        raise TypeError(f"tool {tool_name!r}: the handler must be callable")
    signature = inspect_handler(fn, context_type)
    schema = signature.input_schema
    if input_schema is not None:
        if input_schema.get("type") != "object":
            raise ValueError(f"tool {tool_name!r}: input_schema must have type 'object' at the root")
        schema = input_schema
        # An explicit schema is published as given, and arguments are checked against it (protocol.md P106);
        # the handler takes the arguments it names.
        try:
            check = schema_checker(schema)
        except ValueError as exc:
            raise ValueError(f"tool {tool_name!r}: {exc}") from None
        signature = Signature(
            input_schema=schema,
            context_param=signature.context_param,
            checks={},
            required=(),
            accepts_extra=True,
            schema_check=check,
        )
    try:
        headers = header_param_specs(schema)
    except ValueError as exc:
        raise ValueError(f"tool {tool_name!r}: {exc}") from None
    output_schema = None
    returns = get_type_hints(fn).get("return")
    if structured is not False and returns is not None and _is_structured(returns):
        output_schema, _ = compile_type(returns)
        structured = True
    return RegisteredTool(
        name=tool_name,
        fn=fn,
        signature=signature,
        description=_describe(fn, description),
        title=title,
        annotations=annotations,
        output_schema=output_schema,
        input_schema=schema,
        header_params=headers,
        meta=meta,
    )


def _is_structured(tp: Any) -> bool:
    """Whether a return annotation describes structured content: a `ToolResult` is the result itself, and
    what its `structured` holds has no schema to publish."""
    if tp is ToolResult:
        return False
    return isinstance(tp, type) and (
        dataclasses.is_dataclass(tp) or typing.is_typeddict(tp) or hasattr(tp, "model_json_schema")
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredResource:
    uri: str
    name: str
    fn: Handler
    signature: Signature
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    ttl_ms: int | None = None
    scopes: tuple[str, ...] = ()  # OAuth scopes a read needs besides the server-wide ones (guard.py)
    meta: dict[str, Any] | None = None  # `_meta` of its description (an app page's `ui`, apps.py)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uri": self.uri, "name": self.name}
        _opt(out, title=self.title, description=self.description, mimeType=self.mime_type, _meta=self.meta)
        return out


_VAR = re.compile(r"\{([A-Za-z0-9_]+)\}")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredTemplate:
    uri_template: str
    name: str
    fn: Handler
    signature: Signature
    pattern: re.Pattern[str]
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    ttl_ms: int | None = None
    scopes: tuple[str, ...] = ()  # OAuth scopes a read needs besides the server-wide ones (guard.py)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"uriTemplate": self.uri_template, "name": self.name}
        _opt(out, title=self.title, description=self.description, mimeType=self.mime_type)
        return out

    def match(self, uri: str) -> dict[str, str] | None:
        m = self.pattern.fullmatch(uri)
        return m.groupdict() if m else None


def template_pattern(uri_template: str) -> re.Pattern[str]:
    """A regex for an RFC 6570 level-1 template: each `{var}` matches one path segment."""
    parts, last = [], 0
    for m in _VAR.finditer(uri_template):
        parts.append(re.escape(uri_template[last : m.start()]))
        parts.append(f"(?P<{m.group(1)}>[^/?#]+)")
        last = m.end()
    parts.append(re.escape(uri_template[last:]))
    return re.compile("".join(parts))


def is_template(uri: str) -> bool:
    return bool(_VAR.search(uri))


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisteredPrompt:
    name: str
    fn: Handler
    signature: Signature
    arguments: list[dict[str, Any]]
    title: str | None = None
    description: str | None = None
    flow: Flow | None = None  # given when the server registers it
    scopes: tuple[str, ...] = ()  # OAuth scopes a get needs besides the server-wide ones (guard.py)

    def describe(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name}
        _opt(out, title=self.title, description=self.description)
        if self.arguments:
            out["arguments"] = self.arguments
        return out


def prompt_arguments(signature: Signature) -> list[dict[str, Any]]:
    """Prompt arguments (all strings on the wire) from the handler's parameters."""
    args = []
    for name, schema in signature.input_schema.get("properties", {}).items():
        arg: dict[str, Any] = {"name": name, "required": name in signature.required}
        if "description" in schema:
            arg["description"] = schema["description"]
        args.append(arg)
    return args


def _opt(out: dict[str, Any], **values: Any) -> None:
    for key, value in values.items():
        if value is not None:
            out[key] = value
