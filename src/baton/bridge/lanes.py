"""A 2025-11-25 stdio server's calls that may ask, one to a process (protocol.md P200).

Stdio does not say which call an `elicitation/create` belongs to. So `baton bridge --serve-http` never runs
two calls that may ask (`tools/call`, `resources/read`, `prompts/get`) on one process of such a server at
once: each runs on a `Lane`, a process with no other such call in flight, and a question that comes on a
lane belongs to the one call running there. The first lane is the child's own process; more are started
only while calls overlap, at most `MAX_SPARES`, and one left idle for `IDLE_S` is stopped.
"""

from __future__ import annotations

import logging
from typing import Any

from ..client import Client, Question
from ..client.stdio_transport import StdioTransport
from ..forms import Answer, Declined
from ..protocol.capabilities import granted
from .held import Held

log = logging.getLogger("baton.bridge")
MAX_SPARES = 8
"""Processes started besides the child's own for calls that overlap; a call beyond them is refused."""
IDLE_S = 60.0
"""How long an extra process waits for another call before it is stopped."""


class Lane:
    """One process of the stdio server, and the one call that may ask running there (None: free)."""

    def __init__(self) -> None:
        self.client: Client | None = None
        self.held: Held | None = None
        self.retiring: Any = None  # the timer that stops an idle extra process

    def free(self) -> bool:
        """Whether no call that may ask runs here, and the process may still answer."""
        if self.held is not None or self.client is None:
            return False
        transport = self.client.transport
        proc = transport.proc if isinstance(transport, StdioTransport) else None
        return proc is None or (proc.returncode is None and not (proc.stdout is not None and proc.stdout.at_eof()))

    async def ask(self, question: Question) -> Answer[Any]:
        """The server's question, to the client of the call running on this process (P200)."""
        held = self.held
        if held is None or held.task.done() or not granted(held.host, question.mode):
            log.warning(
                "no HTTP client can answer the server's question %r (%s mode): declined", question.key, question.mode
            )
            return Declined()
        return await held.ask(question)
