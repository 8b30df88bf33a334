"""The host's answers to the server's questions: how long one may take, and what it says."""

from __future__ import annotations

from typing import Any

from ..forms import Accepted, Answer, Cancelled, Declined

ASK_TIMEOUT_S = 600.0
"""How long a question waits for the host's answer before it reads as cancelled (as `baton serve`'s default)."""


def reply_of(result: dict[str, Any]) -> Answer[Any]:
    """The host's `ElicitResult` as the reply the `Client` checks and sends on."""
    action = result.get("action")
    if action == "accept":
        return Accepted(result.get("content"))
    if action == "decline":
        return Declined()
    return Cancelled()
