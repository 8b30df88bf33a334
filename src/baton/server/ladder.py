"""The ask ladder (protocol.md P138): per request and per ask, which way a question reaches a person.

A tool's code is the same on every rung (`await ctx.confirm(...)`); what changes is the delivery:

1. `native`: the client declared what the ask needs (the one rule is `allows` in
   `baton.protocol.capabilities`, after the opt-in host quirks of P140 narrowed the declaration);
2. what the author declared for the tool, or for the server, when the client cannot show the question
   (`when_unasked`): `"error"` (the default: -32021 on 2026-07-28, a tool error in a 2025-11-25
   session); `"page"` (P145): the server's own page, where the call ends with a plain result that
   gives the model a link for the user, and the next identical call goes on with what was answered
   there (`baton.connect.parked`); or `"argument"` for yes/no questions (P139): the tool takes an
   optional boolean `confirm` argument, and a call without it is answered with a plain result asking
   the model to ask the user and call again with `confirm=true`; or `"app"` (P213): in a host that
   renders MCP Apps, a form question is shown as Baton's ask app with the call's result, and answered
   there; anywhere else, and for a URL question, the page.

`Context._ask` asks `rung()` for every ask; the replay engine narrows a request's declared capabilities
with `seen()` before the handler runs.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from ..protocol.capabilities import ClientCapabilities, allows

WhenUnasked = Literal["error", "page", "argument", "app"]
"""What a tool does with a question the client cannot show (`@server.tool(when_unasked=...)`)."""
Rung = Literal["native", "app", "page", "argument", "error"]
"""How one ask is delivered this request."""

WHEN_UNASKED: Final = get_args(WhenUnasked)
CONFIRM_ARGUMENT: Final = "confirm"
CONFIRM_SCHEMA: Final[dict[str, Any]] = {
    "type": "boolean",
    "description": (
        "Set to true only after the user has said yes to this tool's question, in their own words: the tool "
        "asks them directly where the client can show a question, and otherwise answers with the question "
        "to put to them."
    ),
}


def check_when_unasked(value: object, where: str) -> WhenUnasked:
    """`value` if it is one of `WHEN_UNASKED`, else a `ValueError` naming `where` and the choices."""
    if value not in WHEN_UNASKED:
        raise ValueError(f"{where}: when_unasked is one of {', '.join(map(repr, WHEN_UNASKED))}, not {value!r}")
    return value  # type: ignore[return-value]


def rung(
    caps: ClientCapabilities, request: dict[str, Any], when_unasked: str, yes_no: bool, apps: bool = False
) -> Rung:
    """The rung that delivers one ask: native where the (narrowed) declaration allows it, else what the
    author declared: for `"app"`, the ask app for a form question where the client renders apps (`apps`,
    P213), else the page, as for `"page"`, for an elicitation (form or URL); the argument only for a yes/no
    question (any other ask falls back to the error)."""
    if allows(caps, request):
        return "native"
    if when_unasked in ("page", "app") and request["method"] == "elicitation/create":
        # P214: a URL question never goes into the app (its page is the connect page, for a browser).
        form = (request.get("params") or {}).get("mode", "form") == "form"
        return "app" if when_unasked == "app" and apps and form else "page"
    if when_unasked == "argument" and yes_no:
        return "argument"
    return "error"


def with_confirm_argument(tool: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A tool's input schema with the optional `confirm` argument of the argument rung added (P139)."""
    properties = schema.get("properties") or {}
    if CONFIRM_ARGUMENT in properties:
        raise ValueError(
            f"tool {tool!r}: when_unasked='argument' adds an argument named {CONFIRM_ARGUMENT!r}, and the tool "
            "already has one: rename the tool's own argument"
        )
    return {**schema, "properties": {**properties, CONFIRM_ARGUMENT: CONFIRM_SCHEMA}}


def handler_arguments(when_unasked: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments a handler is given: without the argument rung's `confirm`, which its Context reads (P139);
    a tool of another rung keeps an argument of that name as its own."""
    if when_unasked != "argument" or CONFIRM_ARGUMENT not in arguments:
        return arguments
    return {k: v for k, v in arguments.items() if k != CONFIRM_ARGUMENT}


def ask_then_call_again(tool: str, question: str) -> str:
    """The result text of the argument rung when `confirm` is absent: what a model relays to the user."""
    return (
        f"Tool {tool} did not run: it needs the user's confirmation, and this client cannot show the question. "
        f"Ask the user: {question}\nOnly if they answer yes, call {tool} again with the same arguments and "
        f"{CONFIRM_ARGUMENT}=true."
    )


def answer_on_page(tool: str, url: str, question: str, *, again: bool = False) -> str:
    """The result text of the page rung (P145): what a model relays to the user, with the link. The link
    carries only an opaque ticket; the question is the server's own text, never an answer."""
    head = "The user has not answered yet. " if again else ""
    return (
        f'{head}Tool {tool} is waiting for the user: it asks "{question}", and this client cannot show the '
        f"question. Give the user this link to answer on the server's page (it works only for them):\n{url}\n"
        f"When they say they have answered, call {tool} again with exactly the same arguments; it goes on "
        "from where it stopped."
    )


def answer_in_app(tool: str, question: str, *, again: bool = False) -> str:
    """The result text of the app rung (P213): what the model reads while the person answers in the ask app
    shown with this result. No link and no ticket: the app's form is the only way in from this result."""
    head = "The user has not answered yet. " if again else ""
    return (
        f'{head}Tool {tool} is waiting for the user: it asks "{question}", and this client cannot show the '
        "question, so the form shown with this result asks it. When the user sends it, the form runs "
        f"{tool} again itself and its result is added here. If the user says they answered and no result came, "
        f"call {tool} again with exactly the same arguments; it goes on from where it stopped."
    )


# -- host quirks (P140) ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostQuirk:
    """One row of the host quirks table: a host, by its `clientInfo.name` (case-insensitive), in versions
    before `below` (every version when None), shows only the elicitation modes in `shows`, whatever it
    declares. `source` says where that is reported."""

    name: str
    shows: tuple[str, ...]
    source: str
    below: str | None = None

    def matches(self, name: str, version: str) -> bool:
        if name.casefold() != self.name.casefold():
            return False
        if self.below is None:
            return True
        have, limit = _version(version), _version(self.below)
        return have is not None and limit is not None and have < limit


HOST_QUIRKS: Final[tuple[HostQuirk, ...]] = (
    # Claude Desktop and claude.ai: no elicitation; Cowork negotiates 2026-07-28, then drops the question
    # and the call hangs 180 s.
    HostQuirk("claude-ai", (), "anthropics/claude-ai-mcp#153, #1046"),
    # Claude Code renders forms since 2.1.76; URL mode never (it declares `elicitation: {}`).
    HostQuirk("claude-code", (), "Claude Code CHANGELOG 2.1.76", below="2.1.76"),
    HostQuirk("claude-code", ("form",), "anthropics/claude-code#88075, #69555"),
)
"""The built-in rows, used by `Server(host_quirks=True)`; the first row that matches a client wins."""


def quirk_table(setting: bool | Sequence[HostQuirk]) -> tuple[HostQuirk, ...]:
    """The rows `Server(host_quirks=...)` turns on: none (False, the default), the built-in ones (True), or
    the server's own (a sequence: put your rows before `*HOST_QUIRKS` to override built-in ones)."""
    if setting is True:
        return HOST_QUIRKS
    if setting is False:
        return ()
    rows = tuple(setting)
    if not all(isinstance(row, HostQuirk) for row in rows):
        raise TypeError("host_quirks is True, False or a sequence of baton.HostQuirk rows")
    return rows


def seen(caps: ClientCapabilities, client_info: Any, table: tuple[HostQuirk, ...]) -> ClientCapabilities:
    """What the client really shows: its declared capabilities, narrowed by the first matching quirk row."""
    if not table or not isinstance(client_info, dict):
        return caps
    name, version = client_info.get("name"), client_info.get("version")
    if not isinstance(name, str):
        return caps
    for row in table:
        if row.matches(name, version if isinstance(version, str) else ""):
            shows = row.shows
            return dataclasses.replace(caps, form=caps.form and "form" in shows, url=caps.url and "url" in shows)
    return caps


_NUMBERS = re.compile(r"\d+")


def _version(text: str) -> tuple[int, ...] | None:
    """A version's leading numbers ("2.1.76-beta" -> (2, 1, 76)); None without any."""
    head = text.split("-", 1)[0].split("+", 1)[0]
    numbers = tuple(int(n) for n in _NUMBERS.findall(head)[:4])
    return numbers or None
