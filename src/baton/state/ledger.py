"""The ledger that makes flows single-use (protocol.md P19): each sealed round token is claimed once.

Before user code runs, the server claims the round token (by `token_id(token)`) for the principal:

- `FRESH`: this call owns the round; run it, then `record` its reply (or `release` it, see below);
- `IN_PROGRESS`: the same principal claimed it and has not recorded a reply yet; answer a state-only
  `input_required` so the client simply retries;
- `DONE`: a duplicate of a finished round; send `result` (the recorded reply bytes) again;
- `FOREIGN`: another principal holds the token; refuse.

Decision for suspended rounds: the server `record`s every round that produced a reply, the
`input_required` of a suspended round (with its newly sealed `requestState`) as much as a final
result. The token is then spent, and a duplicate (a retry after a lost response) gets the very same
reply, so no round runs twice and the client carries on with the same next token. `release` is only
for a round that produced no reply to replay (cancelled, or the server failed before answering): the
token becomes claimable again, so that round may run again (at-least-once for it, never concurrently).

Entries expire at `expires_at` (unix seconds): pass the token's expiry plus the clock skew allowed
between hosts. Principals are stored as SHA-256 digests, never as given. An unreachable or unusable
backend raises `LedgerUnavailable`; the server must fail closed on it.
"""

from __future__ import annotations

import abc
import asyncio
import contextlib
import enum
import hashlib
from dataclasses import dataclass
from types import TracebackType
from typing import Self

TOKEN_ID_BYTES = 32
# Releases of claims whose caller was cancelled: held here so that they are not garbage-collected midway.
_UNDOING: set[asyncio.Future[None]] = set()


class LedgerError(Exception):
    """Base class of ledger errors."""


class LedgerUnavailable(LedgerError):
    """The ledger's backend cannot be reached or used: fail closed (do not run the round)."""


class LedgerConflict(LedgerError):
    """`record` by someone who does not hold the claim: another principal's, already recorded, or expired."""


class ClaimStatus(enum.Enum):
    FRESH = "fresh"
    IN_PROGRESS = "in_progress"
    DONE = "done"
    FOREIGN = "foreign"


@dataclass(frozen=True, slots=True)
class Claim:
    """The outcome of `Ledger.claim`; `result` is set only for `DONE` (possibly to b"")."""

    status: ClaimStatus
    result: bytes | None = None


FRESH = Claim(ClaimStatus.FRESH)
IN_PROGRESS = Claim(ClaimStatus.IN_PROGRESS)
FOREIGN = Claim(ClaimStatus.FOREIGN)


def token_id(token: str) -> bytes:
    """The fixed-length ledger id of a sealed round token (its SHA-256)."""
    return hashlib.sha256(token.encode()).digest()


def principal_tag(principal: str) -> bytes:
    """What a ledger stores for a principal: its SHA-256, so no identity rests in the store."""
    return hashlib.sha256(principal.encode()).digest()


def check_token_id(value: bytes) -> bytes:
    if not isinstance(value, bytes) or len(value) != TOKEN_ID_BYTES:
        raise ValueError(f"a ledger token id is {TOKEN_ID_BYTES} bytes (use token_id(token))")
    return value


class Ledger(abc.ABC):
    """Single-use claims on round tokens. Use as `async with ledger:` or call `close()`."""

    async def claim(self, token_id: bytes, principal: str, expires_at: float) -> Claim:
        """Atomically claim a round token for a principal, before any user code runs.

        If this call is cancelled while the backend is still answering and the claim turns out
        FRESH, it is released again, so a cancelled request never strands the flow.
        """
        task = asyncio.ensure_future(self._claim(check_token_id(token_id), principal, expires_at))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            task.add_done_callback(lambda done: self._undo_claim(done, token_id, principal))
            raise

    def _undo_claim(self, done: asyncio.Future[Claim], token_id: bytes, principal: str) -> None:
        if done.cancelled() or done.exception() is not None or done.result().status is not ClaimStatus.FRESH:
            return
        undo = asyncio.ensure_future(self._release_quietly(token_id, principal))
        _UNDOING.add(undo)
        undo.add_done_callback(_UNDOING.discard)

    async def _release_quietly(self, token_id: bytes, principal: str) -> None:
        with contextlib.suppress(LedgerError):  # if it fails, the entry still expires with the token
            await self.release(token_id, principal)

    @abc.abstractmethod
    async def _claim(self, token_id: bytes, principal: str, expires_at: float) -> Claim:
        """The backend's atomic claim; `token_id` is already checked."""

    @abc.abstractmethod
    async def record(self, token_id: bytes, principal: str, result: bytes, expires_at: float) -> None:
        """Store the reply of a round this principal claimed; later duplicates get `DONE` with it.

        Recording the same bytes again is a no-op (so a retried call is safe). Raises `LedgerConflict`
        if the principal holds no live claim on the token, or a different reply is already recorded.
        """

    @abc.abstractmethod
    async def release(self, token_id: bytes, principal: str) -> None:
        """Drop this principal's unrecorded claim (no-op otherwise): the token becomes claimable again."""

    @abc.abstractmethod
    async def ping(self) -> None:
        """Health probe: return if the backend answers, raise `LedgerUnavailable` if not."""

    @abc.abstractmethod
    async def purge(self) -> int:
        """Delete expired entries now and return how many; backends that expire keys themselves return 0."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the backend's resources; later calls raise `LedgerUnavailable`."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()
