"""Form answers against any `requestedSchema`: the input is a JSON array `[schema, answer]`. The schema is read
as the client reads it (`parse_schema`), the answer validated by the form (the server's `FormSpec.validate`)
and by the client's `Question.answer`; the two must agree."""

from __future__ import annotations

from typing import Any

import orjson

from baton.client.errors import InvalidReply, MalformedQuestion
from baton.client.questions import Question
from baton.forms import Accepted, FormError, parse_schema
from baton.forms.fields import InvalidAnswer

from ..harness import Finding, Target


def one(data: bytes) -> None:
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return
    if not isinstance(doc, list) or len(doc) != 2:
        return
    schema, answer = doc
    try:
        question = Question.from_params("q", {"message": "m", "requestedSchema": schema})
    except MalformedQuestion:
        return
    assert question.form is not None
    try:
        server: Any = question.form.validate(answer)
    except InvalidAnswer:
        server = None
    try:
        client = question.answer(Accepted(answer))
    except InvalidReply:
        client = None
    if server is not None and client is None:
        raise Finding("the client refused an answer the form accepts")
    if client is not None:
        question.form.validate(client["content"])  # what the client sends, the server accepts
    parse_schema(question.form.schema)  # a form's own schema reads back


TARGET = Target("form_answers", "form answers vs any requestedSchema, server and client validation", one, (FormError,))
