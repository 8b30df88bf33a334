"""An in-process ledger for tests and single-process servers: a dict, purged of expired entries as it goes."""

from __future__ import annotations

import threading
from dataclasses import dataclass

from . import clock
from .ledger import (
    FOREIGN,
    FRESH,
    IN_PROGRESS,
    Claim,
    ClaimStatus,
    Ledger,
    LedgerConflict,
    LedgerUnavailable,
    check_token_id,
    principal_tag,
)

DEFAULT_PURGE_EVERY_S = 60.0


@dataclass(slots=True)
class _Entry:
    principal: bytes
    expires_at: float
    result: bytes | None = None


class MemoryLedger(Ledger):
    """Claims in a dict. Every operation completes without awaiting, so it is atomic under asyncio
    (and a lock makes it safe from several threads too). Nothing is shared between processes."""

    def __init__(self, *, purge_every_s: float = DEFAULT_PURGE_EVERY_S) -> None:
        self._entries: dict[bytes, _Entry] = {}
        self._lock = threading.Lock()
        self._purge_every_s = purge_every_s
        self._next_purge = clock.now() + purge_every_s
        self._closed = False

    def _live(self, token_id: bytes, now: float) -> _Entry | None:
        if self._closed:
            raise LedgerUnavailable("the memory ledger is closed")
        entry = self._entries.get(token_id)
        if entry is not None and entry.expires_at <= now:
            del self._entries[token_id]
            return None
        return entry

    async def claim(self, token_id: bytes, principal: str, expires_at: float) -> Claim:
        # Overrides the base class: nothing here awaits, so a cancelled caller cannot strand a claim.
        return await self._claim(check_token_id(token_id), principal, expires_at)

    async def _claim(self, token_id: bytes, principal: str, expires_at: float) -> Claim:
        tag = principal_tag(principal)
        now = clock.now()
        with self._lock:
            entry = self._live(token_id, now)
            if now >= self._next_purge:
                self._purge(now)
            if entry is None:
                self._entries[token_id] = _Entry(tag, expires_at)
                return FRESH
            if entry.principal != tag:
                return FOREIGN
            if entry.result is None:
                return IN_PROGRESS
            return Claim(ClaimStatus.DONE, entry.result)

    async def record(self, token_id: bytes, principal: str, result: bytes, expires_at: float) -> None:
        tag = principal_tag(principal)
        with self._lock:
            entry = self._live(check_token_id(token_id), clock.now())
            if entry is None:
                raise LedgerConflict("cannot record: the claim expired or was released")
            if entry.principal != tag:
                raise LedgerConflict("cannot record: the token is claimed by another principal")
            if entry.result == result:
                return  # the same reply again (a retried call): nothing to do
            if entry.result is not None:
                raise LedgerConflict("cannot record: a result is already recorded for this token")
            entry.result = bytes(result)
            entry.expires_at = expires_at

    async def release(self, token_id: bytes, principal: str) -> None:
        tag = principal_tag(principal)
        with self._lock:
            entry = self._live(check_token_id(token_id), clock.now())
            if entry is not None and entry.principal == tag and entry.result is None:
                del self._entries[token_id]

    async def ping(self) -> None:
        if self._closed:
            raise LedgerUnavailable("the memory ledger is closed")

    def _purge(self, now: float) -> int:
        expired = [k for k, e in self._entries.items() if e.expires_at <= now]
        for k in expired:
            del self._entries[k]
        self._next_purge = now + self._purge_every_s
        return len(expired)

    async def purge(self) -> int:
        with self._lock:
            if self._closed:
                raise LedgerUnavailable("the memory ledger is closed")
            return self._purge(clock.now())

    async def close(self) -> None:
        with self._lock:
            self._closed = True
            self._entries.clear()
