"""Checks a tool author runs against a flow: no action on a refusal, and no trust in a mutated `requestState`.

`check_refusals` runs the accepting path once to learn the asks, then, for each ask in turn, a run
that declines it and a run that cancels it (every other ask answered as on the accepting path), and
fails unless the author's probe sees exactly the state it saw before the run (protocol.md P75).

`check_tampering` drives a 2026-07-28 flow in step mode and retries its first round with the
`requestState` flipped, truncated, expired (a `FakeClock` past `state_ttl_s`), taken from another
flow (`swap`), and, for a single-use flow, replays the completed flow's last retry: every mutation
must be refused with -32602 "Invalid or expired requestState", and a replay must give the recorded
result without running the handler again (protocol.md P12, P19, P76).
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from ..client import Client, Round
from ..client.probe import MODERN, ProtocolChoice
from ..forms import Answer, Cancelled, Declined
from ..protocol.errors import INVALID_PARAMS, INVALID_STATE_MESSAGE, McpError
from ..server import Server
from .clock import FakeClock
from .memory import memory_client
from .user import Script, ScriptedUser, UnexpectedQuestion

ClientCall = Callable[[Client], Awaitable[Any]]
Probe = Callable[[], Any]


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    """One run of a check: what was done (`"decline"`, `"flipped"`, ...), at which ask key, and what came back."""

    what: str
    key: str | None
    result: Any


async def _maybe(value: Any) -> Any:
    return await value if inspect.isawaitable(value) else value


async def check_refusals(
    server: Server,
    call: ClientCall,
    *,
    answers: Mapping[str, Script | Sequence[Script]],
    probe: Probe,
    reset: Callable[[], Any] | None = None,
    protocol: ProtocolChoice = MODERN,
) -> list[Outcome]:
    """Fail unless declining or cancelling any one ask of the flow `call` runs leaves `probe()` unchanged.

    `answers` is the accepting path's script; `probe()` returns the state a side effect would change
    (it must change on the accepting path); `reset()` (sync or async) restores the state before each run.
    """

    async def run(user: ScriptedUser) -> tuple[Any, Any, Any]:
        if reset is not None:
            await _maybe(reset())
        before = await _maybe(probe())
        async with memory_client(server, user, protocol=protocol) as client:
            try:
                result = await call(client)
            except UnexpectedQuestion:
                raise
            except Exception as exc:  # a refusal may end a resource read or a prompt with an error
                result = exc
        return before, await _maybe(probe()), result

    accepting = ScriptedUser(answers)
    before, after, _ = await run(accepting)
    if not accepting.asked:
        raise AssertionError("the accepting path asked nothing: there is no ask to refuse")
    if after == before:
        raise AssertionError(
            f"the probe saw no change on the accepting path ({before!r}), so it cannot see a refusal's side effect"
        )
    keys = list(dict.fromkeys(accepting.keys))
    outcomes: list[Outcome] = []
    for key in keys:
        for refusal in (Declined(), Cancelled()):
            what = "decline" if isinstance(refusal, Declined) else "cancel"
            user = ScriptedUser()
            for other in keys:
                if other != key:
                    user.on(other, *[a.reply for a in accepting.asked if a.key == other])
            user.on(key, refusal).when(lambda _question: True, refusal)  # a new ask after a refusal: refused too
            before, after, result = await run(user)
            if key not in user.keys:
                raise AssertionError(
                    f"the run that should {what} {key!r} never asked it (asked: {user.keys}); "
                    "did the accepting path change what the flow starts from? pass reset="
                )
            if after != before:
                raise AssertionError(
                    f"the flow acted although the user chose {what} at {key!r}: the probe read {before!r} "
                    f"before and {after!r} after (result: {result!r})"
                )
            outcomes.append(Outcome(what, key, result))
    return outcomes


async def check_tampering(
    server: Server,
    method: str,
    params: dict[str, Any],
    *,
    answers: Mapping[str, Script | Sequence[Script]],
    swap: dict[str, Any] | None = None,
    probe: Probe | None = None,
) -> list[Outcome]:
    """Fail unless every mutated `requestState` of the flow (`method`, `params`) is refused (see the module).

    `swap` is the params of another flow of the same method whose first round asks (another target or
    other arguments); its state presented in this flow must be refused. `probe` is required for a single-use
    flow: it must read the same after the replay of its last retry as after the flow completed.
    """
    if probe is None and _single_use(server, method, params):
        raise ValueError(
            f"{method} {params.get('name', '')!r} is single use: pass probe= (a function returning what the "
            "tool changes), so that check_tampering can see that a replay does not run it again"
        )
    user = ScriptedUser(answers)
    outcomes: list[Outcome] = []
    with FakeClock() as clock:
        async with memory_client(server, user) as client:
            first = await client.start(method, params)
            if not isinstance(first, Round) or first.request_state is None:
                raise AssertionError(f"{method} {params!r} completed without asking: there is no requestState")
            replies = await _answer(user, first)
            token = first.request_state
            mutations = {"flipped": _flipped(token), "truncated": token[:-8], "not a token": "b1..", "empty": ""}
            if swap is not None:
                other = await client.start(method, swap)
                if not isinstance(other, Round) or other.request_state is None:
                    raise AssertionError(f"the swap flow {swap!r} completed without asking")
                mutations["swapped"] = other.request_state
            for name, state in mutations.items():
                outcomes.append(await _refused(client, first, replies, state, name))
            clock.advance(server.settings.state_ttl_s + 1)
            outcomes.append(await _refused(client, first, replies, token, "expired"))
            clock.advance(-(server.settings.state_ttl_s + 1))
            outcomes.extend(await _replay(server, client, user, first, replies, method, params, probe))
    return outcomes


async def _answer(user: ScriptedUser, step: Round) -> dict[str, Answer[Any]]:
    return {q.key: await user(q) for q in step.questions()}


def _flipped(token: str) -> str:
    """The token with one base64url character of its sealed body changed (the middle one)."""
    head, _, body = token.rpartition(".")
    i = len(body) // 2
    return f"{head}.{body[:i]}{'A' if body[i] != 'A' else 'B'}{body[i + 1 :]}"


async def _refused(client: Client, step: Round, replies: dict[str, Any], state: str, name: str) -> Outcome:
    try:
        result = await client.advance(dataclasses.replace(step, request_state=state), replies)
    except McpError as exc:
        if exc.code != INVALID_PARAMS or exc.message != INVALID_STATE_MESSAGE:
            raise AssertionError(
                f"the {name} requestState was refused with {exc.code} {exc.message!r}, not -32602"
            ) from exc
        return Outcome(name, None, exc)
    raise AssertionError(f"the server accepted a {name} requestState and answered {result!r}")


def _single_use(server: Server, method: str, params: dict[str, Any]) -> bool:
    tool = server.tools.get(params.get("name", "")) if method == "tools/call" else None
    return server.settings.single_use or (tool is not None and tool.single_use)


async def _replay(
    server: Server,
    client: Client,
    user: ScriptedUser,
    step: Round,
    replies: dict[str, Any],
    method: str,
    params: dict[str, Any],
    probe: Probe | None,
) -> list[Outcome]:
    """Complete the flow; for a single-use flow, replay its last retry and expect the same result, no rerun."""
    last, result = step, await client.advance(step, replies)
    while isinstance(result, Round):
        last, replies = result, await _answer(user, result)
        result = await client.advance(result, replies)
    if probe is None or not _single_use(server, method, params):  # single use has a probe (check_tampering)
        return [Outcome("completed", None, result)]
    seen = await _maybe(probe())
    again = await client.advance(last, replies)
    if again != result:
        raise AssertionError(f"replaying a single-use flow's last retry answered {again!r}, not {result!r}")
    if (now := await _maybe(probe())) != seen:
        raise AssertionError(f"replaying a single-use flow's last retry ran it again: {seen!r} became {now!r}")
    return [Outcome("completed", None, result), Outcome("replayed", None, again)]


__all__ = ["Outcome", "check_refusals", "check_tampering"]
