"""Building a form from a dataclass, a TypedDict, a pydantic model or an explicit field list.

Anything the restricted elicitation schema cannot express is a `FormError` when the form is
compiled (at import time with the `@form` decorator), never at request time.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import types
import typing
import weakref
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from .fields import (
    FORMATS,
    BooleanField,
    EnumField,
    Field,
    FieldSpec,
    FormError,
    FormSpec,
    MultiSelectField,
    NumberField,
    StringField,
)
from .guard import check_no_url_in_form, check_not_secret

T = TypeVar("T")


# Forms marked `@form(allow_secrets=True)`: their fields only look like secrets (see `forms.guard`).
_SECRETS_ALLOWED: weakref.WeakSet[type] = weakref.WeakSet()


@typing.overload
def form(cls: type[T], /) -> type[T]: ...
@typing.overload
def form(*, allow_secrets: bool = False) -> Callable[[type[T]], type[T]]: ...


def form(cls: type[T] | None = None, /, *, allow_secrets: bool = False) -> Any:
    """Class decorator: compile the form now, so that a mistake fails at import, not at request time.

    `@form(allow_secrets=True)` accepts fields that look like secrets (form mode must not ask for real ones).
    """

    def apply(c: type[T]) -> type[T]:
        if allow_secrets:
            _SECRETS_ALLOWED.add(c)
        compile_form(c)
        return c

    return apply if cls is None else apply(cls)


def compile_form(source: Any, *, allow_secrets: bool = False) -> FormSpec:
    """The compiled form for a dataclass, TypedDict, pydantic model, FormSpec or list of fields.

    Refuses (`FormError`) fields that look like secrets, unless `allow_secrets` (or `@form(allow_secrets=True)`),
    and fields that carry a URL to open (see `forms.guard`).
    """
    if isinstance(source, (type, FormSpec)):
        return _checked(source, allow_secrets)  # the usual case, asked again in every round: checked once
    return _check(_compile(source), allow_secrets)


@functools.lru_cache(maxsize=512)
def _checked(source: type | FormSpec, allow_secrets: bool) -> FormSpec:
    allowed = allow_secrets or (isinstance(source, type) and source in _SECRETS_ALLOWED)
    return _check(_compile(source), allowed)


def _check(spec: FormSpec, allowed: bool) -> FormSpec:
    check_not_secret(spec, allow=allowed)
    check_no_url_in_form(spec)
    return spec


def _compile(source: Any) -> FormSpec:
    if isinstance(source, FormSpec):
        return source
    if isinstance(source, (list, tuple)):
        if not all(isinstance(f, FieldSpec) for f in source):
            raise FormError("an explicit form is a list of fields (StringField, NumberField, ...)")
        return FormSpec(list(source))
    if isinstance(source, type):
        return _compile_type(source)
    raise FormError(f"cannot build a form from {source!r}: use a dataclass, TypedDict, pydantic model or fields")


@functools.lru_cache(maxsize=512)
def _compile_type(cls: type) -> FormSpec:
    if dataclasses.is_dataclass(cls):
        hints = get_type_hints(cls, include_extras=True)
        specs = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            has_default = f.default is not dataclasses.MISSING or f.default_factory is not dataclasses.MISSING
            default = f.default if f.default is not dataclasses.MISSING else None
            specs.append(_field(cls, f.name, hints[f.name], not has_default, default))
        return FormSpec(specs, build=_filling(cls, specs, lambda values: cls(**values)), name=cls.__name__)
    if typing.is_typeddict(cls):
        hints = get_type_hints(cls, include_extras=True)
        required_keys: frozenset[str] = cls.__required_keys__  # type: ignore[attr-defined]
        specs = [_field(cls, name, hint, name in required_keys, None) for name, hint in hints.items()]
        return FormSpec(specs, build=dict, name=cls.__name__)
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict) and hasattr(cls, "model_validate"):
        return _compile_pydantic(cls, model_fields)
    raise FormError(f"{cls.__name__} is not a dataclass, TypedDict or pydantic model")


def _compile_pydantic(cls: type, model_fields: dict[str, Any]) -> FormSpec:
    specs = []
    for name, info in model_fields.items():
        ours = next((m for m in info.metadata if isinstance(m, Field)), Field())
        constraints = _pydantic_constraints(info.metadata, f"{cls.__name__}.{name}")
        extra = dataclasses.replace(
            ours,
            title=ours.title or info.title,
            description=ours.description or info.description,
            **{k: v for k, v in constraints.items() if getattr(ours, k) is None},
        )
        hint = Annotated[info.annotation, extra]  # type: ignore[name-defined]
        required = bool(info.is_required())
        default = info.default
        if required or info.default_factory is not None or type(default).__name__ == "PydanticUndefinedType":
            default = None
        specs.append(_field(cls, info.alias or name, hint, required, default))
    validate: Callable[[dict[str, Any]], Any] = cls.model_validate  # type: ignore[attr-defined]
    return FormSpec(specs, build=_filling(cls, specs, validate), name=cls.__name__)


def _filling(cls: type, specs: list[FieldSpec], build: Callable[[dict[str, Any]], Any]) -> Callable[..., Any]:
    """Wrap a constructor so that optional fields without a default arrive as None when unanswered."""
    no_default = _no_default(cls)
    fill = {s.name: None for s in specs if not s.required and s.name in no_default}
    if not fill:
        return build
    return lambda values: build({**fill, **values})


def _no_default(cls: type) -> set[str]:
    if dataclasses.is_dataclass(cls):
        return {
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
    fields = getattr(cls, "model_fields", {})
    return {info.alias or name for name, info in fields.items() if info.is_required()}


_PYDANTIC_BOUNDS = (("ge", "minimum"), ("le", "maximum"), ("min_length", "min_length"), ("max_length", "max_length"))
_INEXPRESSIBLE = ("gt", "lt", "multiple_of", "pattern", "max_digits", "decimal_places")


def _pydantic_constraints(metadata: Sequence[Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in metadata:
        if isinstance(item, Field):
            continue
        for attr, key in _PYDANTIC_BOUNDS:
            value = getattr(item, attr, None)
            if value is not None:
                out[key] = value
        for attr in _INEXPRESSIBLE:
            if getattr(item, attr, None) is not None:
                raise FormError(
                    f"{where}: the constraint {attr!r} cannot be expressed in an elicitation form "
                    "(use ge/le for bounds, and check the rest after the answer arrives)"
                )
    return out


def _field(owner: type, name: str, hint: Any, required: bool, default: Any) -> FieldSpec:
    where = f"{owner.__name__}.{name}"
    extra = Field()
    optional = False
    while True:  # peel Required/NotRequired, Annotated and Optional, in whatever order they nest
        origin = get_origin(hint)
        if origin in (typing.Required, typing.NotRequired):
            hint = get_args(hint)[0]
        elif origin is Annotated:
            args = get_args(hint)
            hint = args[0]
            for meta in args[1:]:
                if isinstance(meta, Field):
                    extra = meta
                else:  # constraints of other libraries (pydantic's Field, annotated_types)
                    found = _pydantic_constraints(getattr(meta, "metadata", None) or [meta], where)
                    extra = dataclasses.replace(extra, **{k: v for k, v in found.items() if getattr(extra, k) is None})
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(hint) if a is not type(None)]
            if len(members) != 1 or optional:
                raise FormError(f"{where}: a form field cannot be a union of types")
            optional, hint = True, members[0]
        else:
            break
    if extra.format is not None and extra.format not in FORMATS:
        raise FormError(f"{where}: format must be one of {', '.join(FORMATS)}, not {extra.format!r}")
    common: dict[str, Any] = {
        "name": name,
        "required": required and not optional,
        "title": extra.title,
        "description": extra.description,
        "default": _json_default(default),
    }
    if hint is bool:
        return BooleanField(**common)
    if hint is int or hint is float:
        return NumberField(**common, integer=hint is int, minimum=extra.minimum, maximum=extra.maximum)
    if hint is str:
        return StringField(**common, min_length=extra.min_length, max_length=extra.max_length, format=extra.format)
    if hint is dt.date:
        return StringField(**common, format="date", convert=dt.date.fromisoformat)
    if hint is dt.datetime:
        return StringField(**common, format="date-time", convert=_parse_datetime)
    values, convert = _enum_values(hint, where)
    if values is not None:
        return EnumField(
            **common, values=values, titles=extra.titles, legacy_titles=extra.legacy_titles, convert=convert
        )
    if get_origin(hint) in (list, set, frozenset, Sequence, typing.Sequence):
        (item,) = get_args(hint) or (None,)
        values, convert = _enum_values(item, where)
        if values is None:
            raise FormError(f"{where}: a list field must be a list of Literal or Enum choices (a multi-select)")
        outer = get_origin(hint)
        to_python = _multi(convert, outer if outer in (set, frozenset) else list)
        return MultiSelectField(
            **common,
            values=values,
            titles=extra.titles,
            min_items=extra.min_items,
            max_items=extra.max_items,
            convert=to_python,
        )
    raise FormError(
        f"{where}: type {getattr(hint, '__name__', hint)!r} cannot be asked in a form; fields must be "
        "str, int, float, bool, date, datetime, a Literal/Enum of strings, or a list of those choices"
    )


def _enum_values(hint: Any, where: str) -> tuple[list[str] | None, Callable[[Any], Any] | None]:
    if get_origin(hint) is Literal:
        values = list(get_args(hint))
        if not all(isinstance(v, str) for v in values):
            raise FormError(f"{where}: Literal choices must be strings")
        return values, None
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        if not all(isinstance(v, str) for v in values):
            raise FormError(f"{where}: Enum choices must have string values")
        return values, hint
    return None, None


def _multi(convert: Callable[[Any], Any] | None, container: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def to_python(values: list[str]) -> Any:
        return container(convert(v) for v in values) if convert else container(values)

    return to_python


def _parse_datetime(value: str) -> dt.datetime:
    return dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))


def _json_default(value: Any) -> Any:
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    if isinstance(value, (set, frozenset, tuple, list)):
        return [_json_default(v) for v in value]
    return value
