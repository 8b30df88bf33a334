"""A 2025-11-25 server's questions to a 2026-07-28 host, as `input_required` rounds (protocol.md P135).

Such a server asks during the call, on the call's own stream, and waits; a 2026 host asks its questions
between legs. So the bridge holds the call open: `Held` runs it in a task, and each question the server
asks in it (the bridge's question handler finds the call through `CURRENT`) ends the host's leg with an
`input_required` round whose `requestState` names the held call. The host's retry carries the answers:
they resolve the questions the server is waiting on, and the leg waits again, for the next question or
the result. A held call nobody resumes within `ASK_TIMEOUT_S` is cancelled; so is one whose leg the host
cancels.
"""

from __future__ import annotations

import asyncio
import contextvars
import secrets
from collections.abc import Coroutine
from typing import Any

from ..client import Question
from ..forms import Answer, Cancelled
from ..protocol.capabilities import ClientCapabilities
from ..protocol.errors import invalid_params
from . import ASK_TIMEOUT_S
from .replies import reply_of

CURRENT: contextvars.ContextVar[Held | None] = contextvars.ContextVar("baton_bridge_held", default=None)
"""The held call a question of the server belongs to (set in the call's task, inherited by its asks)."""


class Held:
    """One call to a 2025-11-25 server held open for a 2026 host, and the questions it is waiting on."""

    def __init__(self, work: Coroutine[Any, Any, dict[str, Any]], host: ClientCapabilities) -> None:
        self.host = host
        self._asked: asyncio.Queue[tuple[Question, asyncio.Future[Answer[Any]]]] = asyncio.Queue()
        self._open: dict[str, asyncio.Future[Answer[Any]]] = {}
        token = CURRENT.set(self)
        try:
            self.task = asyncio.ensure_future(work)  # copies the context: the call's asks see this Held
        finally:
            CURRENT.reset(token)

    async def ask(self, question: Question) -> Answer[Any]:
        """The server's question, put to the host in the next round; the host's answer."""
        future: asyncio.Future[Answer[Any]] = asyncio.get_running_loop().create_future()
        await self._asked.put((question, future))
        return await future

    def answer(self, responses: Any) -> None:
        """The host's retry: its `inputResponses` resolve the questions of the last round (none: cancel)."""
        responses = responses if isinstance(responses, dict) else {}
        for key, future in self._open.items():
            response = responses.get(key)
            if not future.done():
                future.set_result(reply_of(response) if isinstance(response, dict) else Cancelled())
        self._open = {}

    async def step(self) -> dict[str, Any]:
        """The call's result, or the next round of its questions (without `requestState`)."""
        getter = asyncio.ensure_future(self._asked.get())
        try:
            await asyncio.wait({self.task, getter}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            getter.cancel()
            self.task.cancel()  # the host cancelled its leg: the held call ends with it
            raise
        if getter.done():
            question, future = getter.result()
            self._open = {question.key: future}
            params = {k: v for k, v in question.params.items() if k != "_meta"}
            return {
                "resultType": "input_required",
                "inputRequests": {question.key: {"method": "elicitation/create", "params": params}},
            }
        getter.cancel()
        return self.task.result()


class HeldCalls:
    """The held calls by the `requestState` that names them; each expires `ASK_TIMEOUT_S` after its round."""

    def __init__(self) -> None:
        self._calls: dict[str, Held] = {}

    async def leg(self, held: Held) -> dict[str, Any]:
        """One leg for the host: the result, or a round whose `requestState` resumes `held`."""
        step = await held.step()
        if step.get("resultType") != "input_required":
            step = dict(step)
            step.setdefault("resultType", "complete")
            return step
        state = secrets.token_urlsafe(18)
        self._calls[state] = held
        asyncio.get_running_loop().call_later(ASK_TIMEOUT_S, self._expire, state)
        return {**step, "requestState": state}

    def resume(self, state: Any, responses: Any) -> Held:
        """The held call a retry's `requestState` names, given the retry's answers."""
        held = self._calls.pop(state, None) if isinstance(state, str) else None
        if held is None:
            raise invalid_params(
                "Invalid params: requestState names no call this bridge holds (it expired, or the bridge restarted);"
                " send the request again without it"
            )
        held.answer(responses)
        return held

    def _expire(self, state: str) -> None:
        held = self._calls.pop(state, None)
        if held is not None:
            held.task.cancel()
