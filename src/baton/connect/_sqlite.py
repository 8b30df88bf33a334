"""One SQLite file used off the event loop: a single worker thread and connection per store."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

T = TypeVar("T")


class SqliteFile:
    """Runs `op(connection)` in one transaction on the file's own thread; the file is created private."""

    def __init__(self, path: str | os.PathLike[str], schema: str) -> None:
        self.path = Path(path)
        self.schema = schema
        self._db: sqlite3.Connection | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="baton-connect-sqlite")

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            db = sqlite3.connect(self.path, timeout=5.0, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA journal_mode = WAL")
            db.executescript(self.schema)
            self._db = db
        return self._db

    def _transaction(self, op: Callable[[sqlite3.Connection], T]) -> T:
        db = self._connect()
        db.execute("BEGIN IMMEDIATE")
        try:
            value = op(db)
        except BaseException:
            db.execute("ROLLBACK")
            raise
        db.execute("COMMIT")
        return value

    async def run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._transaction, op)

    def _disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    async def close(self) -> None:
        await asyncio.get_running_loop().run_in_executor(self._executor, self._disconnect)
        self._executor.shutdown(wait=False)
