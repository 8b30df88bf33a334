"""The scripted user: answers a server's questions from a script, and records what was asked.

A script maps an ask key (`key=` of `ctx.confirm` / `ctx.elicit`, or the default by position: `q1`, `q2`, ...) to
replies, or a predicate to replies (`when`): a reply is `Accepted(...)`, `Declined()`, `Cancelled()`,
a dict (short for `Accepted(dict)`), `Invalid(content)` (an answer that does not fit the form, sent
anyway, to test a re-ask), `Connected(value)` (the connect page of `ctx.secret` / `ctx.connect`
finished with that value, then accepted), or a function of the `Question`. Several replies answer successive asks
of that key in order, and the last one answers every ask after it. A question no script covers
fails the call with `UnexpectedQuestion` (protocol.md P74).

`asked` records every question (key, mode, message, form, URL) and the reply given, in order, for
assertions; `keys` lists the keys. The same script answers both eras: in a 2025-11-25 session the
in-memory transport tells the user which ask key a server request stands for (`aliases`).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..client.questions import Question
from ..forms import Accepted, Answer, Cancelled, Declined, FormSpec


@dataclass(frozen=True, slots=True)
class Connected:
    """Finish the server's connect page, as the user would in a browser, then accept the URL question.

    For `ctx.secret` the value is the secret typed on the page; for `ctx.connect` it is the provider's
    token response (a dict). Only the kit's in-memory client can finish a page: the kit completes the
    ticket the URL carries and stores the value in the server's vault, in memory (protocol.md P99).
    """

    value: str | dict[str, Any]


@dataclass(frozen=True, slots=True)
class Invalid:
    """A form answer that does not fit the question, sent as it is (the client would refuse to send it).

    Only the kit's in-memory client can send it: the user answers the client `Declined()` and the
    transport puts `{"action": "accept", "content": content}` on the wire instead.
    """

    content: Any


UserReply = Answer[Any] | Invalid | Connected | dict[str, Any]
Connector = Callable[[str, "str | dict[str, Any]"], Awaitable[None]]
"""Finishes the connect page at a URL with a value (the in-memory transport's `finish_connect`)."""
Script = UserReply | Callable[[Question], Any]
Match = str | Callable[[Question], bool]
"""A predicate on the question, or a string the question's message contains."""


class UnexpectedQuestion(AssertionError):
    """The server asked something the script does not cover."""


@dataclass(frozen=True, slots=True)
class Asked:
    """One question the server asked, and the reply the scripted user gave."""

    key: str
    mode: Literal["form", "url"]
    message: str
    form: FormSpec | None
    url: str | None
    reply: UserReply

    @property
    def fields(self) -> list[str]:
        """The names of the form's fields (empty for a URL question)."""
        return [f.name for f in self.form.fields] if self.form is not None else []


class ScriptedUser:
    """An `on_form` / `on_url` handler that answers from a script (see the module docstring)."""

    def __init__(self, answers: Mapping[str, Script | Sequence[Script]] | None = None) -> None:
        self._by_key: dict[str, list[Script]] = {}
        self._rules: list[tuple[Match, list[Script]]] = []
        self.asked: list[Asked] = []
        self.aliases: dict[str, str] = {}  # wire id -> ask key, filled by the in-memory transport (2025-11-25)
        self.bound = False  # an in-memory transport carries this user's forged answers
        self.connector: Connector | None = None  # set by memory_client: finishes a connect page (Connected)
        self._forged: dict[str, dict[str, Any]] = {}
        self._failures: list[UnexpectedQuestion] = []
        for key, script in (answers or {}).items():
            self.on(key, *_replies(script))

    def on(self, key: str, *replies: Script) -> ScriptedUser:
        """Answer the asks of `key` with `replies`, in order (the last one repeats)."""
        if not replies:
            raise ValueError(f"on({key!r}) needs at least one reply")
        self._by_key[key] = list(replies)
        return self

    def when(self, match: Match, *replies: Script) -> ScriptedUser:
        """Answer the questions `match` selects (after the keyed scripts), in order (the last one repeats)."""
        if not replies:
            raise ValueError("when(...) needs at least one reply")
        self._rules.append((match, list(replies)))
        return self

    @property
    def keys(self) -> list[str]:
        """The keys asked, in order (a key asked again appears again)."""
        return [a.key for a in self.asked]

    def forget(self) -> None:
        """Clear the record of what was asked (the scripts stay)."""
        self.asked.clear()

    async def __call__(self, question: Question) -> Answer[Any]:
        key = self.aliases.get(question.key, question.key)
        if key != question.key:
            question = dataclasses.replace(question, key=key)  # scripts see the ask key in either era
        script = self._script(key, question)
        reply = script(question) if callable(script) else script
        if inspect.isawaitable(reply):
            reply = await reply
        if isinstance(reply, dict):
            reply = Accepted(reply)
        if not isinstance(reply, (Accepted, Declined, Cancelled, Invalid, Connected)):
            raise self._fail(f"the script for {key!r} gave {reply!r}, not a reply")
        self.asked.append(Asked(key, question.mode, question.message, question.form, question.url, reply))
        if isinstance(reply, Connected):
            if self.connector is None or question.url is None:
                raise self._fail("Connected(...) answers a connect URL only, through baton.testing's in-memory client")
            await self.connector(question.url, reply.value)
            return Accepted(None)
        if isinstance(reply, Invalid):
            if not self.bound:
                raise self._fail("Invalid(...) answers only through baton.testing's in-memory client")
            self._forged[key] = {"action": "accept", "content": reply.content}
            return Declined()  # what the client checks and sends; the transport swaps in the forged answer
        return reply

    def _script(self, key: str, question: Question) -> Script:
        replies = self._by_key.get(key)
        if replies is None:
            replies = next((r for m, r in self._rules if _matches(m, question)), None)
        if replies is None:
            form = f" with fields {[f.name for f in question.form.fields]}" if question.form is not None else ""
            where = f" (url {question.url})" if question.url is not None else ""
            raise self._fail(
                f"unexpected question {key!r} ({question.mode} mode{form}{where}): {question.message!r}; "
                f"scripted keys: {sorted(self._by_key)}"
            )
        return replies.pop(0) if len(replies) > 1 else replies[0]

    def _fail(self, message: str) -> UnexpectedQuestion:
        failure = UnexpectedQuestion(message)
        self._failures.append(failure)
        return failure

    # -- what the in-memory transport reads (baton.testing.memory.Wire) ------------------------------

    def forged(self, key: str) -> dict[str, Any] | None:
        """The forged answer for `key`, once."""
        return self._forged.pop(key, None)

    def discard(self) -> None:
        """Forget the forged answers not sent (the call that would have sent them failed, or is over)."""
        self._forged.clear()

    def failure(self) -> UnexpectedQuestion | None:
        """The first complaint not raised yet (a session's `Inbound` turns a handler's exception into an error)."""
        failures, self._failures = self._failures, []
        return failures[0] if failures else None


def _replies(script: Script | Sequence[Script]) -> list[Script]:
    if isinstance(script, (list, tuple)):
        return list(script)
    return [script]  # type: ignore[list-item]


def _matches(match: Match, question: Question) -> bool:
    return match in question.message if isinstance(match, str) else bool(match(question))
