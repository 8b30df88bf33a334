"""The argument forms of `baton dev`: a tool's input schema, a prompt's arguments, a template's variables.

Each becomes an HTML form through `baton.render.html`, the renderer elicitation forms use: a property
that the restricted form schema can express (a string with or without a format, a number, a boolean, a
single or multi select) gets its native control; any other (an object, a list of numbers, a union) gets
a JSON text box (`json:NAME`), parsed when the form is sent. `read_arguments` turns the submitted pairs
back into the arguments object, or says which field is wrong.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from html import escape
from typing import Any
from urllib.parse import quote

import orjson

from ..forms import FieldSpec, FormError, FormSpec, StringField, parse_schema
from ..render.html import field_id, form_html, form_values

JSON_PREFIX = "json:"
_TEMPLATE_VARIABLE = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.%,*]+)\}")


class PageArgumentError(ValueError):
    """A submitted argument that cannot be read; the message names it."""


@dataclass(frozen=True, slots=True)
class ArgumentForm:
    """The controls of one form: the fields the renderer handles, and the names entered as JSON."""

    form: FormSpec
    json_fields: tuple[tuple[str, bool, str], ...] = ()  # (name, required, description)

    def html(self, prefix: str, label: str, button: str) -> str:
        extra = "".join(_json_html(prefix, name, required, text) for name, required, text in self.json_fields)
        return form_html(self.form, prefix=prefix, label=label, buttons=(("run", button),), extra=extra)


def tool_form(input_schema: Mapping[str, Any]) -> ArgumentForm:
    """The form for a tool's `inputSchema`."""
    properties = input_schema.get("properties")
    properties = properties if isinstance(properties, dict) else {}
    required = input_schema.get("required")
    required = set(required) if isinstance(required, list) else set()
    fields: list[FieldSpec] = []
    json_fields: list[tuple[str, bool, str]] = []
    for name, prop in properties.items():
        one = {"type": "object", "properties": {name: prop}, "required": [name] if name in required else []}
        try:
            fields.extend(parse_schema(one).fields)
        except (FormError, ValueError, TypeError):
            text = prop.get("description") if isinstance(prop, dict) else None
            json_fields.append((name, name in required, text if isinstance(text, str) else ""))
    return ArgumentForm(FormSpec(fields, name="arguments"), tuple(json_fields))


def string_form(names: Sequence[tuple[str, bool, str | None]]) -> ArgumentForm:
    """A form of text fields: a prompt's arguments or a template's variables, as (name, required, description)."""
    return ArgumentForm(FormSpec([StringField(n, required=r, description=d) for n, r, d in names], name="arguments"))


def template_variables(template: str) -> list[str]:
    """The variable names of an RFC 6570 URI template, in order, each once."""
    names: list[str] = []
    for _, group in _TEMPLATE_VARIABLE.findall(template):
        for spec in group.split(","):
            name = spec.rstrip("*").partition(":")[0]
            if name and name not in names:
                names.append(name)
    return names


def expand_template(template: str, values: Mapping[str, str]) -> str:
    """The URI for `values` (RFC 6570 simple and reserved expansion; other operators as simple)."""

    def one(match: re.Match[str]) -> str:
        operator, group = match.groups()
        safe = ":/?#[]@!$&'()*+,;=" if operator in ("+", "#") else ""
        parts = [quote(values.get(n.rstrip("*").partition(":")[0], ""), safe=safe) for n in group.split(",")]
        return ("#" if operator == "#" else "") + ",".join(parts)

    return _TEMPLATE_VARIABLE.sub(one, template)


def read_arguments(form: ArgumentForm, pairs: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The arguments object for the submitted pairs; ArgumentError for a JSON field that does not parse."""
    arguments = form_values(form.form, pairs)
    for name, required, _ in form.json_fields:
        text = next(iter(pairs.get(JSON_PREFIX + name, ())), "").strip()
        if not text:
            if required:
                raise PageArgumentError(f"{name}: an answer is required (as JSON)")
            continue
        try:
            arguments[name] = orjson.loads(text)
        except orjson.JSONDecodeError as exc:
            raise PageArgumentError(f"{name}: not JSON ({exc})") from None
    return arguments


def _json_html(prefix: str, name: str, required: bool, description: str) -> str:
    fid = field_id(prefix, JSON_PREFIX + name)
    mark = ' <span class="baton-required">(required)</span>' if required else ""
    note = f'<p class="baton-description" id="{fid}-description">{escape(description)}</p>' if description else ""
    aria = f' aria-describedby="{fid}-description"' if description else ""
    need = " required" if required else ""
    return (
        f'<div class="baton-field"><label for="{fid}">{escape(name)} (JSON){mark}</label>'
        f'<textarea id="{fid}" name="{escape(JSON_PREFIX + name)}" rows="3" spellcheck="false"{aria}{need}>'
        f"</textarea>{note}</div>"
    )
