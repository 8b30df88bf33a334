"""A flow the server no longer accepts (its state expired) is started again once, the answers given offered again.

protocol.md P122: the server refuses `requestState` with one fixed -32602 message whatever the reason (P12), so
the client reads it as "expired or invalid", says so in one line and calls again from the start, once. The
form answers already given to a question of the same key and schema come back as that form's defaults; a URL
question and a field that looks like a secret never do. The fake clock (protocol.md P73) expires the flow.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Annotated, Any

import pytest

from baton import Accepted, Context, Field, Server, form
from baton.client import Question
from baton.client.restart import EarlierAnswers
from baton.forms import Answer
from baton.protocol.errors import INVALID_STATE_MESSAGE, McpError
from baton.testing import FakeClock, memory_client

TTL_S = 600  # Server(state_ttl_s=...)'s default: the clock moves past it while the person answers


@form
@dataclass
class Trip:
    city: Annotated[str, Field(title="City")]
    nights: Annotated[int, Field(title="Nights", minimum=1)]


def trips() -> Server:
    server = Server("trips")

    @server.tool()
    async def book(ctx: Context, who: str) -> str:
        trip = await ctx.elicit(Trip, f"Where does {who} go?", key="trip")
        if not isinstance(trip, Accepted):
            return "no trip"
        if not await ctx.confirm(f"Book {trip.data.city} for {trip.data.nights} nights?", key="go"):
            return "not booked"
        return f"booked {trip.data.city} x{trip.data.nights}"

    return server


class SlowPerson:
    """Answers the trip, then takes longer than the flow lives to confirm (every time, or only the first)."""

    def __init__(self, clock: FakeClock, *, slow_every_time: bool = False) -> None:
        self.clock, self.slow_every_time = clock, slow_every_time
        self.asked: list[tuple[str, dict[str, Any]]] = []  # key, the defaults shown

    async def __call__(self, question: Question) -> Answer[Any]:
        assert question.form is not None
        defaults = {f.name: f.default for f in question.form.fields if f.default is not None}
        self.asked.append((question.key, defaults))
        again = sum(key == question.key for key, _ in self.asked) > 1
        if question.key == "trip":
            return Accepted({} if again else {"city": "Oslo", "nights": 3})
        if not again or self.slow_every_time:
            self.clock.advance(TTL_S + 1)
            return Accepted({question.form.fields[0].name: True})
        return Accepted({})  # keeps what is offered


async def book(person: SlowPerson) -> str:
    async with memory_client(trips(), on_form=person) as client:
        return (await client.call_tool("book", {"who": "Ann"})).text


def test_an_expired_flow_starts_again_once_with_the_answers_offered_as_defaults(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with FakeClock() as clock, caplog.at_level(logging.WARNING, "baton.client"):
        person = SlowPerson(clock)
        result = asyncio.run(book(person))
    assert result == "booked Oslo x3"
    assert person.asked == [
        ("trip", {}),
        ("go", {}),
        ("trip", {"city": "Oslo", "nights": 3}),  # the same key and schema: offered again, Enter keeps them
        ("go", {"confirm": True}),
    ]
    notices = [r.getMessage() for r in caplog.records if "no longer accepts" in r.getMessage()]
    assert notices == [
        "tools/call 'book': the server no longer accepts this call's answers (its flow expired, or its state was "
        "refused): calling again from the start, with the answers given so far offered again"
    ]


def test_the_restart_happens_once_per_call(caplog: pytest.LogCaptureFixture) -> None:
    with FakeClock() as clock, caplog.at_level(logging.WARNING, "baton.client"):
        person = SlowPerson(clock, slow_every_time=True)
        with pytest.raises(McpError) as refused:
            asyncio.run(book(person))
    assert (refused.value.code, refused.value.message) == (-32602, INVALID_STATE_MESSAGE)
    assert [key for key, _ in person.asked] == ["trip", "go", "trip", "go"]
    assert sum("no longer accepts" in r.getMessage() for r in caplog.records) == 1


def test_a_url_consent_and_a_secret_are_never_offered_again() -> None:
    schema = {"type": "object", "properties": {"api_key": {"type": "string"}, "city": {"type": "string"}}}
    form_question = Question.from_params("k", {"message": "Details?", "requestedSchema": schema})
    url_question = Question.from_params("u", {"mode": "url", "message": "Sign in", "url": "https://example.com/a"})
    earlier = EarlierAnswers()
    earlier.remember(form_question, Accepted({"api_key": "s3cret", "city": "Oslo"}))
    earlier.remember(url_question, Accepted(None))
    assert earlier.offer(form_question) is form_question  # nothing is offered before a restart
    earlier.restarted = True
    offered = earlier.offer(form_question).form
    assert offered is not None
    assert {f.name: f.default for f in offered.fields} == {"api_key": None, "city": "Oslo"}
    assert earlier.offer(url_question) is url_question
    other_schema = {**schema, "required": ["city"]}  # the same key with another schema: a new question
    other = Question.from_params("k", {"message": "Details?", "requestedSchema": other_schema})
    assert earlier.offer(other) is other
