"""Problems with a handler found when it is registered, each at its `file:line`, and gathering them.

Registration refuses a handler Baton cannot serve (a parameter type JSON Schema cannot describe, a
form the wire cannot carry) with `HandlerProblems`, which lists every problem of that handler at once.
While `baton serve` imports its target (`gathering()`), the decorators record the problems of every
handler instead of raising at the first, so the user sees them all in one message (protocol.md P97).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from .source import location


class HandlerProblems(TypeError):
    """What is wrong with one handler, as (`file:line`, problem) pairs, and a hint on how to fix them."""

    def __init__(self, problems: list[tuple[str, str]], hint: str | None = None) -> None:
        lines = [f"{where}: {what}" for where, what in problems]
        super().__init__("\n".join([*lines, hint] if hint else lines))
        self.problems = problems
        self.hint = hint


@dataclass(slots=True)
class Gathered:
    """The problems of every handler registered while gathering, and the hints that go with them (once each)."""

    problems: list[tuple[str, str]] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)

    def __bool__(self) -> bool:
        return bool(self.problems)

    def __str__(self) -> str:
        lines = [f"  {where}: {what}" for where, what in self.problems]
        return "\n".join([*lines, *(f"  ({hint})" for hint in self.hints)])


_gathered: ContextVar[Gathered | None] = ContextVar("baton_registration_problems", default=None)


@contextlib.contextmanager
def gathering() -> Iterator[Gathered]:
    """While inside, the decorators record each handler's problems instead of raising at the first."""
    gathered = Gathered()
    token = _gathered.set(gathered)
    try:
        yield gathered
    finally:
        _gathered.reset(token)


def refuse(problems: list[tuple[str, str]], hint: str | None = None) -> None:
    """Refuse what is being registered for `problems` (`HandlerProblems`); while gathering, record them."""
    gathered = _gathered.get()
    if gathered is None:
        raise HandlerProblems(problems, hint)
    gathered.problems.extend(problems)
    if hint and hint not in gathered.hints:
        gathered.hints.append(hint)


def registering(fn: Callable[..., Any], what: str, register: Callable[[], object]) -> None:
    """Register `fn` (`what` names it: "tool book"); while gathering, a refusal is recorded, not raised."""
    gathered = _gathered.get()
    if gathered is None:
        register()
        return
    try:
        register()
    except HandlerProblems as exc:
        gathered.problems.extend((where, f"{what}, {text}") for where, text in exc.problems)
        if exc.hint and exc.hint not in gathered.hints:
            gathered.hints.append(exc.hint)
    except (TypeError, ValueError) as exc:
        gathered.problems.append((location(fn), f"{what}: {exc}"))
