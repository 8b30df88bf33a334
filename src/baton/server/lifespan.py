"""`Server(lifespan=...)`: what a server opens once per process before serving and closes at shutdown.

The author gives an async context manager factory, as FastMCP and `contextlib.asynccontextmanager` spell it:
`lifespan(server)` (or `lifespan()`), entered by the transport before the first request (HTTP: the ASGI
lifespan startup; stdio: before reading stdin; the testing kit: at the client's first request) and exited
when the transport shuts down (`Runtime.aclose`). What it yields is `ctx.lifespan` in every handler.
Entering counts its users, so two in-memory clients of one server share one run (protocol.md P132).
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Callable
from contextlib import AbstractAsyncContextManager
from typing import Any

from ..protocol.errors import UsageError

log = logging.getLogger("baton.server")
LifespanFactory = Callable[..., AbstractAsyncContextManager[Any]]


class LifespanFailed(Exception):
    """The lifespan raised while entering: the message is one line naming the server and the exception."""


class Lifespan:
    """One server's lifespan: entered once while any transport serves, its yielded value kept."""

    def __init__(self, factory: LifespanFactory, server: Any) -> None:
        if not callable(factory):
            raise TypeError(f"Server(lifespan=...) takes an async context manager factory, not {factory!r}")
        self._factory = factory
        self._server = server
        self._manager: AbstractAsyncContextManager[Any] | None = None
        self._value: Any = None
        self._users = 0
        self._lock = asyncio.Lock()

    def value(self) -> Any:
        """What the context manager yielded; `UsageError` outside a run."""
        if self._manager is None:
            raise UsageError(
                "ctx.lifespan: the server's lifespan is not running; serve the server (baton serve, server.asgi() "
                "with its ASGI lifespan events, serve_stdio, the testing kit), which enters it"
            )
        return self._value

    async def enter(self) -> None:
        """Enter the lifespan unless it runs already (one more user); `LifespanFailed` if it raises."""
        async with self._lock:
            self._users += 1
            if self._manager is not None:
                return
            try:
                takes_server = bool(inspect.signature(self._factory).parameters)
            except (TypeError, ValueError):
                takes_server = True
            try:
                manager = self._factory(self._server) if takes_server else self._factory()
            except Exception as exc:
                raise self._failed(f"raised {_shown(exc)}", exc) from None
            if not hasattr(manager, "__aenter__"):
                if hasattr(manager, "aclose"):
                    await manager.aclose()  # an async generator function, never started
                kind = type(manager).__name__
                raise self._failed(
                    f"gave {kind}, not an async context manager; decorate it with @contextlib.asynccontextmanager"
                )
            try:
                self._value = await manager.__aenter__()
            except Exception as exc:
                raise self._failed(f"raised {_shown(exc)}", exc) from None
            self._manager = manager

    def _failed(self, what: str, exc: Exception | None = None) -> LifespanFailed:
        """The one line that refuses to serve; the traceback only at debug level (`--log-level debug`)."""
        self._users -= 1
        if exc is not None:
            log.debug("the lifespan's traceback", exc_info=exc)
        return LifespanFailed(f"cannot start {getattr(self._server, 'name', '?')!r}: its lifespan {what}")

    async def exit(self, *, every: bool = False) -> None:
        """One user fewer (`every`: all of them); the last one exits the context manager."""
        async with self._lock:
            self._users = 0 if every else max(self._users - 1, 0)
            manager = self._manager
            if manager is None or self._users:
                return
            self._manager, self._value = None, None
            try:
                await manager.__aexit__(None, None, None)
            except Exception as exc:  # shutdown goes on: the rest of the server still closes
                name = getattr(self._server, "name", "?")
                log.error("the lifespan of %r raised at shutdown: %s", name, _shown(exc))
                log.debug("the lifespan's traceback", exc_info=exc)


def _shown(exc: BaseException) -> str:
    """An exception as one line: its type, and the first line of its message."""
    detail = str(exc).splitlines()[0] if str(exc) else ""
    return f"{type(exc).__name__}: {detail}" if detail else type(exc).__name__
