"""Where task records live (the Tasks extension, protocol.md P172): one opaque record per task id, with the
principal tag of the caller that made it, kept until its expiry.

The server encodes a task (its status, what `tasks/get` shows, and the journal its rounds replay over) into
bytes; a store keeps them, with a version: each write names the version it makes, and lands only on the one
before it (the first only where there is none), so two instances never overwrite each other's change
unseen (protocol.md P174). Each write also says whether the task is live (not yet ended: what the per-principal
bound counts) and until when its running round is leased (0: none), so a periodic scan finds the rounds whose
instance died (`orphans`), and a principal's records are listed by id (`of`, for the 2025-11-25 `tasks/list`;
protocol.md P205-P208). Backends: `MemoryTaskStore` (one process), `SqliteTaskStore` (one host, the
default, in the ledger's file), `RedisTaskStore` (many hosts). Principals are stored as SHA-256 tags
(`principal_tag`), never as given. An unreachable backend raises `StoreUnavailable`.
"""

from __future__ import annotations

import abc
import collections

from . import clock


class TooManyTasks(Exception):
    """A first write refused: the principal already holds `limit` live tasks (protocol.md P208)."""

    def __init__(self, live: int) -> None:
        super().__init__(f"{live} live tasks")
        self.live = live


StoredTask = tuple[bytes, int, bytes]
"""A stored task: (principal tag, version, record)."""
Listed = tuple[str, int, bytes]
"""A principal's stored task: (task id, version, record)."""


class TaskStore(abc.ABC):
    """Task records by id, versioned. `get` answers None once a record expired."""

    @abc.abstractmethod
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
        """Store version `version` of the record of `task_id` (made by the principal whose tag is `tag`, kept
        until `expires_at`, unix seconds): version 1 only if there is no record, a later one only over version
        `version - 1`. False, and nothing written, otherwise. `live`: the task has not ended; `lease`: unix
        seconds until which an instance holds its running round (0: no round runs). With `limit`, version 1
        is written only while the principal holds fewer live tasks, checked in the same step (else
        `TooManyTasks`)."""

    @abc.abstractmethod
    async def get(self, task_id: str) -> StoredTask | None:
        """(principal tag, version, record) of a live task, or None."""

    @abc.abstractmethod
    async def of(self, tag: bytes, after: str, limit: int) -> list[Listed]:
        """The principal's unexpired records with ids after `after`, in id order, at most `limit`."""

    @abc.abstractmethod
    async def orphans(self, limit: int, skip: int = 0) -> list[str]:
        """Ids of unexpired tasks whose round's lease ran out (their instance stopped renewing it): at most
        `limit`, after the first `skip`."""

    @abc.abstractmethod
    async def purge(self) -> None:
        """Drop every expired record now (backends also drop them as they go)."""

    @abc.abstractmethod
    async def close(self) -> None:
        """Release the backend's resources."""


class MemoryTaskStore(TaskStore):
    """Records in this process: a dict, purged of expired records as new ones come."""

    def __init__(self) -> None:
        self._records: dict[str, tuple[bytes, int, bytes, float]] = {}
        self._expiry: collections.deque[tuple[float, str]] = collections.deque()
        self._marks: dict[str, tuple[bool, float]] = {}  # task id -> (live, lease)
        self._live: dict[bytes, set[str]] = {}  # principal tag -> its live tasks' ids (the bound counts them)

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
        await self.purge()
        held = self._records.get(task_id)
        count = len(self._live.get(tag, ()))
        if held is None and version == 1 and limit is not None and count >= limit:
            raise TooManyTasks(count)
        if (held is None and version != 1) or (held is not None and held[1] != version - 1):
            return False
        if held is None:
            self._expiry.append((expires_at, task_id))
        # A copy of exactly its size: orjson's bytes keep the allocation they were built in (about 8 KiB).
        self._records[task_id] = (tag, version, bytes(memoryview(record)), expires_at)
        self._marks[task_id] = (live, lease)
        if live:
            self._live.setdefault(tag, set()).add(task_id)
        else:
            self._ended(tag, task_id)
        return True

    def _ended(self, tag: bytes, task_id: str) -> None:
        mine = self._live.get(tag)
        if mine is not None:
            mine.discard(task_id)
            if not mine:  # no empty set per principal left behind
                del self._live[tag]

    async def purge(self) -> None:
        now = clock.now()
        while self._expiry and self._expiry[0][0] <= now:
            _, old = self._expiry.popleft()
            stale = self._records.get(old)
            if stale is not None and stale[3] <= now:
                del self._records[old]
                self._marks.pop(old, None)
                self._ended(stale[0], old)

    def _unexpired(self) -> list[tuple[str, tuple[bytes, int, bytes, float]]]:
        now = clock.now()
        return [(task_id, held) for task_id, held in self._records.items() if held[3] > now]

    async def of(self, tag: bytes, after: str, limit: int) -> list[Listed]:
        mine = sorted((i, h[1], h[2]) for i, h in self._unexpired() if h[0] == tag and i > after)
        return mine[:limit]

    async def orphans(self, limit: int, skip: int = 0) -> list[str]:
        now = clock.now()
        return [i for i, _ in self._unexpired() if 0 < self._marks[i][1] < now][skip : skip + limit]

    async def get(self, task_id: str) -> StoredTask | None:
        held = self._records.get(task_id)
        if held is None or held[3] <= clock.now():
            return None
        return held[0], held[1], held[2]

    def __len__(self) -> int:
        return len(self._records)

    async def close(self) -> None:
        self._records.clear()
        self._marks.clear()
        self._live.clear()
