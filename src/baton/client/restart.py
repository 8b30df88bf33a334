"""A flow the server no longer accepts: start the request once more, offering the answers already given (P122).

A server refuses `requestState` with one fixed -32602 message whatever the reason (protocol.md P12), so
the client can only read it as "expired or invalid". When a retry (a leg that carried state) gets that
answer, `Client.drive` calls again from the first leg, once per request. The form answers given before
are offered again: a question asked under the same key with the same schema gets a form whose defaults
are those answers, so the person keeps them with Enter instead of typing them again, and still sees and
sends every question. Never offered again: a URL question (its consent is asked afresh), a field that
looks like a secret, and any reply but an accepted form.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ..forms import Accepted, Answer, FormSpec
from ..forms.secret_names import field_looks_secret
from ..protocol.errors import INVALID_PARAMS, INVALID_STATE_MESSAGE, McpError
from .questions import Question


def state_refused(exc: McpError) -> bool:
    """Whether an error is the server refusing `requestState` (expired or invalid: it never says which)."""
    return exc.code == INVALID_PARAMS and exc.message == INVALID_STATE_MESSAGE


def restart_notice(method: str, params: dict[str, Any]) -> str:
    """The one line that says what happened and what the client does about it."""
    target = params.get("name") or params.get("uri")
    what = f"{method} {target!r}" if isinstance(target, str) else method
    return (
        f"{what}: the server no longer accepts this call's answers (its flow expired, or its state was refused): "
        "calling again from the start, with the answers given so far offered again"
    )


class EarlierAnswers:
    """The accepted form answers of one request, by question key and schema, offered again after a restart."""

    def __init__(self) -> None:
        self._given: dict[tuple[str, bytes], dict[str, Any]] = {}
        self.restarted = False

    def remember(self, question: Question, reply: Answer[Any]) -> None:
        if question.form is not None and isinstance(reply, Accepted) and isinstance(reply.data, dict):
            self._given[(question.key, question.form.schema_json)] = reply.data

    def offer(self, question: Question) -> Question:
        """The question, its form's defaults set to the answers given before the restart (if any)."""
        if question.form is None or not self.restarted:
            return question
        given = self._given.get((question.key, question.form.schema_json))
        if not given:
            return question
        fields = [
            dataclasses.replace(f, default=given[f.name])
            if given.get(f.name) is not None and not field_looks_secret(f)
            else f
            for f in question.form.fields
        ]
        return dataclasses.replace(question, form=FormSpec(fields, name=question.form.name))
