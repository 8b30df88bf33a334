"""Who listens for which change notifications: `subscriptions/listen` streams (protocol.md P20, their
`resourceSubscriptions` P199), and the watchers that 2025-11-25 sessions register (list changes and resource
updates, protocol.md P31)."""

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
MAX_SUBSCRIPTIONS = 1000
MAX_SUBSCRIBED_URI = 2048
"""Resource subscriptions, a session's or a listen stream's, are soft state on the instance that serves them:
bounded (protocol.md P31, P199)."""
Watcher = Callable[[str, dict[str, Any]], None]
"""Called with (method, params) for every change: a list changed, or a resource was updated."""


@dataclass(eq=False)
class Subscription:
    """One open listen stream: the kinds it asked for and its queue of notifications."""

    listen_id: Any
    kinds: frozenset[str]
    honored: dict[str, Any]
    uris: frozenset[str] = frozenset()
    """The resources whose `notifications/resources/updated` this stream asked for (P199)."""
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
        """A resource changed: the listen streams that named it are told, and the sessions watching decide
        whether they subscribed to it."""
        for sub in self._subs:
            if uri in sub.uris:
                sub.queue.put_nowait((RESOURCE_UPDATED, {"uri": uri}))
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
        uris = _subscribed(wanted.get("resourceSubscriptions")) if "resources" in offered else []
        if uris:
            honored["resourceSubscriptions"] = uris
        sub = Subscription(listen_id, frozenset(kinds), honored, frozenset(uris))
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


def _subscribed(given: Any) -> list[str]:
    """A listen request's `resourceSubscriptions`, checked and without repeats (P199)."""
    if given is None:
        return []
    if not isinstance(given, list) or not all(isinstance(uri, str) for uri in given):
        raise invalid_params("Invalid params: notifications.resourceSubscriptions is a list of resource URIs")
    uris = list(dict.fromkeys(given))
    if len(uris) > MAX_SUBSCRIPTIONS or any(len(uri) > MAX_SUBSCRIBED_URI for uri in uris):
        raise invalid_params(
            f"Invalid params: a listen stream may hold {MAX_SUBSCRIPTIONS} resource subscriptions of URIs up to"
            f" {MAX_SUBSCRIBED_URI} characters"
        )
    return uris


def admit_subscription(held: set[str], uri: str) -> None:
    """A session's `resources/subscribe` of `uri` beside the URIs it `held`: -32602 beyond the bounds (P31)."""
    if len(uri) > MAX_SUBSCRIBED_URI or (uri not in held and len(held) >= MAX_SUBSCRIPTIONS):
        raise invalid_params(
            f"Invalid params: a session may hold {MAX_SUBSCRIPTIONS} subscriptions of URIs up to"
            f" {MAX_SUBSCRIBED_URI} characters"
        )
