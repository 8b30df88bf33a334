"""Answers given on the command line: `baton call ... --answer KEY=JSON` (repeatable) and `--answers FILE`.

Each answer is for the question the server asks under KEY (the key of its `inputRequests` on
2026-07-28; on 2025-11-25 the id of its `elicitation/create`, so a `*` key, which answers any question
not named, is the way there). The JSON is the form's content as an object, or `"accept"` (a URL
question, or a form taken with its defaults), `"decline"` or `"cancel"`. An answer is checked against
the question's schema exactly as a typed one is (`Question.answer`); one that does not fit is a usage
error naming the key. A question with no answer goes to the terminal renderer (which also reads answers
piped to stdin), and with no stdin at all (closed, or /dev/null, as under CI) fails with a message that
says which `--answer` to add. A value that is not JSON is a usage error, unless it is one of those three
words. An answer whose key no question used is a warning line at the end of the call, not an error
(protocol.md P125): only then is it known unused, and by then the tool has run.
"""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...client import Accepted, Cancelled, Declined, InvalidReply, Question
from ...forms.answers import Answer
from .args import CommandLineError, OneLineError

ANY = "*"
WORDS = ("accept", "decline", "cancel")  # the answers that may be given as a bare word, not JSON


def read_answers(pairs: Sequence[str], file: str | None) -> dict[str, Any]:
    """The answers of `--answers FILE` (a JSON object of key -> answer), then `--answer KEY=JSON` over them."""
    answers: dict[str, Any] = {}
    if file is not None:
        try:
            data = json.loads(Path(file).read_text(encoding="utf-8"))
        except OSError as exc:
            raise CommandLineError(f"cannot read --answers {file}: {exc.strerror or exc}") from None
        except json.JSONDecodeError as exc:
            raise CommandLineError(f"--answers {file} is not JSON (line {exc.lineno}: {exc.msg})") from None
        if not isinstance(data, dict):
            raise CommandLineError(f"--answers {file} holds an object of question key -> answer")
        answers.update(data)
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise CommandLineError(f"--answer takes KEY=JSON, not {pair!r}")
        try:
            answers[key] = json.loads(text)
        except json.JSONDecodeError as exc:
            if text not in WORDS:
                raise CommandLineError(
                    f"--answer {key}: {text!r} is not JSON ({exc.msg} at character {exc.pos + 1}): give the form's "
                    f"content as a JSON object (--answer '{key}={{\"field\": ...}}'), or one of {', '.join(WORDS)}"
                ) from None
            answers[key] = text
    return answers


class Unanswered(OneLineError):
    """A question with no answer given and no terminal: exit 2, one line (no usage block, the command line was fine)."""


class GivenAnswers:
    """An elicitation handler: the answer given for the question's key, else `fallback` (the terminal)."""

    def __init__(
        self, answers: Mapping[str, Any], fallback: Callable[[Question], Awaitable[Answer[Any]]] | None
    ) -> None:
        self.answers = dict(answers)
        self.fallback = fallback
        self.asked: dict[str, None] = {}  # the keys of the questions asked, in order
        self.used: set[str] = set()

    async def __call__(self, question: Question) -> Answer[Any]:
        self.asked[question.key] = None
        key = question.key if question.key in self.answers else ANY if ANY in self.answers else None
        if key is None:
            if self.fallback is None or no_terminal():
                unused = self.unused()
                given = f"; the answers given are for {_keys(unused)}" if unused else ""
                raise Unanswered(
                    f"the server asks {question.message!r} (key {question.key!r}) and there is no terminal to "
                    f"answer at: pass --answer {question.key}=JSON (or --answer '*'=JSON for any question){given}"
                )
            return await self.fallback(question)
        self.used.add(key)
        reply = _one_field(question, _reply(self.answers[key]))
        try:
            question.answer(reply)
        except InvalidReply as exc:
            raise CommandLineError(f"--answer {key}: {exc}") from None
        return reply

    def unused(self) -> list[str]:
        """The keys given that no question has used (so far)."""
        return [key for key in self.answers if key not in self.used]

    def unused_warning(self) -> str | None:
        """At the end of the call, the line that says which answers no question used (protocol.md P125)."""
        unused = self.unused()
        if not unused:
            return None
        asked = f"it asked {_keys(list(self.asked))}" if self.asked else "it asked none"
        return (
            f"warning: no question used the answer given for {_keys(unused)} ({asked}); "
            "the call ran without it: check the key"
        )


def _keys(keys: list[str]) -> str:
    return ", ".join(repr(key) for key in keys)


def no_terminal() -> bool:
    """Whether nobody can answer at all: no stdin, or /dev/null (a pipe or a file still gives its lines to
    the terminal renderer, as `printf 'y\\n' | baton call ...` does)."""
    try:
        mode = os.fstat(sys.stdin.fileno()).st_mode
    except (OSError, ValueError, AttributeError):
        return True
    return stat.S_ISCHR(mode) and not sys.stdin.isatty()


def _one_field(question: Question, reply: Answer[Any]) -> Answer[Any]:
    """A bare value for a form of one field is that field's answer: `--answer q1='"eu"'` for a question asked
    by its type or its choices (`ctx.elicit(["eu", "us"], ...)`), whose one field the person never sees."""
    form = question.form
    if not isinstance(reply, Accepted) or reply.data is None or isinstance(reply.data, dict):
        return reply
    return Accepted({form.fields[0].name: reply.data}) if form is not None and len(form.fields) == 1 else reply


def _reply(value: Any) -> Answer[Any]:
    if value == "decline":
        return Declined()
    if value == "cancel":
        return Cancelled()
    if value == "accept" or value is None:
        return Accepted(None)
    return Accepted(value)
