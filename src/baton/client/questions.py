"""What the client hands to the host: a server's question, parsed, and the host's reply, checked.

A form question arrives with its schema already parsed into field objects (`baton.forms`), so a
renderer can show every variant; the reply is `Accepted(content) | Declined() | Cancelled()` and
is validated against the question before it is sent (MCP elicitation: clients SHOULD validate). A
field the accepted content leaves out is sent with the default the schema gives it, if any.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from ..forms import Accepted, Answer, Cancelled, Declined, FormError, FormSpec, parse_schema
from ..forms.fields import InvalidAnswer
from .errors import InvalidReply, MalformedQuestion


@dataclass(frozen=True, slots=True)
class Question:
    """One elicitation a server asked: form mode (`form` set) or URL mode (`url` set)."""

    key: str
    mode: Literal["form", "url"]
    message: str
    form: FormSpec | None = None
    url: str | None = None
    server: str | None = None  # the asking server's name, for display
    params: dict[str, Any] = field(default_factory=dict, compare=False, repr=False)
    """The `elicitation/create` params as the server sent them, for a host that forwards the question
    (`baton bridge`); what is asked is read from the fields above."""

    @classmethod
    def from_params(cls, key: str, params: dict[str, Any], server: str | None = None) -> Question:
        """Parse `elicitation/create` params; an absent mode is form mode (protocol.md P7)."""
        if not isinstance(params, dict):
            raise MalformedQuestion(f"question {key!r}: params must be an object")
        message = params.get("message")
        if not isinstance(message, str):
            raise MalformedQuestion(f"question {key!r} has no message")
        if params.get("mode", "form") == "url":
            url = params.get("url")
            if not isinstance(url, str):
                raise MalformedQuestion(f"URL question {key!r} has no url")
            return cls(key, "url", message, url=url, server=server, params=params)
        try:
            form = parse_schema(params.get("requestedSchema"))
        except FormError as exc:
            raise MalformedQuestion(f"question {key!r}: {exc}") from None
        return cls(key, "form", message, form=form, server=server, params=params)

    def answer(self, reply: Answer[Any]) -> dict[str, Any]:
        """The ElicitResult to send for a reply; raises InvalidReply if the content does not fit."""
        if isinstance(reply, Declined):
            return {"action": "decline"}
        if isinstance(reply, Cancelled):
            return {"action": "cancel"}
        if not isinstance(reply, Accepted):
            raise InvalidReply(f"a reply is Accepted, Declined or Cancelled, not {type(reply).__name__}")
        if self.mode == "url":
            return {"action": "accept"}  # URL mode carries no content (MCP elicitation)
        assert self.form is not None
        try:
            content = self.form.validate(_with_defaults(self.form, reply.data))
        except InvalidAnswer as exc:
            raise InvalidReply(f"the answer to {self.key!r} does not fit the question: {exc}") from None
        return {"action": "accept", "content": content}


def _with_defaults(form: FormSpec, data: Any) -> Any:
    """The content with each field it leaves out set to the default the server offered (SEP-1034)."""
    if data is None:
        data = {}
    if not isinstance(data, dict):
        return data  # validate says what is wrong with it
    for f in form.fields:
        if f.default is not None and data.get(f.name) is None:
            try:
                f.check(f.default)
            except InvalidAnswer:
                continue  # the server's own default does not fit its question: leave the field out
            data = {**data, f.name: f.default}
    return data


ElicitHandler = Callable[[Question], Awaitable[Answer[Any]]]
