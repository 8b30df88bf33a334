"""A handler's parameters: the JSON Schema they publish and the checks that turn arguments into values.

Supported parameter types: str, int, float, bool, None, Literal, Enum, list/tuple/set, dict[str, T],
Optional and other unions, dataclasses, TypedDicts and pydantic models (optional dependency),
with `Annotated[T, Param(...)]` for descriptions and `x-mcp-header` mirroring.
"""

from __future__ import annotations

import dataclasses
import enum
import inspect
import types
import typing
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, Literal, Union, get_args, get_origin, get_type_hints

from .problems import HandlerProblems
from .source import handler_source


@dataclass(frozen=True, slots=True)
class Param:
    """Extra facts about a handler parameter, given with `Annotated[T, Param(...)]`."""

    description: str | None = None
    title: str | None = None
    header: str | None = None  # mirror this argument in the `Mcp-Param-<header>` HTTP header


SUPPORTED_TYPES = (
    "parameter types Baton can describe: str, int, float, bool, None, Literal, Enum, list, tuple, set, "
    "dict[str, T], unions of these, dataclasses, TypedDicts and pydantic models"
)


class UnsupportedType(TypeError):
    """A type that JSON Schema cannot describe, as a handler parameter (or inside one)."""


class ArgumentError(ValueError):
    """Arguments that do not fit the handler's parameters; becomes an `isError` tool result."""


Check = Callable[[Any, str], Any]


def _fail(path: str, what: str) -> ArgumentError:
    return ArgumentError(f"{path}: {what}" if path else what)


def compile_type(hint: Any) -> tuple[dict[str, Any], Check]:
    """The JSON Schema of a type and a function that checks (and converts) a JSON value against it."""
    extra = None
    if get_origin(hint) is Annotated:
        args = get_args(hint)
        hint = args[0]
        extra = next((a for a in args[1:] if isinstance(a, (Param, str))), None)
    schema, check = _compile(hint)
    if isinstance(extra, str):
        schema = {**schema, "description": extra}
    elif isinstance(extra, Param):
        schema = dict(schema)
        if extra.description:
            schema["description"] = extra.description
        if extra.title:
            schema["title"] = extra.title
        if extra.header:
            schema["x-mcp-header"] = extra.header
    return schema, check


def _compile(hint: Any) -> tuple[dict[str, Any], Check]:
    if hint is Any or hint is object or hint is inspect.Parameter.empty:
        return {}, lambda v, p: v
    if hint is str:
        return {"type": "string"}, _typed(str, "a string")
    if hint is bool:
        return {"type": "boolean"}, _typed(bool, "true or false")
    if hint is int:
        return {"type": "integer"}, _check_int
    if hint is float:
        return {"type": "number"}, _check_float
    if hint is None or hint is type(None):
        return {"type": "null"}, _typed(type(None), "null")
    origin = get_origin(hint)
    if origin is Literal:
        values = list(get_args(hint))
        return {"enum": values}, _check_enum(values, None)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        return {"enum": values}, _check_enum(values, hint)
    if origin in (Union, types.UnionType):
        return _compile_union(get_args(hint))
    if origin in (list, tuple, set, frozenset, Sequence, typing.Sequence) or hint in (list, tuple, set):
        return _compile_list(hint, origin or hint)
    if origin is dict or hint is dict:
        args = get_args(hint)
        value_schema, value_check = _compile(args[1]) if len(args) == 2 else ({}, lambda v, p: v)
        schema: dict[str, Any] = {"type": "object"}
        if value_schema:
            schema["additionalProperties"] = value_schema

        def check_dict(v: Any, p: str) -> Any:
            if not isinstance(v, dict):
                raise _fail(p, "expected an object")
            return {k: value_check(x, f"{p}.{k}" if p else k) for k, x in v.items()}

        return schema, check_dict
    if isinstance(hint, type) and (dataclasses.is_dataclass(hint) or typing.is_typeddict(hint)):
        return _compile_object(hint)
    if isinstance(hint, type) and hasattr(hint, "model_json_schema") and hasattr(hint, "model_validate"):
        return _compile_pydantic(hint)
    raise UnsupportedType(f"{getattr(hint, '__qualname__', None) or repr(hint)} cannot be described as JSON Schema")


def _typed(tp: type, what: str) -> Check:
    def check(v: Any, p: str) -> Any:
        if type(v) is not tp:
            raise _fail(p, f"expected {what}")
        return v

    return check


def _check_int(v: Any, p: str) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or (isinstance(v, float) and not v.is_integer()):
        raise _fail(p, "expected an integer")
    return int(v)


def _check_float(v: Any, p: str) -> Any:
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise _fail(p, "expected a number")
    return float(v)


def _check_enum(values: list[Any], enum_cls: type[enum.Enum] | None) -> Check:
    allowed = set(values)

    def check(v: Any, p: str) -> Any:
        if isinstance(v, bool) or v not in allowed:
            raise _fail(p, f"expected one of {', '.join(map(repr, values))}")
        return enum_cls(v) if enum_cls else v

    return check


def _compile_union(members: tuple[Any, ...]) -> tuple[dict[str, Any], Check]:
    compiled = [_compile(m) for m in members]
    non_null = [s for m, s in zip(members, compiled, strict=True) if m is not type(None)]
    nullable = len(non_null) < len(compiled)
    if len(non_null) == 1 and nullable:
        inner_schema, inner_check = non_null[0]
        schema = {"anyOf": [inner_schema, {"type": "null"}]}

        def check_optional(v: Any, p: str) -> Any:
            return None if v is None else inner_check(v, p)

        return schema, check_optional

    def check_any(v: Any, p: str) -> Any:
        errors = []
        for _, check in compiled:
            try:
                return check(v, p)
            except ArgumentError as exc:
                errors.append(str(exc))
        raise _fail(p, "matches none of the allowed types (" + "; ".join(errors) + ")")

    return {"anyOf": [s for s, _ in compiled]}, check_any


def _compile_list(hint: Any, origin: Any) -> tuple[dict[str, Any], Check]:
    args = get_args(hint)
    if origin is tuple and args and not (len(args) == 2 and args[1] is Ellipsis):
        parts = [_compile(a) for a in args]
        schema = {
            "type": "array",
            "prefixItems": [s for s, _ in parts],
            "minItems": len(parts),
            "maxItems": len(parts),
        }

        def check_tuple(v: Any, p: str) -> Any:
            if not isinstance(v, list) or len(v) != len(parts):
                raise _fail(p, f"expected a list of {len(parts)} items")
            return tuple(c(x, f"{p}[{i}]") for i, ((_, c), x) in enumerate(zip(parts, v, strict=True)))

        return schema, check_tuple
    item_schema, item_check = _compile(args[0]) if args else ({}, lambda v, p: v)
    schema = {"type": "array", "items": item_schema} if item_schema else {"type": "array"}
    container: Callable[[Any], Any] = {tuple: tuple, set: set, frozenset: frozenset}.get(origin, list)
    if origin in (set, frozenset):
        schema["uniqueItems"] = True

    def check_list(v: Any, p: str) -> Any:
        if not isinstance(v, list):
            raise _fail(p, "expected a list")
        return container(item_check(x, f"{p}[{i}]") for i, x in enumerate(v))

    return schema, check_list


def _compile_object(cls: type) -> tuple[dict[str, Any], Check]:
    hints = get_type_hints(cls, include_extras=True)
    if dataclasses.is_dataclass(cls):
        required = {
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
        names = [f.name for f in dataclasses.fields(cls) if f.init]
        build: Callable[[dict[str, Any]], Any] = lambda kw: cls(**kw)  # noqa: E731
    else:
        required = set(cls.__required_keys__)  # type: ignore[attr-defined]
        names = list(hints)
        build = dict
    props = {n: compile_type(hints[n]) for n in names}
    schema: dict[str, Any] = {"type": "object", "properties": {n: s for n, (s, _) in props.items()}}
    if required:
        schema["required"] = [n for n in names if n in required]
    schema["additionalProperties"] = False
    checks = {n: c for n, (_, c) in props.items()}

    def check_object(v: Any, p: str) -> Any:
        if not isinstance(v, dict):
            raise _fail(p, "expected an object")
        unknown = set(v) - set(checks)
        if unknown:
            raise _fail(p, f"unexpected field(s) {', '.join(sorted(unknown))}")
        missing = [n for n in names if n in required and n not in v]
        if missing:
            raise _fail(p, f"missing required field(s) {', '.join(missing)}")
        return build({k: checks[k](x, f"{p}.{k}" if p else k) for k, x in v.items()})

    return schema, check_object


def _compile_pydantic(cls: Any) -> tuple[dict[str, Any], Check]:
    schema = cls.model_json_schema()

    def check_model(v: Any, p: str) -> Any:
        try:
            return cls.model_validate(v)
        except ValueError as exc:  # pydantic.ValidationError is a ValueError
            raise _fail(p, str(exc)) from None

    return schema, check_model


@dataclass(frozen=True, slots=True, kw_only=True)
class Signature:
    """How to call a handler: which parameter takes the Context, and the checked arguments."""

    input_schema: dict[str, Any]
    context_param: str | None
    checks: dict[str, Check]
    required: tuple[str, ...]
    accepts_extra: bool
    schema_check: Callable[[dict[str, Any]], None] | None = None  # an explicit input_schema (protocol.md P106)

    def bind(self, arguments: dict[str, Any]) -> dict[str, Any]:
        """Checked keyword arguments for the handler; raises ArgumentError naming what is wrong."""
        if self.schema_check is not None:
            self.schema_check(arguments)
        checks = self.checks
        if not self.accepts_extra:
            for name in arguments:
                if name not in checks:
                    raise ArgumentError(f"unexpected argument {name!r}")
        kwargs = {}
        for name, value in arguments.items():
            check = checks.get(name)
            kwargs[name] = check(value, name) if check is not None else value
        for name in self.required:
            if name not in kwargs:
                raise ArgumentError(f"missing required argument {name!r}")
        return kwargs


def schema_checker(schema: dict[str, Any]) -> Callable[[dict[str, Any]], None]:
    """A check of arguments against a tool's explicit `input_schema` (JSON Schema, by its `$schema`, else
    2020-12): ArgumentError naming the first problem, the value cut short (protocol.md P106)."""
    from jsonschema import exceptions, validators  # noqa: PLC0415 (150 ms, only for a tool given input_schema)

    cls = validators.validator_for(schema, default=validators.Draft202012Validator)
    try:
        cls.check_schema(schema)
    except exceptions.SchemaError as exc:
        raise ValueError(f"input_schema is not a valid JSON Schema: {exc.message}") from None
    validator = cls(schema)

    def check(arguments: dict[str, Any]) -> None:
        error = exceptions.best_match(validator.iter_errors(arguments))
        if error is not None:
            where = "/".join(str(part) for part in error.absolute_path) or "arguments"
            message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
            raise ArgumentError(f"{where}: {message}")

    return check


def inspect_handler(fn: Callable[..., Any], context_type: type, *, skip: Sequence[str] = ()) -> Signature:
    """Read a handler's parameters; the one typed as the Context (or named ctx) receives the context."""
    sig = inspect.signature(fn)
    try:
        hints = get_type_hints(fn, include_extras=True)
    except NameError as exc:
        raise TypeError(f"{fn.__qualname__}: cannot resolve a type hint ({exc})") from None
    properties: dict[str, Any] = {}
    checks: dict[str, Check] = {}
    required: list[str] = []
    context_param = None
    accepts_extra = False
    problems: list[tuple[str, str]] = []  # (parameter, what is wrong): every one is reported, not the first
    for name, param in sig.parameters.items():
        hint = hints.get(name, Any)
        bare = get_args(hint)[0] if get_origin(hint) is Annotated else hint
        if (isinstance(bare, type) and issubclass(bare, context_type)) or (name == "ctx" and bare is Any):
            context_param = name
            continue
        foreign = foreign_context(bare)
        if foreign is not None:
            problems.append((name, f"is typed with {foreign}; Baton passes its own: {name}: baton.Context"))
            continue
        if param.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_extra = True
            continue
        if param.kind in (inspect.Parameter.VAR_POSITIONAL, inspect.Parameter.POSITIONAL_ONLY):
            problems.append((name, "must be passable by keyword"))
            continue
        if name in skip:
            continue
        try:
            schema, check = compile_type(hint)
        except UnsupportedType as exc:
            problems.append((name, str(exc)))
            continue
        if param.default is not inspect.Parameter.empty:
            default = param.default
            if default is None or isinstance(default, (str, int, float, bool)):
                schema = {**schema, "default": default.value if isinstance(default, enum.Enum) else default}
        else:
            required.append(name)
        properties[name] = schema
        checks[name] = check
    if problems:
        raise _located(fn, problems)
    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = required
    if not accepts_extra:
        input_schema["additionalProperties"] = False
    return Signature(
        input_schema=input_schema,
        context_param=context_param,
        checks=checks,
        required=tuple(required),
        accepts_extra=accepts_extra,
    )


def foreign_context(hint: Any) -> str | None:
    """`fastmcp.Context` when a parameter is typed with another SDK's Context (FastMCP's or `mcp`'s), else
    None: such a handler is refused at registration with Baton's spelling (protocol.md P130)."""
    if not isinstance(hint, type) or hint.__name__ != "Context":
        return None
    package = hint.__module__.partition(".")[0]
    return f"{package}.Context" if package in ("fastmcp", "mcp") else None


def _located(fn: Callable[..., Any], problems: list[tuple[str, str]]) -> HandlerProblems:
    """The parameters' problems, each at the line of the parameter in the user's file (protocol.md P97)."""
    source = handler_source(fn)
    located = []
    for name, text in problems:
        arg = source.parameter(name) if source is not None else None
        where = source.where(arg) if source is not None else fn.__qualname__
        located.append((where, f"parameter {name!r}: {text}"))
    return HandlerProblems(located, SUPPORTED_TYPES)
