"""Answers that reached another instance than the one waiting for them, passed on through Redis (protocol.md P113).

In a 2025-11-25 session the server's own request (`elicitation/create`, ...) waits in the memory of the
instance running the call that sent it, and the client's answer comes back as a POST of its own, which a
load balancer may send to any instance. Every instance subscribes to one Redis pub/sub channel named by
its route (a random id, new at each start, carried in the ids of the requests it sends); an instance that
receives an answer naming another route publishes it there, with the session id, and the subscriber
applies it within that session only. PUBLISH counts the subscribers that got it: none means the instance
that asked is gone (stopped or restarted), and its question with it. Redis is trusted as the ledger is.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import orjson

from .redis_client import close_client, pooled_client, redacted

if TYPE_CHECKING:
    import redis.asyncio as aioredis

log = logging.getLogger("baton.http")

CHANNEL_PREFIX = "baton:answers:"
_POLL_S = 1.0  # under the client's socket timeout: an idle subscription is not an error
_BACKOFF_S = (0.05, 2.0)

Deliver = Callable[[str, dict[str, Any]], None]
"""Apply one passed-on answer: (session id, the JSON-RPC response)."""


class BusUnavailable(Exception):
    """Redis did not take the answer (down, or too slow); the message names it without a password."""


class AnswerBus:
    """One instance's end of the bus: its subscription (started by `start`) and `publish` to the others."""

    def __init__(self, url: str, route: str, deliver: Deliver, *, prefix: str = CHANNEL_PREFIX) -> None:
        self.url = redacted(url)
        self.route = route
        self._deliver = deliver
        self._prefix = prefix
        self._client: aioredis.Redis = pooled_client(
            url, "answer bus", connect_timeout_s=1.0, timeout_s=2.0, max_connections=16
        )
        self._task: asyncio.Task[None] | None = None
        self.subscribed = asyncio.Event()

    async def start(self, wait_s: float = 2.0) -> None:
        """Subscribe (in the background, again after each Redis outage); wait up to `wait_s` for the first."""
        self._task = asyncio.ensure_future(self._listen())
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.subscribed.wait(), wait_s)
        if not self.subscribed.is_set():
            log.warning("answer bus: not subscribed yet at %s; retrying in the background", self.url)

    async def publish(self, route: str, session_id: str, message: dict[str, Any]) -> bool:
        """Pass an answer on to the instance of `route`; False when no instance listens there."""
        from redis.exceptions import RedisError  # noqa: PLC0415 (the optional redis extra)

        data = orjson.dumps({"s": session_id, "m": message})
        try:
            receivers = await self._client.publish(self._prefix + route, data)
        except (RedisError, OSError) as exc:
            raise BusUnavailable(f"Redis at {self.url}: {type(exc).__name__}") from None
        return bool(receivers)

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await close_client(self._client)

    async def _listen(self) -> None:
        from redis.exceptions import RedisError  # noqa: PLC0415 (the optional redis extra)

        delay, cap = _BACKOFF_S
        warned = False
        while True:
            pubsub = self._client.pubsub()
            try:
                await pubsub.subscribe(self._prefix + self.route)
                self.subscribed.set()
                if warned:
                    log.warning("answer bus: subscribed again at %s", self.url)
                delay, warned = _BACKOFF_S[0], False
                while True:
                    message = await pubsub.get_message(ignore_subscribe_messages=True, timeout=_POLL_S)
                    if message is not None:
                        self._received(message.get("data"))
            except (RedisError, OSError) as exc:
                if not warned:
                    log.warning("answer bus: lost Redis at %s (%s); subscribing again", self.url, type(exc).__name__)
                    warned = True
            finally:
                self.subscribed.clear()
                with contextlib.suppress(Exception):
                    await asyncio.shield(pubsub.aclose())
            await asyncio.sleep(delay)
            delay = min(delay * 2, cap)

    def _received(self, data: Any) -> None:
        try:
            envelope = orjson.loads(data)
        except (orjson.JSONDecodeError, TypeError):
            return
        if not isinstance(envelope, dict):
            return
        sid, message = envelope.get("s"), envelope.get("m")
        if isinstance(sid, str) and isinstance(message, dict):
            self._deliver(sid, message)
