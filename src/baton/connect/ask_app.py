"""The ask app's answers (protocol.md P215): what Baton's ask app sends through the host, as a call of the
app-only tool `baton_ask_answer`, for a question parked for it (`parked.py`).

The call is the host's, made with the person's own MCP credentials, so the caller's principal must be the
ticket's; the ticket must be an app ticket (`APP_PURPOSE`: the page's link, which a model may read, never
answers here) and the parked question's own. The answer is then checked and recorded exactly as the
server's page does (`ask_page.record_answer`). Every refusal says the same words, naming no one. Nothing
the person answered is logged or echoed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from ..forms.fields import InvalidAnswer
from ..server.results import ToolError
from .ask_page import question_form, record_answer
from .parked import APP_PURPOSE
from .tickets import well_formed

if TYPE_CHECKING:
    from .kit import ConnectKit

log = logging.getLogger("baton.connect")
GONE = "This question is no longer waiting: ask your assistant to call the tool again."
USED = "This question has already been answered."
DONE = {
    "accept": "Your answer was recorded.",
    "decline": "You declined.",
    "cancel": "You cancelled.",
}


async def answer_from_app(
    kit: ConnectKit, principal: str, ticket_id: str, action: str, fields: Mapping[str, Sequence[str]]
) -> str:
    """Record the ask app's answer; the sentence the app shows. `ToolError` when it cannot be recorded."""
    ticket = await kit.tickets.get(ticket_id) if well_formed(ticket_id) else None
    if ticket is None or ticket.purpose != APP_PURPOSE or ticket.principal != principal or action not in DONE:
        log.info("ask app: an answer for no question waiting for this caller")
        raise ToolError(GONE)
    if ticket.done:
        raise ToolError(USED)
    link = await kit.records.read(ticket.flow_id, principal)
    spec = None if link is None or link.get("x") != ticket.id else question_form(link)
    if link is None or spec is None:
        raise ToolError(GONE)
    clean = {str(k): [v for v in vs if isinstance(v, str)] for k, vs in fields.items() if isinstance(vs, list)}
    try:
        recorded = await record_answer(kit, principal, ticket, link, spec, action, clean)
    except InvalidAnswer as exc:
        raise ToolError(f"{exc}. Please answer again.") from None
    if not recorded:
        raise ToolError(USED)
    log.info("ask app: a question was answered (%s)", action)
    return DONE[action]
