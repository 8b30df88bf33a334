"""The Redis client every Baton store uses: a bounded pool with timeouts, and URLs without passwords.

Shared by the single-use ledger (`state.ledger_redis`) and the connect kit's stores, so that an outage looks the
same everywhere: a call waits at most `timeout_s` (a connection at most `connect_timeout_s`), and one quick
retry on a fresh connection covers a pooled connection that a Redis restart broke; closing never fails
(`close_client`). `pooled_client` needs the optional `redis` package (Baton's `[redis]` extra); `redacted` does
not.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING
from urllib.parse import urlsplit, urlunsplit

if TYPE_CHECKING:
    import redis.asyncio as aioredis


def redacted(url: str) -> str:
    """The URL for messages: no password (in the authority or the query), even if the URL is malformed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(a malformed URL)"
    user, at, host = parts.netloc.rpartition("@")
    if at and ":" in user:
        parts = parts._replace(netloc=f"{user.partition(':')[0]}:***@{host}")
    if "password" in parts.query.lower():
        parts = parts._replace(query="***")
    return urlunsplit(parts)


def pooled_client(
    url: str, what: str, *, connect_timeout_s: float, timeout_s: float, max_connections: int
) -> aioredis.Redis:
    """A client on a blocking pool: a burst waits (up to `timeout_s`) for a connection instead of failing.

    Raises ValueError naming `what` ("ledger", "vault store", ...) and the redacted URL when it is unusable.
    """
    import redis.asyncio as aioredis  # noqa: PLC0415 (the optional redis extra)
    from redis.asyncio.retry import Retry  # noqa: PLC0415 (the optional redis extra)
    from redis.backoff import ExponentialBackoff  # noqa: PLC0415 (the optional redis extra)
    from redis.exceptions import RedisError  # noqa: PLC0415 (the optional redis extra)

    try:
        pool = aioredis.BlockingConnectionPool.from_url(
            url,
            max_connections=max_connections,
            timeout=timeout_s,
            socket_connect_timeout=connect_timeout_s,
            socket_timeout=timeout_s,
            retry=Retry(ExponentialBackoff(cap=0.05, base=0.01), 1),
        )
    except (ValueError, RedisError) as exc:
        raise ValueError(f"Redis {what} URL {redacted(url)}: {exc}") from None
    return aioredis.Redis.from_pool(pool)


async def close_client(client: aioredis.Redis) -> None:
    """Close every connection of `client`, and never fail: redis-py raises its TimeoutError when a socket's
    close outlasts the connect timeout (a loaded machine, a Redis gone), though it has closed the socket on
    our side already; a server shutting down has nothing to do about that."""
    from redis.exceptions import RedisError  # noqa: PLC0415 (the optional redis extra)

    try:
        await client.aclose()
    except (RedisError, OSError):
        await asyncio.sleep(0)  # the transports' own close callbacks run before the caller's loop may end
