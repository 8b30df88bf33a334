"""The server's own page for a question the client cannot show (protocol.md P145-P146): `/connect/<ticket>`
of a ticket minted by the page rung (`parked.py`).

The connect pages have already checked the browser's session (its principal is the ticket's) and that
the ticket is live and unused. Here the parked question is read from the ledger (its record is found by
the ticket's flow id, for the session's principal only), rendered with `baton.render.html`, with
Decline and Cancel; a POST checks the CSRF token, validates the answer against the question's schema,
spends the ticket (once, atomically) and records the answer for the next identical call. Nothing the
user submits is logged.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..forms.fields import FormError, FormSpec, InvalidAnswer
from ..forms.parse import parse_schema
from ..render.html import form_html, form_values
from .cookie import Session
from .page_http import PageResponse, Request, esc, page
from .parked import give_answer
from .tickets import Ticket

if TYPE_CHECKING:
    from .kit import ConnectKit

log = logging.getLogger("baton.connect")
CSRF_FIELD = "__baton_csrf"
ACTION_FIELD = "__baton_action"
ACTIONS = ("accept", "decline", "cancel")
_DONE = {
    "accept": "Your answer was recorded.",
    "decline": "You declined.",
    "cancel": "You cancelled.",
}
_USED = "<p>This question has already been answered; ask your assistant to call the tool again.</p>"


class AskPage:
    """The GET and POST of a page-rung ticket, for one connect kit."""

    def __init__(self, kit: ConnectKit) -> None:
        self.kit = kit

    async def handle(self, request: Request, session: Session, ticket: Ticket) -> PageResponse:
        link = await self.kit.records.read(ticket.flow_id, session.principal)
        if link is None or link.get("t") != ticket.id:
            body = "<p>This question is no longer waiting; ask your assistant to call the tool again.</p>"
            return page("Link not valid", body, status=404)
        spec = question_form(link)
        if spec is None:
            return page("Cannot show this question", "<p>The question cannot be shown here.</p>", status=500)
        if request.method == "GET":
            return self._form(session, ticket, link, spec)
        if not self.kit.sessions.check_csrf(session, ticket.id, request.form.get(CSRF_FIELD, "")):
            log.warning("ask page: a form failed the CSRF check")
            return page("Refused", "<p>This form has expired or was not sent from this page.</p>", status=403)
        action = request.form.get(ACTION_FIELD, "")
        if action not in ACTIONS:
            return self._form(session, ticket, link, spec, "Choose Send, Decline or Cancel.")
        try:
            recorded = await record_answer(self.kit, session.principal, ticket, link, spec, action, request.fields)
        except InvalidAnswer as exc:
            return self._form(session, ticket, link, spec, str(exc))
        if not recorded:
            return page("Link already used", _USED, status=410)
        log.info("ask page: a question was answered (%s)", action)
        body = (
            f"<p role='status'>{esc(_DONE[action])} You can close this window. Tell your assistant you have "
            "answered: it calls the tool again and goes on from there.</p>"
        )
        return page("Answered", body)

    def _form(
        self, session: Session, ticket: Ticket, link: dict[str, Any], spec: FormSpec, problem: str = ""
    ) -> PageResponse:
        message = str(link.get("m", ""))
        csrf = self.kit.sessions.csrf(session, ticket.id)
        note = f"<p role='alert'>{esc(problem)}</p>" if problem else ""
        hidden = f"<input type='hidden' name='{CSRF_FIELD}' value='{esc(csrf)}'>"
        form = form_html(
            spec,
            prefix="ask",
            label=message,
            extra=hidden,
            post_to=f"/connect/{ticket.id}",
            button_name=ACTION_FIELD,
        )
        body = (
            f"{note}<p>Signed in as <b>{esc(session.principal)}</b>. A tool your assistant called asks:</p>"
            f"<p class='question'><b>{esc(message)}</b></p>{form}"
            "<p><small>Your answer goes to the tool on this server, not through your assistant.</small></p>"
        )
        return page("Your assistant's tool asks", body, status=400 if problem else 200)


def question_form(link: dict[str, Any]) -> FormSpec | None:
    """The form of a parked question, or None (logged) if it is not one a page can show."""
    try:
        return parse_schema(link["r"]["params"]["requestedSchema"])
    except (FormError, KeyError, TypeError):
        log.error("ask page: a parked question is not a form this page can show")
        return None


async def record_answer(
    kit: ConnectKit,
    principal: str,
    ticket: Ticket,
    link: dict[str, Any],
    spec: FormSpec,
    action: str,
    fields: Mapping[str, Sequence[str]],
) -> bool:
    """Check an answer to a parked question against its form (`InvalidAnswer`), spend its ticket and record
    it for the next identical call: the one way in, from the page and from the ask app (P215). False when the
    ticket or the question was answered already."""
    answer: dict[str, Any] = {"action": action}
    if action == "accept":
        answer["content"] = spec.validate(form_values(spec, fields))
    if not await kit.tickets.complete(ticket.id, principal):
        return False
    return await give_answer(kit.records, principal, link, answer)
