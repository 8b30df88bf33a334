"""Connect tickets and vault records in Redis, shared by every instance behind a load balancer.

A ticket is one string key, `prefix` + ticket id, written with `SET … PX` so that Redis itself drops
it at its expiry; `complete` is one Lua script (check live, not done, same principal; then flip the
done byte with `KEEPTTL`), so it succeeds once across all instances. A vault record is a field of one
hash per principal: key `prefix` + SHA-256 hex of the principal, field the credential name, so no
principal/name pair can collide with another and no identity appears in a key. Values are only what
the stores are given (tickets, ciphertext). Connection or server errors raise `StoreUnavailable`
within the timeouts; the client reconnects on the next call. Requires Redis 6.0 or later (KEEPTTL).
"""

from __future__ import annotations

import hashlib
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from ..state import clock
from ..state.redis_client import close_client, pooled_client, redacted
from ..state.store_url import StoreUnavailable
from .tickets import Ticket, TicketStore
from .vault import VaultStore

TICKET_PREFIX = "baton:connect:ticket:"
VAULT_PREFIX = "baton:connect:vault:"

# KEYS[1] the ticket; ARGV[1] = "0" + the length-prefixed principal, which the value starts with
# exactly when the ticket is not done and is that principal's (the length prefix rules out prefixes).
_COMPLETE = """
local v = redis.call('GET', KEYS[1])
if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then
  redis.call('SET', KEYS[1], '1' .. string.sub(v, 2), 'KEEPTTL')
  return 1
end
return 0
"""


class _RedisStore:
    """What both stores share: a key prefix and a bounded pool with timeouts; errors become `StoreUnavailable`."""

    what = "store"  # for messages: "ticket store", "vault store"
    default_prefix = ""

    def __init__(
        self,
        url: str,
        *,
        prefix: str | None = None,
        connect_timeout_s: float = 1.0,
        timeout_s: float = 2.0,
        max_connections: int = 64,
    ) -> None:
        self.prefix = self.default_prefix if prefix is None else prefix
        self._url = redacted(url)
        self._redis: aioredis.Redis = pooled_client(
            url, self.what, connect_timeout_s=connect_timeout_s, timeout_s=timeout_s, max_connections=max_connections
        )
        self._closed = False

    @property
    def url(self) -> str:
        """The Redis URL, password redacted."""
        return self._url

    @contextmanager
    def _use(self) -> Iterator[aioredis.Redis]:
        if self._closed:
            raise StoreUnavailable(f"Redis {self.what} at {self._url} is closed")
        try:
            yield self._redis
        except (RedisError, OSError) as exc:
            raise StoreUnavailable(f"Redis {self.what} at {self._url}: {type(exc).__name__}: {exc}") from exc

    async def close(self) -> None:
        if not self._closed:
            self._closed = True
            await close_client(self._redis)


def _field(value: bytes) -> bytes:
    return len(value).to_bytes(4, "big") + value


def _encode(ticket: Ticket) -> bytes:
    """`0`/`1` (done), then principal, flow id and purpose length-prefixed, then the expiry (a double)."""
    return (
        (b"1" if ticket.done else b"0")
        + _field(ticket.principal.encode())
        + _field(ticket.flow_id)
        + _field(ticket.purpose.encode())
        + struct.pack(">d", ticket.expires_at)
    )


def _decode(ticket_id: str, value: bytes) -> Ticket:
    fields: list[bytes] = []
    at = 1
    for _ in range(3):
        size = int.from_bytes(value[at : at + 4], "big")
        fields.append(value[at + 4 : at + 4 + size])
        at += 4 + size
    if value[:1] not in (b"0", b"1") or len(value) != at + 8:
        raise StoreUnavailable(f"the Redis ticket store holds a malformed record for a ticket ({len(value)} bytes)")
    (expires_at,) = struct.unpack(">d", value[at:])
    return Ticket(
        id=ticket_id,
        principal=fields[0].decode(),
        flow_id=fields[1],
        purpose=fields[2].decode(),
        expires_at=expires_at,
        done=value[:1] == b"1",
    )


class RedisTickets(_RedisStore, TicketStore):
    """Tickets under `prefix` + id; Redis expires them, so "live" means "the key exists"."""

    what = "ticket store"
    default_prefix = TICKET_PREFIX

    @cached_property
    def _complete(self) -> AsyncScript:
        """The Lua script that marks a ticket done once (registered on first use; no round trip)."""
        return self._redis.register_script(_COMPLETE)

    async def put(self, ticket: Ticket) -> None:
        key = self.prefix + ticket.id
        ttl_ms = int((ticket.expires_at - clock.now()) * 1000)  # relative: Redis's own clock does not matter
        with self._use() as redis:
            if ttl_ms > 0:
                await redis.set(key, _encode(ticket), px=ttl_ms)
            else:
                await redis.delete(key)  # already expired: as if stored and dropped at once

    async def get(self, ticket_id: str) -> Ticket | None:
        with self._use() as redis:
            value: Any = await redis.get(self.prefix + ticket_id)
        return None if value is None else _decode(ticket_id, bytes(value))

    async def complete(self, ticket_id: str, principal: str) -> bool:
        with self._use():
            done = await self._complete(keys=[self.prefix + ticket_id], args=[b"0" + _field(principal.encode())])
        return int(done) == 1


class RedisVaultStore(_RedisStore, VaultStore):
    """Ciphertext records in one hash per principal (`prefix` + SHA-256 hex of it), one field per name."""

    what = "vault store"
    default_prefix = VAULT_PREFIX

    def key(self, principal: str) -> str:
        """The hash holding `principal`'s records."""
        return self.prefix + hashlib.sha256(principal.encode()).hexdigest()

    async def read(self, principal: str, name: str) -> bytes | None:
        with self._use() as redis:
            record: Any = await redis.hget(self.key(principal), name)
        return None if record is None else bytes(record)

    async def write(self, principal: str, name: str, record: bytes) -> None:
        with self._use() as redis:
            await redis.hset(self.key(principal), name, record)

    async def delete(self, principal: str, name: str) -> None:
        with self._use() as redis:
            await redis.hdel(self.key(principal), name)
