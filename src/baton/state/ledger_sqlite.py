"""The embedded ledger: one SQLite file that every worker process on one host shares.

The file is opened as `baton.state.sqlite_file` opens every embedded store: WAL mode, every call one
`BEGIN IMMEDIATE` transaction (so a claim is atomic across processes) on one thread per ledger, off
the event loop. Expired rows are purged by a claim at most every `purge_every_s`. By default the
ledger is not durable (`synchronous=NORMAL`): a claim survives a crash of the process but not a power
loss; `durable=True` syncs every commit.
"""

from __future__ import annotations

import os
import sqlite3
from functools import partial

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
from .sqlite_file import DEFAULT_BUSY_TIMEOUT_S, SqliteFile

DEFAULT_FILE_NAME = "ledger.sqlite3"
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
    """Claims in a SQLite file (created with its directory on first use, see `baton.state.sqlite_file`)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        purge_every_s: float = DEFAULT_PURGE_EVERY_S,
        durable: bool = False,
    ) -> None:
        self._file = SqliteFile(
            path,
            _SCHEMA,
            what="ledger",
            busy_timeout_s=busy_timeout_s,
            durable=durable,
            unavailable=LedgerUnavailable,
        )
        self.path = self._file.path
        self.busy_timeout_s = busy_timeout_s
        self.purge_every_s = purge_every_s
        self.durable = durable
        self._next_purge = 0.0  # read and written on the file's thread only

    def _claim_in(self, db: sqlite3.Connection, token_id: bytes, tag: bytes, expires_at: float) -> Claim:
        now = clock.now()
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
        return await self._file.run(partial(self._claim_in, token_id=token_id, tag=tag, expires_at=expires_at))

    @staticmethod
    def _record_in(db: sqlite3.Connection, token_id: bytes, tag: bytes, result: bytes, expires_at: float) -> str | None:
        now = clock.now()
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
        refusal = await self._file.run(op)
        if refusal is not None:
            raise LedgerConflict(refusal)

    async def release(self, token_id: bytes, principal: str) -> None:
        args = (check_token_id(token_id), principal_tag(principal))
        await self._file.run(lambda db: db.execute(_RELEASE, args))

    async def ping(self) -> None:
        await self._file.run(lambda db: db.execute(f"SELECT 1 FROM {_TABLE} LIMIT 1").fetchall())

    def _purge_in(self, db: sqlite3.Connection) -> int:
        now = clock.now()
        self._next_purge = now + self.purge_every_s
        return db.execute(_PURGE, (now,)).rowcount

    async def purge(self) -> int:
        return await self._file.run(self._purge_in)

    async def close(self) -> None:
        await self._file.close()  # after every call already submitted
