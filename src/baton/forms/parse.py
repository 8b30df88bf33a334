"""Reading a `requestedSchema` received from a server back into form fields (the client side).

Accepts every variant of the MCP form schema, including the deprecated `enumNames` form; anything else
is refused with `FormError`, so a client never renders a question it cannot validate. The schema comes
from a server, so each constraint's type is checked here too: a `maxLength` of "date" is a malformed
question, not a `TypeError` when the answer is checked (protocol.md P105).
"""

from __future__ import annotations

import math
from typing import Any

from .fields import (
    FORMATS,
    BooleanField,
    Choice,
    EnumField,
    FieldSpec,
    FormError,
    FormSpec,
    MultiSelectField,
    NumberField,
    StringField,
)


def parse_schema(schema: Any) -> FormSpec:
    """The form a server asked for; raises FormError when the schema is not a restricted form schema."""
    if not isinstance(schema, dict) or schema.get("type") != "object":
        raise FormError('a requestedSchema must be an object schema ({"type": "object", ...})')
    properties = schema.get("properties") or {}
    if not isinstance(properties, dict):
        raise FormError("requestedSchema.properties must be an object")
    required = schema.get("required") or []
    if not isinstance(required, list):
        raise FormError("requestedSchema.required must be a list")
    fields = [_field(name, prop, name in required) for name, prop in properties.items()]
    return FormSpec(fields, name="requested")


def _text(prop: dict[str, Any], key: str) -> str | None:
    value = prop.get(key)
    return value if isinstance(value, str) else None


def _field(name: str, prop: Any, required: bool) -> FieldSpec:
    if not isinstance(prop, dict):
        raise FormError(f"field {name!r}: a property schema must be an object")
    common: dict[str, Any] = {
        "name": name,
        "required": required,
        "title": _text(prop, "title"),
        "description": _text(prop, "description"),
        "default": prop.get("default"),
    }
    kind = prop.get("type")
    if kind == "boolean":
        return BooleanField(**common)
    if kind in ("number", "integer"):
        return NumberField(
            **common,
            integer=kind == "integer",
            minimum=_bound(name, prop, "minimum"),
            maximum=_bound(name, prop, "maximum"),
        )
    if kind == "string":
        if "oneOf" in prop:
            return EnumField(**common, values=_titled(name, prop["oneOf"]))
        if "enum" in prop:
            values = _strings(name, prop["enum"])
            names = prop.get("enumNames")
            titles = dict(zip(values, _strings(name, names), strict=False)) if names else None
            return EnumField(**common, values=values, titles=titles, legacy_titles=bool(names))
        fmt = prop.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise FormError(f"field {name!r}: unknown format {fmt!r}")
        return StringField(
            **common, min_length=_count(name, prop, "minLength"), max_length=_count(name, prop, "maxLength"), format=fmt
        )
    if kind == "array":
        items = prop.get("items")
        if not isinstance(items, dict):
            raise FormError(f"field {name!r}: a multi-select needs items")
        options: list[str | Choice] = (
            list(_titled(name, items["anyOf"])) if "anyOf" in items else list(_strings(name, items.get("enum")))
        )
        return MultiSelectField(
            **common, values=options, min_items=_count(name, prop, "minItems"), max_items=_count(name, prop, "maxItems")
        )
    raise FormError(f"field {name!r}: type {kind!r} is not allowed in an elicitation form")


def _count(name: str, prop: dict[str, Any], key: str) -> int | None:
    """A length or item count the schema gives: absent, or a non-negative integer (protocol.md P105)."""
    value = prop.get(key)
    if value is None or (type(value) is int and value >= 0):
        return value
    raise FormError(f"field {name!r}: {key} must be a non-negative integer, not {value!r}")


def _bound(name: str, prop: dict[str, Any], key: str) -> float | None:
    """A number's bound the schema gives: absent, or a finite number (protocol.md P105)."""
    value = prop.get(key)
    if value is None or (type(value) in (int, float) and math.isfinite(value)):
        return value
    raise FormError(f"field {name!r}: {key} must be a number, not {value!r}")


def _strings(name: str, values: Any) -> list[str]:
    if not isinstance(values, list) or not values or not all(isinstance(v, str) for v in values):
        raise FormError(f"field {name!r}: choices must be a non-empty list of strings")
    return values


def _titled(name: str, options: Any) -> list[Choice]:
    if not isinstance(options, list) or not options:
        raise FormError(f"field {name!r}: titled choices must be a non-empty list")
    out = []
    for option in options:
        if not isinstance(option, dict) or not isinstance(option.get("const"), str):
            raise FormError(f"field {name!r}: each titled choice needs a string const")
        title = option.get("title")
        out.append(Choice(option["const"], title if isinstance(title, str) else option["const"]))
    return out
