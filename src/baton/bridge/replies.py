"""The host's answers to the server's questions: what one says (how long one may take: `ASK_TIMEOUT_S`)."""

from __future__ import annotations

from typing import Any

from ..forms import Accepted, Answer, Cancelled, Declined


def reply_of(result: dict[str, Any]) -> Answer[Any]:
    """The host's `ElicitResult` as the reply the `Client` checks and sends on."""
    action = result.get("action")
    if action == "accept":
        return Accepted(result.get("content"))
    if action == "decline":
        return Declined()
    return Cancelled()
