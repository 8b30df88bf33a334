"""The app rung of the ask ladder (protocol.md P213-P215): a question the client cannot show, shown as
Baton's ask app in a host that renders MCP Apps.

A tool declared `when_unasked="app"` carries the ask app (`ASK_APP`, a `ui://` page) as its own app, so a
host that renders apps shows it with every result of the tool. When a form question stops the call, the
result's text tells the model that the user answers in the form shown with it, and its `_meta` (which
hosts give the app, not the model) carries the question: the server-rendered form, the app's single-use
ticket, the tool and the app-only answer tool. The app sends the answer as a `tools/call` of
`ANSWER_TOOL` (visibility `["app"]`) through the host, then calls the tool again with the same arguments,
which goes on from the parked flow as after the server's page (`baton.connect.parked`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

from .apps import App
from .context import Context
from .ladder import answer_in_app, answer_on_page
from .parts import Link
from .results import ToolError, tool_result

ASK_META: Final = "baton/ask"
"""The key of a waiting result's `_meta` that holds the question for the ask app."""
ANSWER_TOOL: Final = "baton_ask_answer"
"""The app-only tool the ask app sends its answer to."""
ASK_APP: Final = App(
    "ui://baton/ask.html",
    path=Path(__file__).with_name("static") / "ask_app.html",
    name="baton-ask",
    title="A question from the tool",
    description="Baton's ask app: a question the host cannot show, as a form shown with the tool's result.",
    prefers_border=True,
)
ACTIONS: Final = ("accept", "decline", "cancel")
ANSWER_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "ticket": {"type": "string", "description": "The ticket of the question, from the waiting result."},
        "action": {"type": "string", "enum": list(ACTIONS)},
        "fields": {
            "type": "object",
            "description": "The form's fields as the browser sent them: each name with its values.",
            "additionalProperties": {"type": "array", "items": {"type": "string"}},
        },
    },
    "required": ["ticket", "action"],
}


def waiting_result(tool: str, link: Link, *, again: bool = False) -> dict[str, Any]:
    """The result of a call that stopped on a question: the page's link (P145) or, shown in the ask app,
    the text for the model and the question in `_meta` for the app (P213)."""
    if link.ask is None:
        return tool_result(answer_on_page(tool, link.url, link.message, again=again))
    result = tool_result(answer_in_app(tool, link.message, again=again))
    result["_meta"] = {ASK_META: {**link.ask, "tool": tool, "answerTool": ANSWER_TOOL}}
    return result


async def answer_question(ctx: Context, ticket: str, action: str, fields: dict[str, list[str]] | None = None) -> str:
    """Record the user's answer to a question shown in Baton's ask app (called by the app, not the model)."""
    part = ctx.connect_part
    if part is None or action not in ACTIONS:
        raise ToolError("This server has no question waiting for that answer.")
    return await part.answer(ctx.principal, ticket, action, fields or {})
