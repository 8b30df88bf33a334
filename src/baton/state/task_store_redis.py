"""Task records in Redis, for many instances: one key per task (`prefix` + id), expiring with the task.
The value is the 32-byte principal tag, the version (8 bytes, big-endian), then the record; a write checks the
version and sets the key in one Lua script, so it is atomic.

The same script keeps three sorted sets beside the records (protocol.md P205-P208): the principal's tasks
(`prefix` + "by:" + tag, scored by expiry, for `tasks/list`), its live ones (`prefix` + "live:" + tag, for
the per-principal bound) and the running rounds' leases (`prefix` + "leases", scored by the lease's end, for
the orphan scan). Members of expired tasks are trimmed as the sets are read."""

from __future__ import annotations

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from . import clock
from .redis_client import close_client, pooled_client, redacted
from .store_url import StoreUnavailable
from .task_store import Listed, StoredTask, TaskStore, TooManyTasks

DEFAULT_PREFIX = "baton:task:"
_TAG = 32
_HEAD = _TAG + 8
_WRITE = """
local v = redis.call('GET', KEYS[1])
if ARGV[2] == '1' then
  if v then return 0 end
  if ARGV[9] ~= '' then
    redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[8])
    local live = redis.call('ZCARD', KEYS[3])
    if live >= tonumber(ARGV[9]) then return -1 - live end
  end
elseif not v or string.sub(v, 33, 40) ~= ARGV[3] then
  return 0
end
redis.call('SET', KEYS[1], ARGV[1], 'PXAT', ARGV[4])
for i = 2, 3 do
  if i == 2 or ARGV[6] == '1' then
    redis.call('ZADD', KEYS[i], ARGV[4], ARGV[5])
    local ttl = redis.call('PTTL', KEYS[i])
    if ttl < 0 or ttl < tonumber(ARGV[4]) - tonumber(ARGV[8]) then redis.call('PEXPIREAT', KEYS[i], ARGV[4]) end
  else
    redis.call('ZREM', KEYS[i], ARGV[5])
  end
end
if ARGV[7] ~= '0' then redis.call('ZADD', KEYS[4], ARGV[7], ARGV[5]) else redis.call('ZREM', KEYS[4], ARGV[5]) end
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

    def _unavailable(self, exc: RedisError) -> StoreUnavailable:
        return StoreUnavailable(f"the Redis task store at {self._shown} cannot be used: {exc}")

    def _sets(self, tag: bytes) -> tuple[str, str]:
        return f"{self.prefix}by:{tag.hex()}", f"{self.prefix}live:{tag.hex()}"

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
        value = tag + version.to_bytes(8, "big") + record
        before = (version - 1).to_bytes(8, "big")
        pxat = max(1, int(expires_at * 1000))
        keys = [self.prefix + task_id, *self._sets(tag), self.prefix + "leases"]
        now_ms = int(clock.now() * 1000)
        args: list[bytes | str | int] = [value, str(version), before, pxat, task_id, str(int(live)), int(lease * 1000)]
        args += [now_ms, "" if limit is None else limit]
        try:
            done = await self._write(keys=keys, args=args)
        except RedisError as exc:
            raise self._unavailable(exc) from None
        if done < 0:  # the principal holds `limit` live tasks already (protocol.md P208)
            raise TooManyTasks(-1 - int(done))
        return bool(done)

    async def get(self, task_id: str) -> StoredTask | None:
        try:
            value = await self._redis.get(self.prefix + task_id)
        except RedisError as exc:
            raise self._unavailable(exc) from None
        if not isinstance(value, bytes):  # None: no such task, or it expired (decode_responses is off)
            return None
        return value[:_TAG], int.from_bytes(value[_TAG:_HEAD], "big"), value[_HEAD:]

    async def _trimmed(self, key: str) -> None:
        await self._redis.zremrangebyscore(key, "-inf", int(clock.now() * 1000))

    async def of(self, tag: bytes, after: str, limit: int) -> list[Listed]:
        by, _ = self._sets(tag)
        try:
            await self._trimmed(by)
            ids = sorted(i for i in map(_text, await self._redis.zrange(by, 0, -1)) if i > after)[:limit]
            values = await self._redis.mget([self.prefix + i for i in ids]) if ids else []
        except RedisError as exc:
            raise self._unavailable(exc) from None
        return [
            (i, int.from_bytes(v[_TAG:_HEAD], "big"), v[_HEAD:])
            for i, v in zip(ids, values, strict=True)
            if isinstance(v, bytes)
        ]

    async def orphans(self, limit: int, skip: int = 0) -> list[str]:
        key = self.prefix + "leases"
        try:
            ids = [_text(i) for i in await self._redis.zrangebyscore(key, 1, int(clock.now() * 1000), skip, limit)]
            gone = [i for i in ids if not await self._redis.exists(self.prefix + i)]
            if gone:  # expired while running: nothing to resume
                await self._redis.zrem(key, *gone)
        except RedisError as exc:
            raise self._unavailable(exc) from None
        return [i for i in ids if i not in gone]

    async def purge(self) -> None:
        """Redis drops expired records itself (PXAT); the sets are trimmed as they are read."""

    async def close(self) -> None:
        await close_client(self._redis)


def _text(member: object) -> str:
    return member.decode() if isinstance(member, bytes) else str(member)
