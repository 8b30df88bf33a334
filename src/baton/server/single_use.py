"""Single use: each sealed round token of a single-use flow is redeemed once, claimed in a ledger
before any user code runs.

The first claimant runs the round and records its reply (result, `input_required` or error); a
duplicate by the same principal gets that reply again, or a state-only `input_required` while the
round is still running (the client simply retries); another principal is refused as an invalid
state; without a ledger nothing runs (fail closed). A reply that ran but could not be recorded is
recorded later in the background, so that a retry receives it rather than a second run.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any

import orjson

from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, INVALID_STATE_MESSAGE, McpError
from ..state.background import Retries
from ..state.ledger import ClaimStatus, Ledger, LedgerError, LedgerUnavailable, token_id

log = logging.getLogger("baton.server")

LEDGER_UNAVAILABLE_MESSAGE = "The single-use ledger is unavailable, so the request was not run; try again later"
LEDGER_RECORD_MESSAGE = (
    "The request ran, but the single-use ledger could not record its result; "
    "retry the same request later to receive it (it will not be run again)"
)
LEDGER_SKEW_S = 60  # clock skew allowed between instances when a ledger entry expires

RoundRun = Coroutine[Any, Any, dict[str, Any]]
_OUTCOMES = {ClaimStatus.FOREIGN: "refused", ClaimStatus.IN_PROGRESS: "in_progress", ClaimStatus.DONE: "replayed"}


class SingleUse:
    """Runs single-use rounds through the server's ledger (given lazily: the default opens a file)."""

    def __init__(self, ledger: Callable[[], Ledger]) -> None:
        self._ledger = ledger
        self._retries = Retries()  # replies still to be recorded in the ledger
        self.observe: Callable[[str], None] | None = None  # telemetry's ear for outcomes (protocol.md P62)

    async def run(self, token: str, principal: str, expires: int, play: RoundRun) -> dict[str, Any]:
        """Claim `token` for `principal`, then run `play` (or close it unrun) and answer as described above."""
        ledger = self._ledger()
        tid = token_id(token)
        expires_at = expires + LEDGER_SKEW_S
        try:
            claim = await ledger.claim(tid, principal, expires_at)
        except LedgerUnavailable as exc:
            play.close()
            self._note("unavailable")
            log.error("single-use ledger unavailable: %s", exc)
            raise McpError(INTERNAL_ERROR, LEDGER_UNAVAILABLE_MESSAGE) from None
        if claim.status is not ClaimStatus.FRESH:
            play.close()
            self._note(_OUTCOMES[claim.status])
            if claim.status is ClaimStatus.FOREIGN:
                raise McpError(INVALID_PARAMS, INVALID_STATE_MESSAGE)
            if claim.status is ClaimStatus.IN_PROGRESS:
                return {"resultType": "input_required", "requestState": token}  # retry shortly
            return replayed(claim.result or b"{}")
        self._note("claimed")
        try:
            reply = {"r": await play}
        except McpError as exc:
            reply = {"e": exc.to_dict()}
        except BaseException:
            with contextlib.suppress(LedgerError):
                await ledger.release(tid, principal)  # no reply to replay: the round may run again
            raise
        recorded = orjson.dumps(reply)
        try:
            await ledger.record(tid, principal, recorded, expires_at)
        except LedgerError as exc:
            log.error("single-use ledger could not record a round that ran: %s", exc)
            if isinstance(exc, LedgerUnavailable):
                # The round ran: keep trying to record its reply, so that a retry receives it, never a rerun.
                self._record_later(tid, principal, recorded, expires_at)
            raise McpError(INTERNAL_ERROR, LEDGER_RECORD_MESSAGE) from None
        return replayed(recorded)

    def _note(self, outcome: str) -> None:
        if self.observe is not None:
            self.observe(outcome)

    def _record_later(self, tid: bytes, principal: str, recorded: bytes, expires_at: float) -> None:
        async def attempt() -> bool:
            try:
                await self._ledger().record(tid, principal, recorded, expires_at)
            except LedgerUnavailable:
                return False
            except LedgerError as exc:
                log.error("gave up recording a round's reply: %s", exc)
                return True
            log.info("recorded a round's reply once the single-use ledger was back")
            return True

        self._retries.keep_trying("record a round's reply", attempt, expires_at)

    def cancel(self) -> None:
        """Stop the background recording (at shutdown)."""
        self._retries.cancel_all()


def replayed(recorded: bytes) -> dict[str, Any]:
    """A recorded single-use reply: the result again, or the same error raised again."""
    reply = orjson.loads(recorded)
    if "e" in reply:
        error = reply["e"]
        raise McpError(error["code"], error["message"], error.get("data"))
    return dict(reply["r"])
