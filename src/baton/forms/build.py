"""Building a form from a dataclass, a TypedDict, a pydantic model (or dataclass) or an explicit field list.

A field's type decides its kind: text (`str`; `date`, `datetime`, `EmailStr` and pydantic's URL classes
with their format), number (`int`, `float`), yes/no (`bool`), choice (`Literal`/`Enum` of strings) or
multi-select (a list or set of choices). What is written on it (read by `baton.forms.constraints`) must
fit that kind and then goes on the wire:
- text: `min_length`/`max_length` become `minLength`/`maxLength`, `format` one of `FORMATS`;
- numbers: `ge`/`le` become `minimum`/`maximum`. The wire has no exclusive bound: on an `int` field
  `gt`/`lt` become the next whole number (`gt=0` is `minimum: 1`, `lt=2.5` is `maximum: 2`); on a
  `float` field they are refused;
- multi-select: `min_length`/`max_length` (pydantic's spelling for a list) become `minItems`/`maxItems`;
- titles, descriptions and defaults on every kind; display titles of choices with `Field(titles=...)`.
Anything else, including a constraint that does not fit the type (a length on a number, a format on a
choice), is a `FormError` when the form is compiled (at import time with `@form`), never at request time.
A question with one answer is asked with its type (`str`, `int`, `Literal[...]`, an Enum...) or a list of
choices: a form of one field, `value`, whose answer is handed over as it is (protocol.md P131).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
import functools
import math
import types
import typing
import weakref
from collections.abc import Callable, Sequence
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin, get_type_hints

from .ask_guards import check_no_url_in_form, check_not_secret
from .constraints import Constraints, add_constraint, is_field_info, read_constraints, read_field_info
from .fields import (
    FORMATS,
    BooleanField,
    Choice,
    EnumField,
    Field,
    FieldSpec,
    FormError,
    FormSpec,
    MultiSelectField,
    NumberField,
    StringField,
)
from .string_types import string_type

T = TypeVar("T")


# Forms marked `@form(allow_secrets=True)`: their fields only look like secrets (see `forms.ask_guards`).
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
    and fields that carry a URL to open (see `forms.ask_guards`).
    """
    if isinstance(source, (type, FormSpec)) or get_origin(source) is Literal:
        return _checked(source, allow_secrets)  # the usual case, asked again in every round: checked once
    return _check(_compile(source), allow_secrets)


@functools.lru_cache(maxsize=512)
def _checked(source: Any, allow_secrets: bool) -> FormSpec:
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
        if source and all(isinstance(f, (str, Choice)) for f in source):  # one choice out of these (P131)
            return FormSpec([EnumField(ANSWER, values=list(source))], build=_answer, name="choice")
        if not all(isinstance(f, FieldSpec) for f in source):
            raise FormError(
                "an explicit form is a list of fields (StringField, NumberField, ...); a question with one answer "
                "out of choices is a list of strings (or Choice)"
            )
        return FormSpec(list(source))
    if _is_scalar(source):
        return FormSpec([_field(_Question, ANSWER, source, True, None)], build=_answer, name=_named(source))
    if isinstance(source, type):
        return _compile_type(source)
    raise FormError(
        f"cannot build a form from {source!r}: use a dataclass, TypedDict, pydantic model or fields, or for "
        "one answer str, int, float, bool, date, datetime, a Literal or Enum of strings, or a list of choices"
    )


ANSWER = "value"
"""The one field of a question asked with a type or a list of choices (`ctx.elicit(str, ...)`): the
answer is `Accepted.data` itself (protocol.md P131)."""


class _Question:
    """Names the field of a one-answer question in messages (`answer.value: ...`)."""

    __name__ = "answer"


def _answer(values: dict[str, Any]) -> Any:
    return values[ANSWER]


def _is_scalar(hint: Any) -> bool:
    """A type asked as one answer: str, int, float, bool, date, datetime, a Literal or a string Enum."""
    if hint in (str, int, float, bool, dt.date, dt.datetime) or get_origin(hint) is Literal:
        return True
    return isinstance(hint, type) and issubclass(hint, enum.Enum)


def _named(hint: Any) -> str:
    return getattr(hint, "__name__", None) or "choice"


@functools.lru_cache(maxsize=512)
def _compile_type(cls: type) -> FormSpec:
    if dataclasses.is_dataclass(cls):
        pydantic_fields = getattr(cls, "__pydantic_fields__", None)
        if isinstance(pydantic_fields, dict):  # a pydantic dataclass: its fields are FieldInfos, as in a model
            return _compile_pydantic(cls, pydantic_fields, cls.__pydantic_validator__.validate_python)  # type: ignore[attr-defined]
        hints = get_type_hints(cls, include_extras=True)
        specs = []
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            if is_field_info(f.default):
                raise FormError(
                    f"{cls.__name__}.{f.name}: a plain dataclass does not read pydantic's Field(...) as a default; "
                    "write Annotated[T, pydantic.Field(...)] (and '= default' if any), or use a pydantic dataclass"
                )
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
        return _compile_pydantic(cls, model_fields, cls.model_validate)
    raise FormError(f"{cls.__name__} is not a dataclass, TypedDict or pydantic model")


# pydantic model settings: those that constrain every `str` field (carried as its lengths), and those that
# change answers or the schema in ways a form cannot carry (refused).
_CONFIG_TEXT = (("str_min_length", "min_length"), ("str_max_length", "max_length"))
_CONFIG_REFUSED = ("str_strip_whitespace", "str_to_lower", "str_to_upper", "json_schema_extra")


def _compile_pydantic(cls: type, model_fields: dict[str, Any], validate: Callable[[dict[str, Any]], Any]) -> FormSpec:
    config = getattr(cls, "__pydantic_config__", None) or getattr(cls, "model_config", None) or {}
    for key in _CONFIG_REFUSED:
        if config.get(key):
            raise FormError(
                f"{cls.__name__}: model_config[{key!r}] has no equivalent in an elicitation form "
                "(do it in your handler after the answer arrives)"
            )
    text_config = [
        (attr, config[key], f"model_config[{key!r}]={config[key]!r}")
        for key, attr in _CONFIG_TEXT
        if config.get(key) is not None
    ]
    specs = []
    for name, info in model_fields.items():
        wire = info.alias or name
        found = read_field_info(info, f"{cls.__name__}.{wire}")
        required = bool(info.is_required())
        default = info.default
        if required or info.default_factory is not None or type(default).__name__ == "PydanticUndefinedType":
            default = None
        specs.append(_field(cls, wire, info.annotation, required, default, found, text_config))
    return FormSpec(specs, build=_filling(cls, specs, validate), name=cls.__name__)


def _filling(cls: type, specs: list[FieldSpec], build: Callable[[dict[str, Any]], Any]) -> Callable[..., Any]:
    """Wrap a constructor so that optional fields without a default arrive as None when unanswered."""
    no_default = _no_default(cls)
    fill = {s.name: None for s in specs if not s.required and s.name in no_default}
    if not fill:
        return build
    return lambda values: build({**fill, **values})


def _no_default(cls: type) -> set[str]:
    fields = getattr(cls, "__pydantic_fields__", None) or getattr(cls, "model_fields", None)
    if isinstance(fields, dict):
        return {info.alias or name for name, info in fields.items() if info.is_required()}
    if dataclasses.is_dataclass(cls):
        return {
            f.name
            for f in dataclasses.fields(cls)
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        }
    return set()


def _field(
    owner: type,
    name: str,
    hint: Any,
    required: bool,
    default: Any,
    found: Constraints | None = None,
    text_config: Sequence[tuple[str, Any, str]] = (),
) -> FieldSpec:
    where = f"{owner.__name__}.{name}"
    metadata: list[Any] = []
    optional = False
    while True:  # peel Required/NotRequired, Annotated and Optional, in whatever order they nest
        origin = get_origin(hint)
        if origin in (typing.Required, typing.NotRequired):
            hint = get_args(hint)[0]
        elif origin is Annotated:
            args = get_args(hint)
            hint = args[0]
            metadata.extend(args[1:])
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(hint) if a is not type(None)]
            if len(members) != 1 or optional:
                raise FormError(f"{where}: a form field cannot be a union of types")
            optional, hint = True, members[0]
        else:
            break
    if isinstance(default, Field):
        raise FormError(
            f"{where}: Field(...) is not a default value; it goes inside Annotated: "
            f"{name}: Annotated[{getattr(hint, '__name__', 'T')}, Field(...)]"
        )
    c = read_constraints(metadata, where, into=found)
    common: dict[str, Any] = {
        "name": name,
        "required": required and not optional,
        "title": c.title,
        "description": c.description,
        "default": _json_default(default),
    }
    if hint is bool:
        _only(c, (), "a yes/no", where)
        return BooleanField(**common)
    if hint is int or hint is float:
        return NumberField(**common, integer=hint is int, **_bounds(c, hint is int, where))
    text = string_type(hint)
    if hint is str or text is not None:
        for attr, value, spelling in text_config:
            add_constraint(c, attr, value, spelling, where)
    if hint is str:
        _only(c, ("min_length", "max_length", "format"), "a text", where)
        _known_format(c, where)
        return StringField(**common, min_length=c.min_length, max_length=c.max_length, format=c.format)
    if text is not None:
        kind = f"an {hint.__name__}" if hint.__name__[0] in "AEIOU" else f"a {hint.__name__}"
        _fixed_format(c, text.format, kind, where)
        if text.max_length is not None:
            add_constraint(c, "max_length", text.max_length, f"{hint.__name__}'s maximum length", where)
        _only(c, ("min_length", "max_length", "format"), kind, where)
        if default is not None:
            common["default"] = str(default)
        return StringField(
            **common,
            min_length=c.min_length,
            max_length=c.max_length,
            format=text.format,
            convert=text.convert,
            verify=text.verify,
        )
    if hint is dt.date:
        _fixed_format(c, "date", "a date", where)
        _only(c, ("format",), "a date", where)
        return StringField(**common, format="date", convert=dt.date.fromisoformat)
    if hint is dt.datetime:
        _fixed_format(c, "date-time", "a datetime", where)
        _only(c, ("format",), "a datetime", where)
        return StringField(**common, format="date-time", convert=_parse_datetime)
    values, convert = _enum_values(hint, where)
    if values is not None:
        _only(c, ("titles", "legacy_titles"), "a choice", where)
        return EnumField(**common, values=values, titles=c.titles, legacy_titles=c.legacy_titles, convert=convert)
    if get_origin(hint) in (list, set, frozenset, Sequence, typing.Sequence):
        (item,) = get_args(hint) or (None,)
        values, convert = _enum_values(item, where)
        if values is None:
            raise FormError(f"{where}: a list field must be a list of Literal or Enum choices (a multi-select)")
        for length, items in (("min_length", "min_items"), ("max_length", "max_items")):  # a list's length
            value = getattr(c, length)
            if value is not None:
                add_constraint(c, items, value, c.spelled[length], where)
                setattr(c, length, None)
        _only(c, ("titles", "min_items", "max_items"), "a multi-select", where)
        outer = get_origin(hint)
        to_python = _multi(convert, outer if outer in (set, frozenset) else list)
        return MultiSelectField(
            **common, values=values, titles=c.titles, min_items=c.min_items, max_items=c.max_items, convert=to_python
        )
    raise FormError(
        f"{where}: type {getattr(hint, '__name__', hint)!r} cannot be asked in a form; fields must be "
        "str, int, float, bool, date, datetime, EmailStr, a pydantic URL, a Literal/Enum of strings, "
        "or a list of those choices"
    )


def _only(c: Constraints, allowed: Sequence[str], kind: str, where: str) -> None:
    """Refuse a constraint that does not fit the field's type: it would not reach the wire."""
    for key in c.given():
        if key not in allowed:
            raise FormError(
                f"{where}: {c.spelled.get(key, key)} does not apply to {kind} field, and an elicitation form "
                "cannot carry it"
            )


def _known_format(c: Constraints, where: str) -> None:
    if c.format is not None and c.format not in FORMATS:
        raise FormError(f"{where}: {c.spelled['format']}: format must be one of {', '.join(FORMATS)}, not {c.format!r}")


def _fixed_format(c: Constraints, fmt: str, kind: str, where: str) -> None:
    """A type that has its own format (a date, EmailStr) may repeat it, not name another."""
    if c.format is not None and c.format != fmt:
        raise FormError(f"{where}: {c.spelled['format']} contradicts {kind} field, whose format is {fmt!r}")
    c.format = None


def _bounds(c: Constraints, integer: bool, where: str) -> dict[str, Any]:
    """`minimum`/`maximum` of a number field; exclusive bounds become inclusive ones on whole numbers only."""
    for exclusive, inclusive, step in (("gt", "minimum", 1), ("lt", "maximum", -1)):
        value = getattr(c, exclusive)
        if value is None:
            continue
        if not integer:
            raise FormError(
                f"{where}: {c.spelled[exclusive]} is an exclusive bound, and an elicitation form has only inclusive "
                "ones (minimum, maximum): use ge/le, or an int field, where gt/lt become ge/le"
            )
        edge = math.floor(value) + 1 if step > 0 else math.ceil(value) - 1
        add_constraint(c, inclusive, edge, c.spelled[exclusive], where)
        setattr(c, exclusive, None)
    _only(c, ("minimum", "maximum"), "an int" if integer else "a float", where)
    return {"minimum": c.minimum, "maximum": c.maximum}


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
