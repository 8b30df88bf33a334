"""Task records in Redis, for many instances: one key per task (`prefix` + id), expiring with the task.
The value is the 32-byte principal tag followed by the record."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .redis_client import pooled_client, redacted
from .store_url import StoreUnavailable
from .task_store import TaskStore

DEFAULT_PREFIX = "baton:task:"
_TAG = 32


class RedisTaskStore(TaskStore):
    """Task records in Redis (6.2 or later: PXAT)."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout_s: float = 2.0) -> None:
        self.prefix = prefix
        self._shown = redacted(url)
        self._redis: aioredis.Redis = pooled_client(
            url, "task store", connect_timeout_s=timeout_s, timeout_s=timeout_s, max_connections=32
        )

    async def put(self, task_id: str, tag: bytes, record: bytes, expires_at: float) -> None:
        try:
            await self._redis.set(self.prefix + task_id, tag + record, pxat=max(1, int(expires_at * 1000)))
        except RedisError as exc:
            raise StoreUnavailable(f"the Redis task store at {self._shown} cannot be used: {exc}") from None

    async def get(self, task_id: str) -> tuple[bytes, bytes] | None:
        try:
            value = await self._redis.get(self.prefix + task_id)
        except RedisError as exc:
            raise StoreUnavailable(f"the Redis task store at {self._shown} cannot be used: {exc}") from None
        if not isinstance(value, bytes):  # None: no such task, or it expired (decode_responses is off)
            return None
        return value[:_TAG], value[_TAG:]

    async def close(self) -> None:
        await self._redis.aclose()
