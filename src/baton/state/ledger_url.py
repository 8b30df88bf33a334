"""Opening a ledger (and the task store beside it) by URL: the one place that knows every backend
(`memory:`, `sqlite:`, `redis://`).

Apart from `ledger.py` so that the backends, which import the ledger's contract, are not imported by it.
"""

from __future__ import annotations

from .ledger import Ledger
from .ledger_memory import MemoryLedger
from .ledger_sqlite import DEFAULT_FILE_NAME, SqliteLedger
from .store_url import parse_store_url
from .task_store import MemoryTaskStore, TaskStore
from .task_store_sqlite import SqliteTaskStore


def ledger_from_url(url: str, *, redis_prefix: str | None = None) -> Ledger:
    """A ledger from a URL (see `baton.state.store_url`): `memory:`; `sqlite:` (the data directory's file)
    or `sqlite://PATH`, so `sqlite:///var/lib/baton/ledger.db` is absolute; `redis://…`, `rediss://…` or
    `unix://…` (needs the `redis` extra)."""

    def redis() -> Ledger:
        from .ledger_redis import DEFAULT_PREFIX, RedisLedger  # noqa: PLC0415 (the optional redis extra)

        return RedisLedger(url, prefix=DEFAULT_PREFIX if redis_prefix is None else redis_prefix)

    return parse_store_url(url, "ledger").open(DEFAULT_FILE_NAME, memory=MemoryLedger, sqlite=SqliteLedger, redis=redis)


def task_store_from_url(url: str) -> TaskStore:
    """The task store beside the ledger a URL names (protocol.md P172): `memory:` in the process, `sqlite:…`
    a table in the ledger's own file, `redis://…` keys under `baton:task:`."""

    def redis() -> TaskStore:
        from .task_store_redis import RedisTaskStore  # noqa: PLC0415 (the optional redis extra)

        return RedisTaskStore(url)

    return parse_store_url(url, "ledger").open(
        DEFAULT_FILE_NAME, memory=MemoryTaskStore, sqlite=SqliteTaskStore, redis=redis
    )
