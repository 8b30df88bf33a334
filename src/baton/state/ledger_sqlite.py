"""The embedded ledger: one SQLite file that every worker process on one host shares.

The file is in WAL mode; every write is a `BEGIN IMMEDIATE` transaction (the write lock is taken up
front, waiting up to the busy timeout for other processes), so a claim is atomic across processes.
Blocking calls run on one thread per ledger, off the event loop. Expired rows are purged by a claim
at most every `purge_every_s`. With `durable=False` (`synchronous=NORMAL`) a claim survives a crash of
the process but not a power loss; `durable=True` syncs every commit.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from pathlib import Path
from typing import TypeVar

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

T = TypeVar("T")
DEFAULT_FILE_NAME = "ledger.sqlite3"
DEFAULT_BUSY_TIMEOUT_S = 5.0
DEFAULT_PURGE_EVERY_S = 60.0
_TABLE = "baton_ledger"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {_TABLE} (
    token_id BLOB PRIMARY KEY,
    principal BLOB NOT NULL,
    expires_at REAL NOT NULL,
    result BLOB
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS {_TABLE}_expiry ON {_TABLE} (expires_at);
"""
# Insert a claim, or take over an expired one; no change if a live entry holds the token.
_CLAIM = f"""
INSERT INTO {_TABLE} (token_id, principal, expires_at, result) VALUES (?, ?, ?, NULL)
ON CONFLICT (token_id) DO UPDATE SET principal = excluded.principal, expires_at = excluded.expires_at, result = NULL
WHERE {_TABLE}.expires_at <= ?
"""
_RECORD = f"""
UPDATE {_TABLE} SET result = ?, expires_at = ?
WHERE token_id = ? AND principal = ? AND result IS NULL AND expires_at > ?
"""
_RELEASE = f"DELETE FROM {_TABLE} WHERE token_id = ? AND principal = ? AND result IS NULL"
_SELECT = f"SELECT principal, result FROM {_TABLE} WHERE token_id = ? AND expires_at > ?"
_PURGE = f"DELETE FROM {_TABLE} WHERE expires_at <= ?"


class SqliteLedger(Ledger):
    """Claims in a SQLite file (created with its directory on first use)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        purge_every_s: float = DEFAULT_PURGE_EVERY_S,
        durable: bool = False,
    ) -> None:
        self.path = Path(path)
        self.busy_timeout_s = busy_timeout_s
        self.purge_every_s = purge_every_s
        self.durable = durable
        self._db: sqlite3.Connection | None = None
        self._next_purge = 0.0
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baton-ledger-sqlite")

    # Everything below that touches `_db` runs on the ledger's one thread.

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Replies rest in this file: create it private (SQLite gives its -wal and -shm files the same mode).
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
            try:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
                db.executescript(_SCHEMA)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _guarded(self, op: Callable[[sqlite3.Connection], T]) -> T:
        try:
            db = self._connect()
            db.execute("BEGIN IMMEDIATE")
            try:
                value = op(db)
                db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            return value
        except (sqlite3.Error, OSError) as exc:
            # Drop the connection so that the next call opens the file again (and may recover).
            if self._db is not None:
                self._db.close()
                self._db = None
            detail = str(exc)
            if "locked" in detail or "busy" in detail:
                detail += f" (still busy after {self.busy_timeout_s} s)"
            raise LedgerUnavailable(f"SQLite ledger {self.path}: {detail}") from exc

    async def _run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        if self._closed:
            raise LedgerUnavailable(f"SQLite ledger {self.path} is closed")
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._guarded, op)

    def _claim_in(self, db: sqlite3.Connection, token_id: bytes, tag: bytes, expires_at: float) -> Claim:
        now = time.time()
        if now >= self._next_purge:
            db.execute(_PURGE, (now,))
            self._next_purge = now + self.purge_every_s
        if db.execute(_CLAIM, (token_id, tag, expires_at, now)).rowcount:
            return FRESH
        row = db.execute(_SELECT, (token_id, now)).fetchone()
        assert row is not None, "a live entry holds the token inside this transaction"
        holder, result = row
        if holder != tag:
            return FOREIGN
        if result is None:
            return IN_PROGRESS
        return Claim(ClaimStatus.DONE, bytes(result))

    async def _claim(self, token_id: bytes, principal: str, expires_at: float) -> Claim:
        tag = principal_tag(principal)
        return await self._run(partial(self._claim_in, token_id=token_id, tag=tag, expires_at=expires_at))

    @staticmethod
    def _record_in(db: sqlite3.Connection, token_id: bytes, tag: bytes, result: bytes, expires_at: float) -> str | None:
        now = time.time()
        if db.execute(_RECORD, (result, expires_at, token_id, tag, now)).rowcount:
            return None
        row = db.execute(_SELECT, (token_id, now)).fetchone()
        if row is None:
            return "cannot record: the claim expired or was released"
        if row[0] != tag:
            return "cannot record: the token is claimed by another principal"
        if row[1] == result:
            return None  # the same reply again (a retried call): nothing to do
        return "cannot record: a result is already recorded for this token"

    async def record(self, token_id: bytes, principal: str, result: bytes, expires_at: float) -> None:
        op = partial(
            self._record_in,
            token_id=check_token_id(token_id),
            tag=principal_tag(principal),
            result=bytes(result),
            expires_at=expires_at,
        )
        refusal = await self._run(op)
        if refusal is not None:
            raise LedgerConflict(refusal)

    async def release(self, token_id: bytes, principal: str) -> None:
        args = (check_token_id(token_id), principal_tag(principal))
        await self._run(lambda db: db.execute(_RELEASE, args))

    async def ping(self) -> None:
        await self._run(lambda db: db.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1").fetchall())

    def _purge_in(self, db: sqlite3.Connection) -> int:
        now = time.time()
        self._next_purge = now + self.purge_every_s
        return db.execute(_PURGE, (now,)).rowcount

    async def purge(self) -> int:
        return await self._run(self._purge_in)

    def _disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        # Queued after every call already submitted, so those finish first.
        await asyncio.get_running_loop().run_in_executor(self._executor, self._disconnect)
        self._executor.shutdown(wait=False)
