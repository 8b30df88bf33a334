"""Where task records live (the Tasks extension, protocol.md P172): one opaque record per task id, with the
principal tag of the caller that made it, kept until its expiry.

The server encodes a task (its status, what `tasks/get` shows, and the journal its rounds replay over) into
bytes; a store keeps them. Backends: `MemoryTaskStore` (one process), `SqliteTaskStore` (one host, the
default, in the ledger's file), `RedisTaskStore` (many hosts). Principals are stored as SHA-256 tags
(`principal_tag`), never as given. An unreachable backend raises `StoreUnavailable`.
"""

from __future__ import annotations

import abc
import collections

from . import clock


class TaskStore(abc.ABC):
    """Task records by id. `put` replaces a record; `get` answers None once it expired."""

    @abc.abstractmethod
    async def put(self, task_id: str, tag: bytes, record: bytes, expires_at: float) -> None:
        """Store (or replace) the record of `task_id`, made by the principal whose tag is `tag`, until
        `expires_at` (unix seconds)."""

    @abc.abstractmethod
    async def get(self, task_id: str) -> tuple[bytes, bytes] | None:
        """(principal tag, record) of a live task, or None."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the backend's resources."""


class MemoryTaskStore(TaskStore):
    """Records in this process: a dict, purged of expired records as new ones come."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[bytes, bytes, float]] = {}
        self._expiry: collections.deque[tuple[float, str]] = collections.deque()

    async def put(self, task_id: str, tag: bytes, record: bytes, expires_at: float) -> None:
        now = clock.now()
        while self._expiry and self._expiry[0][0] <= now:
            _, old = self._expiry.popleft()
            held = self._records.get(old)
            if held is not None and held[2] <= now:
                del self._records[old]
        if task_id not in self._records:
            self._expiry.append((expires_at, task_id))
        # A copy of exactly its size: orjson's bytes keep the allocation they were built in (about 8 KiB).
        self._records[task_id] = (tag, bytes(memoryview(record)), expires_at)

    async def get(self, task_id: str) -> tuple[bytes, bytes] | None:
        held = self._records.get(task_id)
        if held is None or held[2] <= clock.now():
            return None
        return held[0], held[1]

    def __len__(self) -> int:
        return len(self._records)

    async def close(self) -> None:
        self._records.clear()
