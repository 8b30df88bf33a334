"""Task records in a SQLite file (by default the single-use ledger's own file): one host, every worker."""

from __future__ import annotations

import os
import sqlite3

from . import clock
from .sqlite_file import SqliteFile
from .task_store import StoredTask, TaskStore

DEFAULT_PURGE_EVERY_S = 60.0
_TABLE = "baton_tasks_v1"
_SCHEMA = f"""
CREATE TABLE IF NOT EXISTS {_TABLE} (
    task_id TEXT PRIMARY KEY,
    principal BLOB NOT NULL,
    version INTEGER NOT NULL,
    expires_at REAL NOT NULL,
    record BLOB NOT NULL
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS {_TABLE}_expiry ON {_TABLE} (expires_at);
"""
_CREATE = f"INSERT OR IGNORE INTO {_TABLE} (task_id, principal, version, expires_at, record) VALUES (?, ?, 1, ?, ?)"
_UPDATE = f"""
UPDATE {_TABLE} SET principal = ?, version = ?, expires_at = ?, record = ?
WHERE task_id = ? AND version = ? AND expires_at > ?
"""
_GET = f"SELECT principal, version, record FROM {_TABLE} WHERE task_id = ? AND expires_at > ?"
_PURGE = f"DELETE FROM {_TABLE} WHERE expires_at <= ?"


class SqliteTaskStore(TaskStore):
    """Task records in `path` (WAL, one transaction per call on the file's own thread; see `sqlite_file`)."""

    def __init__(self, path: str | os.PathLike[str], *, purge_every_s: float = DEFAULT_PURGE_EVERY_S) -> None:
        self._file = SqliteFile(path, _SCHEMA, what="task store", durable=False)
        self.path = self._file.path
        self.purge_every_s = purge_every_s
        self._next_purge = 0.0  # read and written on the file's thread only

    def _write_in(
        self, db: sqlite3.Connection, task_id: str, tag: bytes, record: bytes, expires_at: float, version: int
    ) -> bool:
        now = clock.now()
        if now >= self._next_purge:
            db.execute(_PURGE, (now,))
            self._next_purge = now + self.purge_every_s
        if version == 1:
            return bool(db.execute(_CREATE, (task_id, tag, expires_at, record)).rowcount)
        return bool(db.execute(_UPDATE, (tag, version, expires_at, record, task_id, version - 1, now)).rowcount)

    async def write(self, task_id: str, tag: bytes, record: bytes, expires_at: float, version: int) -> bool:
        return await self._file.run(lambda db: self._write_in(db, task_id, tag, record, expires_at, version))

    async def get(self, task_id: str) -> StoredTask | None:
        row = await self._file.run(lambda db: db.execute(_GET, (task_id, clock.now())).fetchone())
        return None if row is None else (bytes(row[0]), int(row[1]), bytes(row[2]))

    async def close(self) -> None:
        await self._file.close()
