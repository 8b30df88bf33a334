"""`baton.render.html` on its own: every field variant as its native control, server text escaped, and the
submitted values read back into what the schema asks for (then checked by the form's own validation)."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

import pytest

from baton.devui.arguments import expand_template, read_arguments, template_variables, tool_form
from baton.devui.live import structured_check
from baton.devui.masking import MASK, masked
from baton.forms import parse_schema
from baton.render.html import field_id, form_html, form_values

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "email": {"type": "string", "format": "email", "title": "Email"},
        "site": {"type": "string", "format": "uri"},
        "day": {"type": "string", "format": "date"},
        "at": {"type": "string", "format": "date-time", "default": "2026-01-01T10:00:00Z"},
        "name": {"type": "string", "minLength": 2, "maxLength": 5},
        "seats": {"type": "integer", "minimum": 1, "maximum": 5, "default": 2},
        "ratio": {"type": "number", "minimum": 0.5},
        "agree": {"type": "boolean"},
        "news": {"type": "boolean", "default": True},
        "plan": {"type": "string", "oneOf": [{"const": "b", "title": "Basic"}, {"const": "p", "title": "Pro"}]},
        "size": {"type": "string", "enum": ["s", "m"], "default": "m"},
        "tags": {"type": "array", "items": {"type": "string", "enum": ["x", "y", "z"]}, "minItems": 1, "maxItems": 2},
    },
    "required": ["email", "agree", "plan", "tags"],
}


class Elements(HTMLParser):
    """Every start tag with its attributes, and the text, of an HTML fragment."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def parsed(html: str) -> Elements:
    out = Elements()
    out.feed(html)
    return out


def control(html: str, name: str) -> tuple[str, dict[str, str | None]]:
    return next((tag, a) for tag, a in parsed(html).tags if a.get("name") == name and tag in ("input", "select"))


def test_a_required_checkbox_is_not_marked_required() -> None:
    """Unticked sends `false`, a valid answer: "(required)" beside the box would say otherwise."""
    html = form_html(parse_schema(SCHEMA), prefix="f", label="Sign up")
    box = html[html.index('id="f-agree"') :]
    label = box[box.index("<label") : box.index("</label>")]
    assert label.endswith(">agree") and "required" not in label
    assert "(required)" in html[html.index('for="f-email"') :].split("</label>")[0]  # the others keep it


def test_each_variant_is_its_native_control() -> None:
    html = form_html(parse_schema(SCHEMA), prefix="f", label="Sign up")
    assert control(html, "email") == ("input", {"type": "email", "id": "f-email", "name": "email", "required": None})
    assert control(html, "site")[1]["type"] == "url"
    assert control(html, "day")[1]["type"] == "date"
    at = control(html, "at")[1]
    assert at["type"] == "datetime-local" and at["value"] is not None and at["value"].count(":") == 2
    name = control(html, "name")[1]
    assert (name["minlength"], name["maxlength"]) == ("2", "5")
    seats = control(html, "seats")[1]
    assert (seats["type"], seats["step"], seats["min"], seats["max"], seats["value"]) == ("number", "1", "1", "5", "2")
    assert control(html, "ratio")[1]["step"] == "any"
    assert control(html, "agree")[1]["type"] == "checkbox"  # required boolean: a box
    radios = [a for tag, a in parsed(html).tags if a.get("name") == "news"]
    assert [r["value"] for r in radios] == ["true", "false", ""] and "checked" in radios[0]
    assert control(html, "plan")[0] == "select"
    options = [a.get("value") for tag, a in parsed(html).tags if tag == "option"]
    assert options[:3] == ["", "b", "p"]  # required without default: "Choose one" first
    assert "Basic" in parsed(html).text and "Pro" in parsed(html).text
    assert ("size" in html) and '<option value="m" selected>' in html
    tags = next(a for tag, a in parsed(html).tags if tag == "fieldset" and a.get("data-name") == "tags")
    assert (tags["data-min-items"], tags["data-max-items"]) == ("1", "2")
    buttons = [a for tag, a in parsed(html).tags if tag == "button"]
    assert [b["value"] for b in buttons] == ["accept", "decline", "cancel"]
    assert "formnovalidate" not in buttons[0] and "formnovalidate" in buttons[1]
    assert all("name" not in b for b in buttons)  # a field may be named `action`
    assert ("form", {"class": "baton-form", "id": "f", "aria-label": "Sign up"}) in parsed(html).tags


def test_every_label_names_its_control_and_descriptions_are_tied() -> None:
    schema = {"type": "object", "properties": {"a b": {"type": "string", "description": "Say <it>"}}}
    html = form_html(parse_schema(schema), prefix="p")
    tags = parsed(html).tags
    fid = field_id("p", "a b")
    assert ("label", {"for": fid}) in tags
    assert control(html, "a b")[1]["aria-describedby"] == f"{fid}-description"
    assert " " not in fid


@pytest.mark.parametrize("evil", ['"><script>alert(1)</script>', "<img src=x onerror=alert(1)>", "' onmouseover='x"])
def test_server_text_is_only_ever_text(evil: str) -> None:
    schema = {
        "type": "object",
        "properties": {
            "f": {"type": "string", "title": evil, "description": evil, "default": evil},
            "g": {"type": "string", "oneOf": [{"const": evil, "title": evil}]},
            "h": {"type": "array", "items": {"anyOf": [{"const": evil, "title": evil}]}},
        },
    }
    html = form_html(parse_schema(schema), label=evil)
    elements = parsed(html)
    assert {tag for tag, _ in elements.tags} <= {"form", "div", "label", "span", "input", "p", "select", "option",
                                                 "fieldset", "legend", "button"}  # fmt: skip
    assert not any(k.startswith("on") for _, a in elements.tags for k in a)
    assert evil in "".join(elements.text)


def test_a_secret_looking_field_is_a_password_with_a_warning() -> None:
    html = form_html(parse_schema({"type": "object", "properties": {"api_key": {"type": "string"}}}))
    assert control(html, "api_key")[1]["type"] == "password"
    assert "consider declining" in html


def test_submitted_values_become_the_schema_types() -> None:
    form = parse_schema(SCHEMA)
    content = form_values(
        form,
        {
            "email": ["a@example.com"],
            "seats": ["3"],
            "ratio": ["0.75"],
            "agree": ["true"],
            "news": [""],
            "plan": ["p"],
            "tags": ["x", "z"],
            "name": [""],
            "at": ["2026-05-01T08:30:00"],
        },
    )
    assert content["seats"] == 3 and content["ratio"] == 0.75 and content["agree"] is True
    assert "news" not in content and "name" not in content  # "no answer" leaves an optional field out
    assert content["tags"] == ["x", "z"]
    assert content["at"].startswith("2026-05-01T08:30:00") and content["at"][19] in "+-"
    assert form.validate(content)["plan"] == "p"


def test_what_the_page_let_through_is_still_checked() -> None:
    form = parse_schema(SCHEMA)
    content = form_values(form, {"email": ["nope"], "seats": ["many"], "plan": ["q"], "tags": []})
    assert content["seats"] == "many"  # kept, so that validation names the field
    assert content["agree"] is False  # an unchecked required box is "no"
    with pytest.raises(ValueError) as caught:
        form.validate(content)
    for problem in (
        "Email: must be a valid email",
        "seats: expected a number",
        "plan: must be one of",
        "tags: choose at least 1",
    ):
        assert problem in str(caught.value)


def test_tool_forms_take_any_other_property_as_json() -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "array", "items": {"type": "integer"}}},
        "required": ["city", "days"],
    }
    form = tool_form(schema)
    assert [f.name for f in form.form.fields] == ["city"]
    assert form.json_fields == (("days", True, ""),)
    assert 'name="json:days"' in form.html("t", "Arguments", "Call")
    assert read_arguments(form, {"city": ["Oslo"], "json:days": ["[1, 2]"]}) == {"city": "Oslo", "days": [1, 2]}
    with pytest.raises(ValueError, match="days: not JSON"):
        read_arguments(form, {"city": ["Oslo"], "json:days": ["[1,"]})
    with pytest.raises(ValueError, match="days: an answer is required"):
        read_arguments(form, {"city": ["Oslo"]})


def test_uri_templates() -> None:
    assert template_variables("test://template/{id}/data{?q,page}") == ["id", "q", "page"]
    assert expand_template("test://template/{id}/data", {"id": "a b/c"}) == "test://template/a%20b%2Fc/data"
    assert expand_template("file:///{+path}", {"path": "a/b c"}) == "file:///a/b%20c"


def test_the_raw_view_masks_credentials_and_secret_answers() -> None:
    leg = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "t",
            "arguments": {"note": "Bearer abc.def", "q": "plain"},
            "inputResponses": {"k": {"action": "accept", "content": {"api_key": "sk-1", "city": "Oslo"}}},
            "_meta": {"authorization": "x"},
        },
    }
    shown = masked(leg)
    assert shown["params"]["arguments"] == {"note": MASK, "q": "plain"}
    assert shown["params"]["inputResponses"]["k"]["content"] == {"api_key": MASK, "city": "Oslo"}
    assert shown["params"]["_meta"]["authorization"] == MASK
    assert leg["params"]["inputResponses"]["k"]["content"]["api_key"] == "sk-1"  # a copy: the wire is untouched
    reply = {"jsonrpc": "2.0", "id": 0, "result": {"action": "accept", "content": {"password": "p", "n": 1}}}
    assert masked(reply)["result"]["content"] == {"password": MASK, "n": 1}


def test_structured_content_is_checked_against_the_output_schema() -> None:
    schema = {"type": "object", "properties": {"total": {"type": "integer"}}, "required": ["total"]}
    assert structured_check(schema, {"total": 3}) == "ok"
    assert structured_check(schema, {"total": "3"}).startswith("does not match the outputSchema at total:")
    assert structured_check(schema, None) == "the tool has an outputSchema but sent no structuredContent"


def test_a_page_without_script_posts_the_form_and_names_the_pressed_button() -> None:
    """The server's own page (P145) has no script: the form posts itself and the buttons carry their name."""
    form = parse_schema({"type": "object", "properties": {"confirm": {"type": "boolean"}}, "required": ["confirm"]})
    html = form_html(form, post_to='/connect/t"x', button_name="__baton_action")
    assert '<form class="baton-form" id="baton-form" method="post" action="/connect/t&quot;x">' in html
    assert '<button type="submit" name="__baton_action" value="decline" formnovalidate>Decline</button>' in html
    assert "method=" not in form_html(form) and 'name="__baton_action"' not in form_html(form)
