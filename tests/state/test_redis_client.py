"""`baton.state.redis_client`: closing a store's Redis client never fails, even when redis-py says it timed out."""

from __future__ import annotations

import asyncio

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeout

from baton.state.redis_client import close_client, pooled_client, redacted


class Closing:
    """A client whose close fails as redis-py's does when a socket's close outlasts the connect timeout."""

    def __init__(self, error: BaseException | None) -> None:
        self.error = error
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1
        if self.error is not None:
            raise self.error


@pytest.mark.parametrize(
    "error", [None, RedisTimeout("Timed out closing connection after 1.0"), RedisConnectionError("gone"), OSError()]
)
def test_closing_a_client_never_fails(error: BaseException | None) -> None:
    client = Closing(error)
    asyncio.run(close_client(client))  # type: ignore[arg-type]
    assert client.closed == 1


def test_what_is_not_a_redis_or_socket_error_still_propagates() -> None:
    with pytest.raises(ValueError, match="a bug"):
        asyncio.run(close_client(Closing(ValueError("a bug"))))  # type: ignore[arg-type]


def test_a_real_pool_closes_though_never_connected() -> None:
    client = pooled_client("redis://127.0.0.1:1/0", "ledger", connect_timeout_s=0.5, timeout_s=0.5, max_connections=2)
    asyncio.run(close_client(client))


def test_an_unusable_url_names_what_it_was_for_and_hides_the_password() -> None:
    with pytest.raises(ValueError, match=r"Redis vault store URL") as caught:
        pooled_client(
            "http://u:hunter2@127.0.0.1:1/0", "vault store", connect_timeout_s=1, timeout_s=1, max_connections=1
        )
    assert "hunter2" not in str(caught.value)
    assert redacted("redis://u:hunter2@h:1/0") == "redis://u:***@h:1/0"
