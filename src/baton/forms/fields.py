"""Form fields: each one variant of the restricted schema (MCP 2026-07-28), its JSON form and its check."""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import orjson

from ..protocol.errors import UsageError

FORMATS = ("email", "uri", "date", "date-time")
_EMAIL = re.compile(r"[^@\s]+@[^@\s.]+(\.[^@\s.]+)+\Z")
# RFC 3339 full-date and date-time (with a mandatory offset); `T` and `Z` may be lower case (§5.6).
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}\Z")
_DATE_TIME = re.compile(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}[Tt][0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]+)?([Zz]|[+-][0-9]{2}:[0-9]{2})\Z"
)


@dataclass(frozen=True, slots=True)
class Field:
    """Extra facts about a form field, given with `typing.Annotated[T, Field(...)]`, never as a default value.

    pydantic's `Field` and annotated-types constraints are read as well (`baton.forms.constraints`).
    """

    title: str | None = None
    description: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    minimum: float | None = None
    maximum: float | None = None
    titles: Mapping[str, str] | None = None  # display titles of enum values
    legacy_titles: bool = False  # send titles as the deprecated `enumNames` instead of `oneOf`
    min_items: int | None = None
    max_items: int | None = None


@dataclass(frozen=True, slots=True)
class Choice:
    """One value of an enum field with its display title."""

    value: str
    title: str


class FormError(UsageError, TypeError):
    """A form that the wire cannot express (nested objects, free lists, unions, ...)."""


class InvalidAnswer(ValueError):
    """An answer that does not satisfy the question; the message says what to correct."""


@dataclass(slots=True)
class FieldSpec:
    """The common part of every field: its name, whether it is required, its texts and default."""

    name: str
    required: bool = True
    title: str | None = None
    description: str | None = None
    default: Any = None
    # Turns the validated JSON value into the Python value handed to the author (e.g. a date, an Enum).
    convert: Callable[[Any], Any] | None = field(default=None, repr=False, compare=False)

    def schema(self) -> dict[str, Any]:
        out: dict[str, Any] = self._schema()
        if self.title is not None:
            out["title"] = self.title
        if self.description is not None:
            out["description"] = self.description
        if self.default is not None:
            out["default"] = self.default
        return out

    def _schema(self) -> dict[str, Any]:
        raise NotImplementedError

    def check(self, value: Any) -> Any:
        """The validated JSON value; raises InvalidAnswer."""
        raise NotImplementedError

    def _bad(self, why: str) -> InvalidAnswer:
        return InvalidAnswer(f"{self.title or self.name}: {why}")


@dataclass(slots=True)
class StringField(FieldSpec):
    min_length: int | None = None
    max_length: int | None = None
    format: str | None = None
    # A further check by the Python type the answer becomes (pydantic's `HttpUrl`, `EmailStr`): raises
    # ValueError with a short reason, and the answer is asked again. Never on the wire.
    verify: Callable[[str], Any] | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.format is not None and self.format not in FORMATS:
            raise FormError(f"field {self.name!r}: format must be one of {', '.join(FORMATS)}")

    def _schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "string"}
        if self.min_length is not None:
            out["minLength"] = self.min_length
        if self.max_length is not None:
            out["maxLength"] = self.max_length
        if self.format is not None:
            out["format"] = self.format
        return out

    def check(self, value: Any) -> Any:
        if not isinstance(value, str):
            raise self._bad("expected text")
        if self.min_length is not None and len(value) < self.min_length:
            raise self._bad(f"must be at least {self.min_length} characters")
        if self.max_length is not None and len(value) > self.max_length:
            raise self._bad(f"must be at most {self.max_length} characters")
        if self.format is not None and not _format_ok(self.format, value):
            raise self._bad(f"must be a valid {self.format}")
        if self.verify is not None:
            try:
                self.verify(value)
            except ValueError as exc:
                raise self._bad(f"is not accepted: {exc}") from None
        return value


def _format_ok(fmt: str, value: str) -> bool:
    if fmt == "email":
        return bool(_EMAIL.match(value))
    try:
        if fmt == "uri":
            parts = urlsplit(value)  # ValueError for a bracketed host that is not IPv6 ("http://[")
            return bool(parts.scheme) and bool(parts.netloc or parts.path) and " " not in value
        if fmt == "date":
            return bool(_DATE.match(value)) and bool(dt.date.fromisoformat(value))
        if not _DATE_TIME.match(value):
            return False
        dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


@dataclass(slots=True)
class NumberField(FieldSpec):
    integer: bool = False
    minimum: float | None = None
    maximum: float | None = None

    def _schema(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": "integer" if self.integer else "number"}
        if self.minimum is not None:
            out["minimum"] = self.minimum
        if self.maximum is not None:
            out["maximum"] = self.maximum
        return out

    def check(self, value: Any) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not _finite(value):
            raise self._bad("expected a number")
        if self.integer and isinstance(value, float):
            if not value.is_integer():
                raise self._bad("expected a whole number")
            value = int(value)
        if self.minimum is not None and value < self.minimum:
            raise self._bad(f"must be at least {_num(self.minimum)}")
        if self.maximum is not None and value > self.maximum:
            raise self._bad(f"must be at most {_num(self.maximum)}")
        return value


def _finite(value: float) -> bool:
    """NaN and infinities are no JSON numbers, whatever a lenient parser let through."""
    return not isinstance(value, float) or math.isfinite(value)


def _num(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(slots=True)
class BooleanField(FieldSpec):
    def _schema(self) -> dict[str, Any]:
        return {"type": "boolean"}

    def check(self, value: Any) -> Any:
        if not isinstance(value, bool):
            raise self._bad("expected true or false")
        return value


def _choices(values: Sequence[str | Choice], titles: Mapping[str, str] | None) -> tuple[list[str], dict[str, str]]:
    plain: list[str] = []
    named: dict[str, str] = dict(titles or {})
    for item in values:
        if isinstance(item, Choice):
            plain.append(item.value)
            named[item.value] = item.title
        else:
            plain.append(item)
    return plain, named


@dataclass(slots=True)
class EnumField(FieldSpec):
    """A single choice: untitled (`enum`), titled (`oneOf`), or the deprecated `enumNames` form."""

    values: Sequence[str | Choice] = ()
    titles: Mapping[str, str] | None = None
    legacy_titles: bool = False

    def __post_init__(self) -> None:
        plain, named = _choices(self.values, self.titles)
        if not plain:
            raise ValueError(f"field {self.name!r}: an enum needs at least one value")
        self.values, self.titles = plain, named or None

    def _schema(self) -> dict[str, Any]:
        values: list[str] = list(self.values)  # type: ignore[arg-type]
        titles = self.titles
        if titles and not self.legacy_titles:
            return {"type": "string", "oneOf": [{"const": v, "title": titles.get(v, v)} for v in values]}
        out: dict[str, Any] = {"type": "string", "enum": values}
        if titles:
            out["enumNames"] = [titles.get(v, v) for v in values]
        return out

    def check(self, value: Any) -> Any:
        if not isinstance(value, str) or value not in self.values:
            raise self._bad(f"must be one of {', '.join(map(str, self.values))}")
        return value


@dataclass(slots=True)
class MultiSelectField(FieldSpec):
    """Several choices out of a fixed set, untitled (`items.enum`) or titled (`items.anyOf`)."""

    values: Sequence[str | Choice] = ()
    titles: Mapping[str, str] | None = None
    min_items: int | None = None
    max_items: int | None = None

    def __post_init__(self) -> None:
        plain, named = _choices(self.values, self.titles)
        if not plain:
            raise ValueError(f"field {self.name!r}: a multi-select needs at least one value")
        self.values, self.titles = plain, named or None

    def _schema(self) -> dict[str, Any]:
        values: list[str] = list(self.values)  # type: ignore[arg-type]
        items: dict[str, Any]
        if self.titles:
            items = {"anyOf": [{"const": v, "title": self.titles.get(v, v)} for v in values]}
        else:
            items = {"type": "string", "enum": values}
        out: dict[str, Any] = {"type": "array", "items": items}
        if self.min_items is not None:
            out["minItems"] = self.min_items
        if self.max_items is not None:
            out["maxItems"] = self.max_items
        return out

    def check(self, value: Any) -> Any:
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise self._bad("expected a list of choices")
        unknown = [v for v in value if v not in self.values]
        if unknown:
            raise self._bad(f"{', '.join(unknown)} is not one of {', '.join(map(str, self.values))}")
        if len(set(value)) != len(value):
            raise self._bad("a choice appears twice")
        if self.min_items is not None and len(value) < self.min_items:
            raise self._bad(f"choose at least {self.min_items}")
        if self.max_items is not None and len(value) > self.max_items:
            raise self._bad(f"choose at most {self.max_items}")
        return value


class FormSpec:
    """A compiled form: its fields, its wire schema (built once) and how answers become Python values."""

    __slots__ = ("build", "fields", "name", "schema", "schema_json")

    def __init__(
        self,
        fields: Sequence[FieldSpec],
        build: Callable[[dict[str, Any]], Any] | None = None,
        name: str = "form",
    ) -> None:
        seen: set[str] = set()
        for f in fields:
            if f.name in seen:
                raise FormError(f"form {name!r}: field {f.name!r} appears twice")
            seen.add(f.name)
        self.fields = tuple(fields)
        self.name = name
        self.build = build
        schema: dict[str, Any] = {"type": "object", "properties": {f.name: f.schema() for f in self.fields}}
        required = [f.name for f in self.fields if f.required]
        if required:
            schema["required"] = required
        self.schema = schema
        self.schema_json = orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)

    def validate(self, content: Any) -> dict[str, Any]:
        """The validated JSON values of an accepted answer; raises InvalidAnswer listing every problem."""
        if content is None:
            content = {}
        if not isinstance(content, dict):
            raise InvalidAnswer("the answer must be an object of field values")
        values: dict[str, Any] = {}
        problems: list[str] = []
        for f in self.fields:
            if f.name in content and content[f.name] is not None:
                try:
                    values[f.name] = f.check(content[f.name])
                except InvalidAnswer as exc:
                    problems.append(str(exc))
            elif f.required:
                problems.append(f"{f.title or f.name}: an answer is required")
        if problems:
            raise InvalidAnswer("; ".join(problems))
        return values

    def to_python(self, values: dict[str, Any]) -> Any:
        """Hand validated JSON values to the author, as the type the form was built from."""
        converted = dict(values)
        for f in self.fields:
            if f.convert is not None and f.name in converted:
                converted[f.name] = f.convert(converted[f.name])
        return self.build(converted) if self.build is not None else converted
