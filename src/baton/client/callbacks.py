"""The callback types the client's transports and sessions share: one place, so each name means one thing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

Notify = Callable[[dict[str, Any]], Awaitable[None]]  # a notification (or a message seen) for whoever waits on it
RawHandler = Callable[[dict[str, Any]], Awaitable[dict[str, Any]]]  # a server request's params in, its result out
