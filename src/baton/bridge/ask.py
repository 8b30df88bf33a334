"""The server's questions put to the host (protocol.md P135).

The bridge's `Client` declares both elicitation modes and hands each question to `HostAsker`: to a
2025-11-25 host that declared the question's mode it goes as the host's own `elicitation/create`
request on stdout, with the params the server sent, and the host's answer comes back as the reply
the `Client` checks against the question and sends on (in the next round with the sealed
`requestState`, or as the session's response). A question the host cannot show (it declared no
elicitation, or not the question's mode) is put to the person on the bridge's own page (`LoopbackAskPage`,
protocol.md P160); with `--no-ask` it is declined, silently.
"""

from __future__ import annotations

import logging
from typing import Any

from ..client import Question
from ..forms import Answer, Cancelled, Declined
from ..protocol.capabilities import ClientCapabilities, granted
from ..server.outbound import Outbound, PeerError, Stream, Write
from . import ASK_TIMEOUT_S
from .held import CURRENT
from .page import LoopbackAskPage
from .replies import reply_of

log = logging.getLogger("baton.bridge")


class HostAsker:
    """Answers the server's questions through the host: the bridge's `on_form` and `on_url` handler."""

    def __init__(self, write: Write, outbound: Outbound, page: LoopbackAskPage | None) -> None:
        self.write = write
        self.outbound = outbound
        self.page = page
        """Where a question the host cannot show is asked; None (`--no-ask`): it is declined."""
        self.host: ClientCapabilities | None = None
        """The capabilities of the 2025-11-25 host's `initialize`; None before it, and for a 2026 host."""

    async def __call__(self, question: Question) -> Answer[Any]:
        held = CURRENT.get()
        if held is not None and granted(held.host, question.mode):  # a 2026 host: the next round (P135)
            return await held.ask(question)
        if held is None and self.host is not None and granted(self.host, question.mode):
            params = {k: v for k, v in question.params.items() if k != "_meta"}
            try:
                result = await Stream(self.write, self.outbound).request("elicitation/create", params, ASK_TIMEOUT_S)
            except TimeoutError:
                log.warning("the host did not answer question %r in %g s: cancelled", question.key, ASK_TIMEOUT_S)
                return Cancelled()
            except PeerError as exc:
                log.warning("the host refused question %r: %s", question.key, exc.message or "no answer")
                return Cancelled()
            return reply_of(result)
        if self.page is not None:  # P160: the person answers on the bridge's page
            return await self.page.ask(question)
        return Declined()
