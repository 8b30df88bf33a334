"""The ledger for many hosts: one Redis key per claimed round token, expiring with the token.

A claim is `SET key value NX PXAT expiry`; recording and releasing check the owner and write in one
Lua script, so each is atomic. A value is `P` + principal tag + a random claim nonce while in progress,
and `D` + principal tag + reply once recorded. The nonce makes a claim retried by the client after a
lost reply recognise itself. Requires Redis 6.2 or later (PXAT). Any connection or server error
raises `LedgerUnavailable`; the client reconnects on the next call, so a restarted Redis is picked up.
A claim whose SET failed in flight may still land later (a stalled Redis applies it when it resumes):
it is then withdrawn in the background, by its exact value, so the round is not stranded "in progress".
"""

from __future__ import annotations

import logging
import os
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import RedisError

from .background import Retries
from .ledger import (
    FOREIGN,
    FRESH,
    IN_PROGRESS,
    Claim,
    ClaimStatus,
    Ledger,
    LedgerConflict,
    LedgerUnavailable,
    check_token_id,
    principal_tag,
)
from .redis_client import close_client, pooled_client, redacted

log = logging.getLogger("baton.ledger")

DEFAULT_PREFIX = "baton:ledger:"
_TAG = 32
_NONCE = 16

_RECORD = """
local v = redis.call('GET', KEYS[1])
if not v then return 0 end
if v == ARGV[2] then return 1 end
if string.sub(v, 1, #ARGV[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], ARGV[2], 'PXAT', ARGV[3])
  return 1
end
if string.sub(v, 2, #ARGV[1]) == string.sub(ARGV[1], 2) then return 2 end
return 3
"""
_WITHDRAW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_RELEASE = """
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_REFUSALS = {
    0: "cannot record: the claim expired or was released",
    2: "cannot record: a result is already recorded for this token",
    3: "cannot record: the token is claimed by another principal",
}


def _pxat(expires_at: float) -> int:
    return max(1, int(expires_at * 1000))


class RedisLedger(Ledger):
    """Claims in Redis under `prefix` + hex token id. Timeouts bound how long an outage blocks a call."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = DEFAULT_PREFIX,
        connect_timeout_s: float = 1.0,
        timeout_s: float = 2.0,
        max_connections: int = 64,
    ) -> None:
        self.url = redacted(url)
        self.prefix = prefix
        self._client: aioredis.Redis = pooled_client(
            url,
            "ledger",
            connect_timeout_s=connect_timeout_s,
            timeout_s=timeout_s,
            max_connections=max_connections,
        )
        self._record = self._client.register_script(_RECORD)
        self._release = self._client.register_script(_RELEASE)
        self._withdraw = self._client.register_script(_WITHDRAW)
        self._retries = Retries()  # claims that may still land, to withdraw
        self._closed = False

    def _key(self, token_id: bytes) -> str:
        return self.prefix + check_token_id(token_id).hex()

    def _unavailable(self, exc: BaseException) -> LedgerUnavailable:
        return LedgerUnavailable(f"Redis ledger at {self.url}: {type(exc).__name__}: {exc}")

    def _check_open(self) -> None:
        if self._closed:
            raise LedgerUnavailable(f"Redis ledger at {self.url} is closed")

    async def _claim(self, token_id: bytes, principal: str, expires_at: float) -> Claim:
        self._check_open()
        key = self._key(token_id)
        tag = principal_tag(principal)
        mine = b"P" + tag + os.urandom(_NONCE)
        try:
            for _ in range(3):
                if await self._client.set(key, mine, nx=True, pxat=_pxat(expires_at)):
                    return FRESH
                held: Any = await self._client.get(key)
                if held is not None:
                    return self._classify(bytes(held), tag, mine)
                # Released or expired between the two calls: try again.
        except (RedisError, OSError) as exc:
            self._withdraw_later(key, mine, expires_at)  # the SET may have reached Redis and may still land
            raise self._unavailable(exc) from exc
        raise LedgerUnavailable(f"Redis ledger at {self.url}: the claim on {key} kept changing; try again")

    def _withdraw_later(self, key: str, value: bytes, expires_at: float) -> None:
        async def attempt() -> bool:
            try:
                if await self._withdraw(keys=[key], args=[value]):
                    log.info("withdrew a claim on %s that landed after its call had failed", key)
            except (RedisError, OSError):
                return False
            return True

        self._retries.keep_trying(f"withdraw a claim on {key}", attempt, expires_at)

    @staticmethod
    def _classify(held: bytes, tag: bytes, mine: bytes) -> Claim:
        if held == mine:
            return FRESH  # our own SET succeeded, and its reply was lost and retried
        if held[1 : 1 + _TAG] != tag:
            return FOREIGN
        if held[:1] == b"D":
            return Claim(ClaimStatus.DONE, held[1 + _TAG :])
        return IN_PROGRESS

    async def record(self, token_id: bytes, principal: str, result: bytes, expires_at: float) -> None:
        self._check_open()
        tag = principal_tag(principal)
        try:
            outcome = await self._record(
                keys=[self._key(token_id)], args=[b"P" + tag, b"D" + tag + bytes(result), _pxat(expires_at)]
            )
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc
        if outcome != 1:
            raise LedgerConflict(_REFUSALS.get(int(outcome), f"cannot record: unexpected answer {outcome!r}"))

    async def release(self, token_id: bytes, principal: str) -> None:
        self._check_open()
        try:
            await self._release(keys=[self._key(token_id)], args=[b"P" + principal_tag(principal)])
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc

    async def ping(self) -> None:
        self._check_open()
        try:
            await self._client.ping()
        except (RedisError, OSError) as exc:
            raise self._unavailable(exc) from exc

    async def purge(self) -> int:
        self._check_open()
        return 0  # Redis expires every key at its PXAT by itself.

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._retries.cancel_all()
        await close_client(self._client)
