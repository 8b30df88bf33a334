"""Task records in Redis, for many instances: one key per task (`prefix` + id), expiring with the task.
The value is the 32-byte principal tag, the version (8 bytes, big-endian), then the record; a write checks the
version and sets the key in one Lua script, so it is atomic."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .redis_client import pooled_client, redacted
from .store_url import StoreUnavailable
from .task_store import StoredTask, TaskStore

DEFAULT_PREFIX = "baton:task:"
_TAG = 32
_HEAD = _TAG + 8
_WRITE = """
local v = redis.call('GET', KEYS[1])
if ARGV[2] == '1' then
  if v then return 0 end
elseif not v or string.sub(v, 33, 40) ~= ARGV[3] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[4])
return 1
"""


class RedisTaskStore(TaskStore):
    """Task records in Redis (6.2 or later: PXAT)."""

    def __init__(self, url: str, *, prefix: str = DEFAULT_PREFIX, timeout_s: float = 2.0) -> None:
        self.prefix = prefix
        self._shown = redacted(url)
        self._redis: aioredis.Redis = pooled_client(
            url, "task store", connect_timeout_s=timeout_s, timeout_s=timeout_s, max_connections=32
        )
        self._write = self._redis.register_script(_WRITE)

    async def write(self, task_id: str, tag: bytes, record: bytes, expires_at: float, version: int) -> bool:
        value = tag + version.to_bytes(8, "big") + record
        before = (version - 1).to_bytes(8, "big")
        pxat = max(1, int(expires_at * 1000))
        try:
            done = await self._write(keys=[self.prefix + task_id], args=[value, str(version), before, pxat])
        except RedisError as exc:
            raise StoreUnavailable(f"the Redis task store at {self._shown} cannot be used: {exc}") from None
        return bool(done)

    async def get(self, task_id: str) -> StoredTask | None:
        try:
            value = await self._redis.get(self.prefix + task_id)
        except RedisError as exc:
            raise StoreUnavailable(f"the Redis task store at {self._shown} cannot be used: {exc}") from None
        if not isinstance(value, bytes):  # None: no such task, or it expired (decode_responses is off)
            return None
        return value[:_TAG], int.from_bytes(value[_TAG:_HEAD], "big"), value[_HEAD:]

    async def close(self) -> None:
        await self._redis.aclose()
