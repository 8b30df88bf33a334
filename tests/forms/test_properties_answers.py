"""The client and the server judge a form answer alike, checked by hypothesis (issue 25): for any form
the server can ask and any answer, the server's check (`FormSpec.validate` of the form it compiled) and the
client's (`Question.answer` over the `requestedSchema` it received) accept the same answers, give the same
values, and what the client sends (its answer with the server's defaults filled in) the server accepts."""

from __future__ import annotations

import datetime as dt
from typing import Any

import orjson
from hypothesis import event, given, settings
from hypothesis import strategies as st

from baton.client import InvalidReply, Question
from baton.forms import Accepted
from baton.forms.fields import (
    FORMATS,
    BooleanField,
    Choice,
    EnumField,
    FieldSpec,
    FormSpec,
    InvalidAnswer,
    MultiSelectField,
    NumberField,
    StringField,
)

small = st.integers(0, 6)
numbers = st.integers(-5, 5) | st.floats(-5, 5, allow_nan=False, allow_infinity=False)
choices = st.lists(st.text(min_size=1, max_size=4), min_size=1, max_size=4, unique=True)


@st.composite
def fields(draw: st.DrawFn, name: str) -> FieldSpec:
    common: dict[str, Any] = {
        "name": name,
        "required": draw(st.booleans()),
        "title": draw(st.none() | st.text(max_size=8)),
        "description": draw(st.none() | st.text(max_size=8)),
    }
    kind = draw(st.sampled_from(["string", "number", "boolean", "enum", "multi"]))
    if kind == "string":
        field: FieldSpec = StringField(
            **common,
            min_length=draw(st.none() | small),
            max_length=draw(st.none() | small),
            format=draw(st.none() | st.sampled_from(FORMATS)),
        )
    elif kind == "number":
        field = NumberField(
            **common, integer=draw(st.booleans()), minimum=draw(st.none() | numbers), maximum=draw(st.none() | numbers)
        )
    elif kind == "boolean":
        field = BooleanField(**common)
    elif kind == "enum":
        values = draw(choices)
        titled = draw(st.sampled_from(["plain", "titled", "legacy"]))
        field = EnumField(
            **common,
            values=[Choice(v, v.upper()) for v in values] if titled != "plain" else values,
            legacy_titles=titled == "legacy",
        )
    else:
        values = draw(choices)
        titled = draw(st.booleans())
        field = MultiSelectField(
            **common,
            values=[Choice(v, v.upper()) for v in values] if titled else values,
            min_items=draw(st.none() | small),
            max_items=draw(st.none() | small),
        )
    field.default = draw(st.none() | value_for(field))
    return field


def value_for(field: FieldSpec) -> st.SearchStrategy[Any]:
    """Answers for one field: mostly of its kind (often valid, sometimes just outside), some of any JSON."""
    junk = st.none() | st.booleans() | st.integers(-10, 10) | st.text(max_size=6) | st.lists(st.text(max_size=3))
    kind: st.SearchStrategy[Any]
    if isinstance(field, StringField):
        kind = st.text(max_size=8)
        if field.format == "email":
            kind = st.emails() | kind
        elif field.format == "date":
            kind = st.dates().map(dt.date.isoformat) | kind
        elif field.format == "date-time":
            kind = st.datetimes(timezones=st.just(dt.UTC)).map(dt.datetime.isoformat) | kind
        elif field.format == "uri":
            kind = st.from_regex(r"https?://[a-z]{1,8}\.[a-z]{2,3}(/[a-z]{0,5})?", fullmatch=True) | kind
    elif isinstance(field, NumberField):
        kind = numbers | st.integers(-10, 10).map(float)
    elif isinstance(field, BooleanField):
        kind = st.booleans()
    elif isinstance(field, EnumField):
        kind = st.sampled_from(list(map(str, field.values)))
    else:
        assert isinstance(field, MultiSelectField)
        kind = st.lists(st.sampled_from(list(map(str, field.values))), max_size=4)
    return kind | junk


@st.composite
def forms_and_answers(draw: st.DrawFn) -> tuple[FormSpec, Any]:
    names = draw(st.lists(st.text(min_size=1, max_size=6), min_size=1, max_size=5, unique=True))
    form = FormSpec([draw(fields(name)) for name in names])
    answer: dict[str, Any] = {}
    for f in form.fields:
        if draw(st.integers(0, 4)):  # one time in five the field is left out
            answer[f.name] = draw(value_for(f))
    if draw(st.integers(0, 9)) == 0:
        answer[draw(st.text(max_size=4))] = draw(st.text(max_size=4))  # a field the form does not have
    whole: Any = draw(st.sampled_from([answer] * 8 + [None, [], "text"]))
    return form, whole


def judged(check: Any, content: Any) -> tuple[bool, Any]:
    try:
        return True, check(content)
    except (InvalidAnswer, InvalidReply):
        return False, None


@settings(max_examples=400)
@given(forms_and_answers())
def test_client_and_server_accept_the_same_answers(case: tuple[FormSpec, Any]) -> None:
    form, content = case
    params = orjson.loads(orjson.dumps({"mode": "form", "message": "?", "requestedSchema": form.schema}))
    question = Question.from_params("q", params)
    assert question.form is not None
    server = judged(form.validate, content)
    event(f"server accepts: {server[0]}")
    client = judged(question.form.validate, content)
    assert client == server, (form.schema, content)
    # What the client would send: the answer with the server's defaults filled in, then checked.
    sent = judged(lambda c: question.answer(Accepted(c)), content)
    if sent[0]:
        reply = orjson.loads(orjson.dumps(sent[1]))
        assert reply["action"] == "accept"
        ok, values = judged(form.validate, reply["content"])
        assert ok, (form.schema, content, reply)
        assert values == reply["content"]
    if server[0]:  # what the server accepts as it is, the client accepts too
        assert sent[0], (form.schema, content)
