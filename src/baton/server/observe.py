"""Telemetry for a server, switched on once per server, when serving starts (protocol.md P60).

`instrument(server)` runs in `Server.check_startup`: when a tracer or meter provider is configured (and only
then is OpenTelemetry imported, by `baton.server.tracing`), the server's entry points are wrapped and
the replay engine and single use are given an observer. Otherwise nothing changes: a request pays no
check on the dispatch path, and a flow's round one `None` check in the replay engine.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..telemetry.switch import configured

if TYPE_CHECKING:
    from ..state.seal import FlowState
    from .context import Ask
    from .core import Server


class RoundObserver(Protocol):
    """What the replay engine tells telemetry of a round (`baton.server.tracing.ServerObserver`)."""

    def round(self, method: str, params: dict[str, Any], state: FlowState, arguments: dict[str, Any]) -> None:
        """A round's state is open (or fresh): before any user code runs."""

    def played(self, asks: dict[str, Ask], state: FlowState) -> None:
        """The handler ran: its unanswered asks; the state is about to be sealed if there are any."""

    def single_use(self, outcome: str) -> None:
        """What the single-use ledger did with this round's token."""

    async def asking(
        self,
        key: str,
        request: dict[str, Any],
        send: Callable[[dict[str, Any] | None], Awaitable[dict[str, Any]]],
    ) -> dict[str, Any]:
        """A 2025-11-25 request's ask (`request`: its method and params), sent to the client by `send(params)`."""
        ...


def instrument(server: Server) -> bool:
    """Trace `server` when this process has configured OpenTelemetry; whether it is traced. Idempotent."""
    runtime = server.runtime
    if "handle" in vars(runtime):
        return True
    if not configured():
        return False
    from .tracing import ServerObserver  # noqa: PLC0415 (OpenTelemetry, the optional otel extra, only when configured)

    observer = ServerObserver(server)
    # Instance attributes shadow the three entry points: an untraced runtime keeps its methods untouched.
    vars(runtime).update(
        handle=observer.wrap(runtime.handle),
        handle_handshake=observer.wrap_handshake(runtime.handle_handshake),
        initialize=observer.wrap_initialize(runtime.initialize),
    )
    runtime.engine.observer = observer
    runtime.single_use.observe = observer.single_use
    return True
