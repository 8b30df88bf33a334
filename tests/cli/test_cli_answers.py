"""`--answer` values as `baton call` hands them to the questions (`cli.client_commands.given_answers`), in process."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from baton.cli.client_commands.args import CommandLineError
from baton.cli.client_commands.given_answers import GivenAnswers
from baton.client import Accepted, Question

ONE_CHOICE = {
    "message": "Which region?",
    "requestedSchema": {
        "type": "object",
        "properties": {"value": {"type": "string", "enum": ["eu", "us"]}},
        "required": ["value"],
    },
}
TWO_FIELDS = {
    "message": "Where?",
    "requestedSchema": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
        "required": ["city"],
    },
}


def given(answers: dict[str, Any], params: dict[str, Any]) -> Any:
    question = Question.from_params("q1", params)
    return asyncio.run(GivenAnswers(answers, None)(question))


def test_a_bare_value_answers_a_question_of_one_field() -> None:
    """A question asked by its choices or its type (`ctx.elicit(["eu", "us"], ...)`) has one field the person
    never sees; `--answer q1='"eu"'` answers it, as the field's object does."""
    assert given({"q1": "eu"}, ONE_CHOICE) == Accepted({"value": "eu"})
    assert given({"q1": {"value": "us"}}, ONE_CHOICE) == Accepted({"value": "us"})


def test_a_bare_value_still_fits_or_is_refused_by_the_field() -> None:
    with pytest.raises(CommandLineError, match="q1"):
        given({"q1": "mars"}, ONE_CHOICE)


def test_a_form_of_several_fields_still_wants_an_object() -> None:
    with pytest.raises(CommandLineError, match="object of field values"):
        given({"q1": "Paris"}, TWO_FIELDS)
