"""Who listens for which change notifications: `subscriptions/listen` streams (protocol.md P20), and the
watchers that 2025-11-25 sessions register (list changes and resource updates, protocol.md P31)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from ..protocol.constants import META_SUBSCRIPTION_ID
from ..protocol.errors import invalid_params

# notifications filter key -> (list kind, notification method)
FILTERS = {
    "toolsListChanged": ("tools", "notifications/tools/list_changed"),
    "promptsListChanged": ("prompts", "notifications/prompts/list_changed"),
    "resourcesListChanged": ("resources", "notifications/resources/list_changed"),
}
_CLOSED = object()
RESOURCE_UPDATED = "notifications/resources/updated"
Watcher = Callable[[str, dict[str, Any]], None]
"""Called with (method, params) for every change: a list changed, or a resource was updated."""


@dataclass(eq=False)
class Subscription:
    """One open listen stream: the kinds it asked for and its queue of notifications."""

    listen_id: Any
    kinds: frozenset[str]
    honored: dict[str, Any]
    queue: asyncio.Queue[Any] = field(default_factory=asyncio.Queue)

    def _tag(self, params: dict[str, Any]) -> dict[str, Any]:
        return {**params, "_meta": {META_SUBSCRIPTION_ID: self.listen_id}}

    def acknowledgement(self) -> tuple[str, dict[str, Any]]:
        return "notifications/subscriptions/acknowledged", self._tag({"notifications": self.honored})

    async def notifications(self) -> AsyncIterator[tuple[str, dict[str, Any]]]:
        """The notifications for this stream, until the server closes it."""
        while True:
            item = await self.queue.get()
            if item is _CLOSED:
                return
            yield item[0], self._tag(item[1])

    def result(self) -> dict[str, Any]:
        """The listen result the server sends when it ends the stream."""
        return {"resultType": "complete", "_meta": {META_SUBSCRIPTION_ID: self.listen_id}}


class ListenHub:
    """Fans list-changed events out to the open listen streams of this process."""

    def __init__(self) -> None:
        self._subs: set[Subscription] = set()
        self._watchers: list[Watcher] = []

    def watch(self, watcher: Watcher) -> Callable[[], None]:
        """Call `watcher` on every change from now on; returns the function that stops it."""
        self._watchers.append(watcher)

        def unwatch() -> None:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

        return unwatch

    def updated(self, uri: str) -> None:
        """A resource changed: the sessions watching decide whether they subscribed to it."""
        for watcher in list(self._watchers):
            watcher(RESOURCE_UPDATED, {"uri": uri})

    def open(self, listen_id: Any, params: dict[str, Any], offered: frozenset[str]) -> Subscription:
        wanted = params.get("notifications")
        if not isinstance(wanted, dict):
            raise invalid_params('Invalid params: subscriptions/listen needs "notifications" (an object)')
        honored: dict[str, Any] = {}
        kinds = set()
        for key, (kind, _) in FILTERS.items():
            if wanted.get(key) is True and kind in offered:
                honored[key] = True
                kinds.add(kind)
        sub = Subscription(listen_id, frozenset(kinds), honored)
        self._subs.add(sub)
        return sub

    def close(self, sub: Subscription) -> None:
        self._subs.discard(sub)

    def publish(self, kind: str) -> None:
        method = next(m for k, m in FILTERS.values() if k == kind)
        for sub in self._subs:
            if kind in sub.kinds:
                sub.queue.put_nowait((method, {}))
        for watcher in list(self._watchers):
            watcher(method, {})

    def shutdown(self) -> None:
        for sub in self._subs:
            sub.queue.put_nowait(_CLOSED)
        self._subs.clear()
        self._watchers.clear()
