"""One SQLite file used off the event loop, opened as every embedded store opens it (ledger, tickets, vault).

On first use the directory is created (0700) and the file too, private (0600; SQLite gives its -wal and
-shm files the same mode), then opened in WAL mode with a busy timeout. Every call is one
`BEGIN IMMEDIATE` transaction (the write lock is taken up front, waiting up to the busy timeout for
other processes) on the file's one worker thread and connection. An error of SQLite or of the file
system drops the connection, so that the next call opens the file again, and raises `unavailable`
(`StoreUnavailable` unless told) naming the store and the file. `durable=False` (`synchronous=NORMAL`)
survives a crash of the process but not a power loss; `durable=True` (`FULL`) syncs every commit.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from .store_url import StoreUnavailable

T = TypeVar("T")
DEFAULT_BUSY_TIMEOUT_S = 5.0


class SqliteFile:
    """Runs `op(connection)` in one transaction on the file's own thread; `what` names the store in errors."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        schema: str,
        *,
        what: str,
        busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S,
        durable: bool = True,
        unavailable: Callable[[str], Exception] = StoreUnavailable,
    ) -> None:
        self.path = Path(path)
        self.schema = schema
        self.what = what
        self.busy_timeout_s = busy_timeout_s
        self.durable = durable
        self._unavailable = unavailable
        self._db: sqlite3.Connection | None = None
        self._closed = False
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"baton-{what.replace(' ', '-')}-sqlite")

    # Everything below that touches `_db` runs on the file's one thread.

    def _connect(self) -> sqlite3.Connection:
        if self._db is None:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            os.close(os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600))
            db = sqlite3.connect(self.path, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False)
            try:
                self._set_up(db)
            except BaseException:
                db.close()
                raise
            self._db = db
        return self._db

    def _set_up(self, db: sqlite3.Connection) -> None:
        """WAL mode, the sync level and the schema. Switching to WAL does not wait on SQLite's busy handler:
        when several processes open a new file at once, it can fail as "locked" at once, so it is retried
        here within the busy timeout."""
        deadline = time.monotonic() + self.busy_timeout_s
        while True:
            try:
                db.execute("PRAGMA journal_mode = WAL")
                db.execute(f"PRAGMA synchronous = {'FULL' if self.durable else 'NORMAL'}")
                db.executescript(self.schema)
                return
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() >= deadline:
                    raise
                time.sleep(0.02)

    def _transaction(self, op: Callable[[sqlite3.Connection], T]) -> T:
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
            self._disconnect()  # the next call opens the file again (and may recover)
            detail = str(exc)
            if "locked" in detail or "busy" in detail:
                detail += f" (still busy after {self.busy_timeout_s} s)"
            raise self._unavailable(f"SQLite {self.what} {self.path}: {detail}") from exc

    async def run(self, op: Callable[[sqlite3.Connection], T]) -> T:
        """`op(connection)` in one transaction, committed if it returns, rolled back if it raises."""
        if self._closed:
            raise self._unavailable(f"SQLite {self.what} {self.path} is closed")
        return await asyncio.get_running_loop().run_in_executor(self._executor, self._transaction, op)

    def _disconnect(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    async def close(self) -> None:
        """Close the connection after every call already submitted; later calls raise `unavailable`."""
        if self._closed:
            return
        self._closed = True
        await asyncio.get_running_loop().run_in_executor(self._executor, self._disconnect)
        self._executor.shutdown(wait=False)
