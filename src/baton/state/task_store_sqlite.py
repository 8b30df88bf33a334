"""Task records in a SQLite file (by default the single-use ledger's own file): one host, every worker.

Beside each record: whether the task is live (not ended) and its round's lease, indexed, so the per-principal
bound, the orphan scan and a principal's listing are one query each (protocol.md P205-P208)."""

from __future__ import annotations

import os
import sqlite3

from . import clock
from .sqlite_file import SqliteFile
from .task_store import Listed, StoredTask, TaskStore, TooManyTasks

DEFAULT_PURGE_EVERY_S = 60.0
_TABLE = "baton_tasks_v2"  # v1 (before P207) had no live/lease columns and plaintext records: left unread
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {_TABLE} (
    task_id TEXT PRIMARY KEY,
    principal BLOB NOT NULL,
    version INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    live INTEGER NOT NULL,
    lease REAL NOT NULL,
    record BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS {_TABLE}_expiry ON {_TABLE} (expires_at);
CREATE INDEX IF NOT EXISTS {_TABLE}_principal ON {_TABLE} (principal, task_id);
CREATE INDEX IF NOT EXISTS {_TABLE}_lease ON {_TABLE} (lease) WHERE lease > 0;
CREATE INDEX IF NOT EXISTS {_TABLE}_live ON {_TABLE} (principal) WHERE live = 1;
"""
_CREATE = f"""
INSERT OR IGNORE INTO {_TABLE} (task_id, principal, version, expires_at, live, lease, record)
VALUES (?, ?, 1, ?, ?, ?, ?)
"""
_UPDATE = f"""
UPDATE {_TABLE} SET version = ?, live = ?, lease = ?, record = ?
WHERE task_id = ? AND version = ? AND expires_at > ?
"""
_GET = f"SELECT principal, version, record FROM {_TABLE} WHERE task_id = ? AND expires_at > ?"
_OF = f"""
SELECT task_id, version, record FROM {_TABLE} WHERE principal = ? AND task_id > ? AND expires_at > ?
ORDER BY task_id LIMIT ?
"""
_LIVE = f"SELECT count(*) FROM {_TABLE} WHERE principal = ? AND live = 1 AND expires_at > ?"
_ORPHANS = f"""
SELECT task_id FROM {_TABLE} WHERE lease > 0 AND lease < ? AND expires_at > ? ORDER BY lease LIMIT ? OFFSET ?
"""
_PURGE = f"DELETE FROM {_TABLE} WHERE expires_at <= ?"


class SqliteTaskStore(TaskStore):
    """Task records in `path` (WAL, one transaction per call on the file's own thread; see `sqlite_file`)."""

    def __init__(self, path: str | os.PathLike[str], *, purge_every_s: float = DEFAULT_PURGE_EVERY_S) -> None:
        self._file = SqliteFile(path, _SCHEMA, what="task store", durable=False)
        self.path = self._file.path
        self.purge_every_s = purge_every_s
        self._next_purge = 0.0  # read and written on the file's thread only

    def _write_in(
        self,
        db: sqlite3.Connection,
        task_id: str,
        tag: bytes,
        record: bytes,
        expires_at: float,
        version: int,
        live: bool,
        lease: float,
        limit: int | None,
    ) -> bool:
        now = clock.now()
        if now >= self._next_purge:
            db.execute(_PURGE, (now,))
            self._next_purge = now + self.purge_every_s
        if version == 1 and limit is not None:  # in the write's own transaction (protocol.md P208)
            count = int(db.execute(_LIVE, (tag, now)).fetchone()[0])
            if count >= limit:
                raise TooManyTasks(count)
        if version == 1:
            return bool(db.execute(_CREATE, (task_id, tag, expires_at, live, lease, record)).rowcount)
        # A task's principal and expiry never change: left out of SET, their indexes are not rewritten.
        args = (version, live, lease, record, task_id, version - 1, now)
        return bool(db.execute(_UPDATE, args).rowcount)

    async def write(
        self,
        task_id: str,
        tag: bytes,
        record: bytes,
        expires_at: float,
        version: int,
        *,
        live: bool = True,
        lease: float = 0.0,
        limit: int | None = None,
    ) -> bool:
        return await self._file.run(
            lambda db: self._write_in(db, task_id, tag, record, expires_at, version, live, lease, limit)
        )

    async def get(self, task_id: str) -> StoredTask | None:
        row = await self._file.run(lambda db: db.execute(_GET, (task_id, clock.now())).fetchone())
        return None if row is None else (bytes(row[0]), int(row[1]), bytes(row[2]))

    async def of(self, tag: bytes, after: str, limit: int) -> list[Listed]:
        rows = await self._file.run(lambda db: db.execute(_OF, (tag, after, clock.now(), limit)).fetchall())
        return [(str(r[0]), int(r[1]), bytes(r[2])) for r in rows]

    async def orphans(self, limit: int, skip: int = 0) -> list[str]:
        now = clock.now()
        rows = await self._file.run(lambda db: db.execute(_ORPHANS, (now, now, limit, skip)).fetchall())
        return [str(r[0]) for r in rows]

    async def purge(self) -> None:
        await self._file.run(lambda db: db.execute(_PURGE, (clock.now(),)))

    async def close(self) -> None:
        await self._file.close()
