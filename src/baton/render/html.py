"""An HTML renderer for elicitation forms: a `FormSpec` as a real `<form>`, and its submitted values back.

`form_html(form)` writes one HTML fragment, using only the standard library: every restricted field
variant of MCP 2026-07-28 becomes the native control a browser validates by itself (constraint
validation: `required`, `min`/`max`, `minlength`/`maxlength`, `type=email|url|date|datetime-local`),
each with a `<label>`, its description tied with `aria-describedby`, its default prefilled. A host
that builds its own page inserts the fragment, reads the browser's `FormData`, and hands the pairs to
`form_values(form, pairs)`, which turns the strings back into the JSON values the schema asks for;
`FormSpec.validate` (or the client's `Question.answer`) then checks them again, whatever the page did.

Every string from the server (titles, descriptions, choices, defaults) is escaped: it reaches the
page as text, never as markup. Field names become element ids through `field_id`, which keeps them
unique and safe however the server spells them. A field whose name, title or description looks like
a secret (`baton.forms.secret_names.looks_secret`) is a password input with a warning to consider
declining, as the terminal renderer warns.

Mapping of the variants:

| field | control |
| --- | --- |
| string (`format` email, uri, date, date-time) | `<input type=text|email|url|date|datetime-local>` |
| number, integer | `<input type=number step=any|1>` |
| boolean, required | a checkbox (unchecked is `false`, so its label has no "(required)") |
| boolean, optional | a radio group: Yes, No, No answer |
| single select (enum, titled or not) | `<select>`; an empty first option when optional or without default |
| multi select | a `<fieldset>` of checkboxes, `data-min-items` / `data-max-items` for the page's own check |

A date-time is shown in the browser's local form (`datetime-local`, which has no offset): the value
read back is given this machine's local offset (the page is local, `baton dev` serves on loopback),
and a default with an offset is shown converted to local time.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from ..forms.fields import BooleanField, EnumField, FieldSpec, FormSpec, MultiSelectField, NumberField, StringField
from ..forms.secret_names import field_looks_secret

__all__ = ["field_id", "form_html", "form_values"]

_INPUT_TYPES = {"email": "email", "uri": "url", "date": "date", "date-time": "datetime-local"}
_UNSAFE_ID = re.compile(r"[^A-Za-z0-9_-]")
NO_ANSWER = ""
"""The value of the "no answer" choice of an optional boolean or select: the field is left out."""


def field_id(prefix: str, name: str) -> str:
    """An element id for field `name` that is unique within `prefix` and safe in HTML and CSS selectors."""
    safe = _UNSAFE_ID.sub(lambda m: f"_{ord(m.group()):x}_", name)
    return f"{prefix}-{safe}"


def form_html(
    form: FormSpec,
    *,
    prefix: str = "baton-form",
    label: str | None = None,
    buttons: Sequence[tuple[str, str]] = (("accept", "Send"), ("decline", "Decline"), ("cancel", "Cancel")),
    extra: str = "",
    post_to: str | None = None,
    button_name: str | None = None,
) -> str:
    """One `<form>` for `form`: its fields, then a submit button per `(value, text)` of `buttons`.

    `label` names the form for assistive technology (`aria-label`); `prefix` makes the ids unique when a
    page shows several forms. The first button submits; the others carry `formnovalidate`, so that
    declining or cancelling never waits for a valid answer. The buttons have no `name` (a field may be
    called anything, `action` included): the page reads which one was pressed from the submit event's
    `submitter.value`. `extra` is markup of the caller's own, put
    after the fields as it is (escape what it holds).

    A page without script (the server's own page of the ask ladder) gives `post_to`, the form's `action`
    (sent as a POST), and `button_name`, the name the pressed button is sent under: choose one no field has.
    """
    named = f' aria-label="{escape(label)}"' if label is not None else ""
    if post_to is not None:
        named += f' method="post" action="{escape(post_to)}"'
    pressed = f' name="{escape(button_name)}"' if button_name is not None else ""
    parts = [f'<form class="baton-form" id="{escape(prefix)}"{named}>']
    for f in form.fields:
        parts.append(_field_html(f, prefix))
    parts.append(extra)
    parts.append('<div class="baton-buttons">')
    for i, (value, text) in enumerate(buttons):
        skip = "" if i == 0 else " formnovalidate"
        parts.append(f'<button type="submit"{pressed} value="{escape(value)}"{skip}>{escape(text)}</button>')
    parts.append("</div></form>")
    return "".join(parts)


def _field_html(f: FieldSpec, prefix: str) -> str:
    fid = field_id(prefix, f.name)
    title = f.title or f.name
    secret = field_looks_secret(f)
    described: list[str] = []
    notes: list[str] = []
    if f.description:
        notes.append(f'<p class="baton-description" id="{fid}-description">{escape(f.description)}</p>')
        described.append(f"{fid}-description")
    if secret:
        notes.append(
            f'<p class="baton-warning" id="{fid}-warning">This looks like a secret (a password, key or token). '
            "A form is no place for one: consider declining.</p>"
        )
        described.append(f"{fid}-warning")
    aria = f' aria-describedby="{" ".join(described)}"' if described else ""
    mark = ' <span class="baton-required">(required)</span>' if f.required else ""
    if isinstance(f, MultiSelectField) or (isinstance(f, BooleanField) and not f.required):
        return _group_html(f, fid, title, mark, aria, notes)
    control = _control_html(f, fid, aria, secret)
    if isinstance(f, BooleanField):  # required: a checkbox, its label after it, unmarked (unticked sends false)
        label = f'<label for="{fid}">{escape(title)}</label>'
        return f'<div class="baton-field baton-check">{control}{label}{"".join(notes)}</div>'
    return f'<div class="baton-field"><label for="{fid}">{escape(title)}{mark}</label>{control}{"".join(notes)}</div>'


def _control_html(f: FieldSpec, fid: str, aria: str, secret: bool) -> str:
    name = escape(f.name)
    required = " required" if f.required else ""
    common = f'id="{fid}" name="{name}"{aria}'
    if isinstance(f, BooleanField):
        checked = " checked" if f.default is True else ""
        return f'<input type="checkbox" {common} value="true"{checked}>'
    if isinstance(f, NumberField):
        attrs = f' step="{"1" if f.integer else "any"}"'
        if f.minimum is not None:
            attrs += f' min="{_number(f.minimum)}"'
        if f.maximum is not None:
            attrs += f' max="{_number(f.maximum)}"'
        value = _value_attr(_number(f.default) if _is_number(f.default) else None)
        return f'<input type="number" {common}{attrs}{required}{value}>'
    if isinstance(f, EnumField):
        values = [str(v) for v in f.values]
        titles = f.titles or {}
        options = []
        if not f.required or f.default not in values:
            blank = "No answer" if not f.required else "Choose one"
            options.append(f'<option value="{NO_ANSWER}">{blank}</option>')
        for v in values:
            chosen = " selected" if v == f.default else ""
            options.append(f'<option value="{escape(v)}"{chosen}>{escape(titles.get(v, v))}</option>')
        return f"<select {common}{required}>{''.join(options)}</select>"
    assert isinstance(f, StringField)
    kind = "password" if secret else _INPUT_TYPES.get(f.format or "", "text")
    attrs = ' autocomplete="off"' if secret else ""
    if f.min_length is not None:
        attrs += f' minlength="{f.min_length}"'
    if f.max_length is not None:
        attrs += f' maxlength="{f.max_length}"'
    if kind == "datetime-local":
        attrs += ' step="1"'
    default = f.default if isinstance(f.default, str) else None
    if default is not None and kind == "datetime-local":
        default = _local_datetime(default)
    return f'<input type="{kind}" {common}{attrs}{required}{_value_attr(default)}>'


def _group_html(f: FieldSpec, fid: str, title: str, mark: str, aria: str, notes: list[str]) -> str:
    name = escape(f.name)
    items: list[str] = []
    if isinstance(f, MultiSelectField):
        chosen = set(f.default) if isinstance(f.default, list) else set()
        titles = f.titles or {}
        for i, v in enumerate(str(v) for v in f.values):
            checked = " checked" if v in chosen else ""
            items.append(
                f'<label><input type="checkbox" name="{name}" id="{fid}-{i}" value="{escape(v)}"{checked}> '
                f"{escape(titles.get(v, v))}</label>"
            )
        limits = ""
        if f.min_items is not None:
            limits += f' data-min-items="{f.min_items}"'
        if f.max_items is not None:
            limits += f' data-max-items="{f.max_items}"'
        kind = "multi"
    else:
        current = {True: "true", False: "false"}.get(f.default, NO_ANSWER) if isinstance(f.default, bool) else ""
        for value, text in (("true", "Yes"), ("false", "No"), (NO_ANSWER, "No answer")):
            checked = " checked" if value == current else ""
            items.append(
                f'<label><input type="radio" name="{name}" id="{fid}-{value or "none"}" value="{value}"{checked}> '
                f"{text}</label>"
            )
        limits = ""
        kind = "boolean"
    return (
        f'<fieldset class="baton-field" id="{fid}" data-kind="{kind}" data-name="{name}"{limits}{aria}>'
        f"<legend>{escape(title)}{mark}</legend>{''.join(items)}{''.join(notes)}</fieldset>"
    )


def _value_attr(value: str | None) -> str:
    return "" if value is None else f' value="{escape(value)}"'


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def _local_datetime(value: str) -> str | None:
    """An RFC 3339 date-time as `datetime-local` shows it (this machine's local time, no offset)."""
    try:
        moment = dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone()
    return moment.replace(tzinfo=None).isoformat(timespec="seconds")


def form_values(form: FormSpec, pairs: Mapping[str, Sequence[str]]) -> dict[str, Any]:
    """The answer content for the submitted `pairs` (name -> every value the browser sent for it).

    Strings become the JSON type of their field: numbers are parsed (text that is no number is kept,
    so that validation names the field), a required boolean is whether its box was checked, an empty
    value leaves an optional field out. Nothing is validated here: pass the result to
    `FormSpec.validate` or to the client's `Question.answer`.
    """
    content: dict[str, Any] = {}
    for f in form.fields:
        values = [v for v in pairs.get(f.name, ()) if isinstance(v, str)]
        if isinstance(f, MultiSelectField):
            if values or f.required:
                content[f.name] = values
            continue
        if isinstance(f, BooleanField) and f.required:
            content[f.name] = "true" in values
            continue
        value = values[0] if values else NO_ANSWER
        if value == NO_ANSWER:
            continue
        if isinstance(f, BooleanField):
            content[f.name] = value == "true" if value in ("true", "false") else value
        elif isinstance(f, NumberField):
            content[f.name] = _parse_number(value)
        elif isinstance(f, StringField) and f.format == "date-time":
            content[f.name] = _with_offset(value)
        else:
            content[f.name] = value
    return content


def _parse_number(text: str) -> Any:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return text
    return number if math.isfinite(number) else text


def _with_offset(text: str) -> str:
    """A `datetime-local` value (no offset) as RFC 3339 with this machine's offset; other text as it is."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except ValueError:
        return text
    if moment.tzinfo is None:
        moment = moment.astimezone()  # a naive time is local time
    return moment.isoformat(timespec="seconds")
