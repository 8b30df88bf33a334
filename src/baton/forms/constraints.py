"""Reading what is written on a form field into one `Constraints`, refusing what this module does not know.

Sources, in any mix: Baton's `Field`; pydantic's `Field(...)`/`FieldInfo` (title, description,
`json_schema_extra`, and its constraints); annotated-types (`Ge`, `Le`, `Gt`, `Lt`, `Interval`, `MinLen`,
`MaxLen`, `Len`, `doc(...)` as the description); pydantic's constr-style metadata (`constr`, `conint`,
`confloat`, `StringConstraints`) and its settings that cannot change a JSON answer (`Strict`, `AllowInfNan`).
pydantic is never imported: its objects are recognised by their shape.

Nothing is silently dropped: metadata this module does not know, a constraint the restricted schema has no
word for (`pattern`, `multiple_of`, `strip_whitespace`, a validator function, `examples`, ...) and a
`json_schema_extra` key other than those in `SCHEMA_EXTRA_KEYS` are a `FormError` naming the field and the
constraint. Whether a constraint fits the field's type (a length on a number, `gt` on a float) is decided
by `baton.forms.build`, which knows the type.

Merging: Baton's `Field` gives the title and description first, then pydantic's, and a `json_schema_extra`
title or description replaces both (as in pydantic's own JSON schema). Bounds given twice keep the
tightest; two different formats are a `FormError`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .fields import Field, FormError

# `json_schema_extra` keys the restricted schema can carry, and the `Constraints` attribute each one sets.
SCHEMA_EXTRA_KEYS: Mapping[str, str] = {
    "title": "title",
    "description": "description",
    "format": "format",
    "minLength": "min_length",
    "maxLength": "max_length",
    "minimum": "minimum",
    "maximum": "maximum",
    "exclusiveMinimum": "gt",
    "exclusiveMaximum": "lt",
    "minItems": "min_items",
    "maxItems": "max_items",
}

# Bounds: a lower one keeps the largest value given, an upper one the smallest.
_LOWER = frozenset({"min_length", "minimum", "gt", "min_items"})
_UPPER = frozenset({"max_length", "maximum", "lt", "max_items"})
_COUNTS = frozenset({"min_length", "max_length", "min_items", "max_items"})

# annotated-types bounds by class name: the attribute read and the constraint it sets.
_ATOMS: Mapping[str, tuple[str, str]] = {
    "Gt": ("gt", "gt"),
    "Ge": ("ge", "minimum"),
    "Lt": ("lt", "lt"),
    "Le": ("le", "maximum"),
    "MinLen": ("min_length", "min_length"),
    "MaxLen": ("max_length", "max_length"),
}
_FOREIGN_MODULES = ("annotated_types", "pydantic")

# pydantic settings (`Strict`, `AllowInfNan`, `FailFast`, or in its general metadata) that change nothing for
# a JSON answer: it is already exactly a string, a finite number or a boolean (protocol.md P15), so strict
# parsing, NaN/infinity and number-to-string coercion cannot arise, and `fail_fast` only orders errors.
_NO_OPS = frozenset({"strict", "allow_inf_nan", "coerce_numbers_to_str", "fail_fast", "union_mode"})


@dataclasses.dataclass(slots=True)
class Constraints:
    """Everything written on one field, before its type decides what goes on the wire.

    `spelled` says how the author wrote each constraint (`gt=0`, `json_schema_extra['pattern']`), for errors.
    """

    title: str | None = None
    description: str | None = None
    format: str | None = None
    min_length: int | None = None
    max_length: int | None = None
    minimum: float | None = None
    maximum: float | None = None
    gt: float | None = None
    lt: float | None = None
    min_items: int | None = None
    max_items: int | None = None
    titles: Mapping[str, str] | None = None
    legacy_titles: bool = False
    spelled: dict[str, str] = dataclasses.field(default_factory=dict)

    def given(self) -> list[str]:
        """The constraints that were given, texts aside (every field carries a title and a description)."""
        keys = [k for k in _LOWER | _UPPER | {"format", "titles"} if getattr(self, k) is not None]
        if self.legacy_titles:
            keys.append("legacy_titles")
        return sorted(keys)


def read_constraints(items: Iterable[Any], where: str, into: Constraints | None = None) -> Constraints:
    """The constraints of a field from its metadata (`Annotated` arguments), added to `into` if given."""
    items = list(items)
    out = into if into is not None else Constraints()
    for item in items:  # Baton's own Field first: its texts win over other libraries'
        if isinstance(item, Field):
            _read_baton(out, item, where)
    for item in items:
        if not isinstance(item, Field):
            _read(out, item, where, inside_annotated=True)
    return out


def read_field_info(info: Any, where: str) -> Constraints:
    """The constraints of a pydantic model's or pydantic dataclass's field (its default is the caller's business)."""
    out = read_constraints([m for m in info.metadata if isinstance(m, Field)], where)
    _read_field_info(out, info, where, inside_annotated=False)
    return out


def add_constraint(out: Constraints, attr: str, value: Any, spelling: str, where: str) -> None:
    """Add one constraint (`min_length`, `maximum`, `gt`, `format`, ...): a bound keeps the tightest value."""
    _set(out, attr, value, spelling, where)


def is_field_info(item: Any) -> bool:
    """Whether `item` is a pydantic `FieldInfo` (what `pydantic.Field(...)` returns)."""
    return type(item).__name__ == "FieldInfo" and type(item).__module__.split(".")[0] == "pydantic"


def read_schema_extra(out: Constraints, extra: Any, where: str, source: str = "json_schema_extra") -> None:
    """Add a `json_schema_extra` dict; any key the restricted schema cannot carry is a `FormError`."""
    if extra is None:
        return
    if not isinstance(extra, Mapping):
        raise FormError(
            f"{where}: a {source} that is not a dict (a function) cannot be read into an elicitation form; "
            f"give a dict with keys among {', '.join(SCHEMA_EXTRA_KEYS)}"
        )
    for key, value in extra.items():
        attr = SCHEMA_EXTRA_KEYS.get(key)
        if attr is None:
            raise FormError(
                f"{where}: {source}[{key!r}] cannot be carried by an elicitation form (a form field may carry "
                f"{', '.join(SCHEMA_EXTRA_KEYS)})"
            )
        spelling = f"{source}[{key!r}]"
        if attr in ("title", "description"):
            if not isinstance(value, str):
                raise FormError(f"{where}: {spelling} must be a string")
            setattr(out, attr, value)
        else:
            _set(out, attr, value, spelling, where)


def _read_baton(out: Constraints, f: Field, where: str) -> None:
    if out.title is None:
        out.title = f.title
    if out.description is None:
        out.description = f.description
    for attr in ("format", "min_length", "max_length", "minimum", "maximum", "min_items", "max_items"):
        value = getattr(f, attr)
        if value is not None:
            _set(out, attr, value, f"Field({attr}={value!r})", where)
    if f.titles is not None:
        out.titles = {**(out.titles or {}), **f.titles}
        out.spelled.setdefault("titles", "Field(titles=...)")
    if f.legacy_titles:
        out.legacy_titles = True
        out.spelled.setdefault("legacy_titles", "Field(legacy_titles=True)")


def _read(out: Constraints, item: Any, where: str, *, inside_annotated: bool) -> None:
    if item is None:  # pydantic's conint/confloat leave None where a constraint was not given
        return
    if isinstance(item, Field):
        _read_baton(out, item, where)
        return
    if is_field_info(item):
        _read_field_info(out, item, where, inside_annotated=inside_annotated)
        return
    if getattr(item, "__is_annotated_types_grouped_metadata__", False) is True:  # Interval, Len, StringConstraints
        for part in item:
            _read(out, part, where, inside_annotated=inside_annotated)
        return
    kind = type(item)
    name = kind.__name__
    foreign = kind.__module__.split(".")[0] in _FOREIGN_MODULES
    if foreign and name in _ATOMS:
        attr, key = _ATOMS[name]
        value = getattr(item, attr)
        _set(out, key, value, f"{attr}={value!r}", where)
    elif foreign and name in ("Strict", "AllowInfNan", "FailFast"):
        return  # see _NO_OPS
    elif name in ("DocInfo", "Doc") and isinstance(getattr(item, "documentation", None), str):  # also typing's
        if out.description is None:
            out.description = item.documentation
    elif foreign and name == "_PydanticGeneralMetadata":
        for key, value in vars(item).items():
            if value is not None and key not in _NO_OPS:  # StringConstraints lists what it was not given as None
                _refuse(where, f"{key}={value!r}")
    else:
        _refuse(where, _spell(item))


def _read_field_info(out: Constraints, info: Any, where: str, *, inside_annotated: bool) -> None:
    if inside_annotated and (_has_default(info) or info.default_factory is not None):
        raise FormError(
            f"{where}: a default inside Annotated[..., Field(...)] is not applied here; give it after '=' instead"
        )
    if out.title is None and isinstance(info.title, str):
        out.title = info.title
    if out.description is None and isinstance(info.description, str):
        out.description = info.description
    if getattr(info, "examples", None):
        _refuse(where, "examples=...", hint="describe the expected answer in the description instead")
    deprecated = getattr(info, "deprecated", None)
    if deprecated:
        _refuse(where, f"deprecated={deprecated!r}", hint="a deprecated field has no place in a question")
    for part in info.metadata:
        if inside_annotated or not isinstance(part, Field):  # read_field_info reads Baton's Field first
            _read(out, part, where, inside_annotated=inside_annotated)
    read_schema_extra(out, info.json_schema_extra, where)


def _set(out: Constraints, attr: str, value: Any, spelling: str, where: str) -> None:
    if attr == "format":
        if not isinstance(value, str):
            raise FormError(f"{where}: {spelling} must be a string")
        if out.format is not None and out.format != value:
            first = out.spelled["format"]
            raise FormError(f"{where}: two formats, {out.format!r} ({first}) and {value!r} ({spelling})")
        if out.format is None:
            out.format, out.spelled["format"] = value, spelling
        return
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormError(
            f"{where}: {spelling} cannot be carried by an elicitation form: its bounds and lengths are numbers"
        )
    if attr in _COUNTS and (not isinstance(value, int) or value < 0):
        raise FormError(f"{where}: {spelling} must be a whole number, 0 or more")
    current = getattr(out, attr)
    tighter: Callable[[float, float], float] = max if attr in _LOWER else min
    if current is None or tighter(current, value) != current:
        setattr(out, attr, value)
        out.spelled[attr] = spelling


def _refuse(where: str, spelling: str, *, hint: str = "check it after the answer arrives") -> None:
    raise FormError(f"{where}: the constraint {spelling} has no equivalent in an elicitation form ({hint})")


def _spell(item: Any) -> str:
    """A metadata object as the author wrote it: `multiple_of=2` (pydantic's spelling of `MultipleOf(2)`)."""
    if type(item).__name__ == "MultipleOf":
        return f"multiple_of={getattr(item, 'multiple_of', '?')!r}"
    return repr(item)


def _has_default(info: Any) -> bool:
    return type(info.default).__name__ != "PydanticUndefinedType" and info.default is not Ellipsis
