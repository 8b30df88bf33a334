"""Peer server written with FastMCP (fastmcp==4.1.6, which pulls mcp 2.3.0), for bench/compare and the interop tests.

The tool ``perform(action)`` asks the user for one boolean confirmation and returns ``done: <action>``.
FastMCP 4.1.6 asks on MCP 2026-07-28 through its documented "guard pattern": the tool runs from the
top on every round, returns an ``InputRequiredResult`` while ``ctx.input_responses`` lacks the answer,
and reads the answer on the retry. FastMCP seals the ``requestState`` the tool returns and checks it
on the way back in. Served with ``mcp.run(transport="http")``: stateless, at ``/mcp`` on 127.0.0.1 only,
in FastMCP's default SSE response mode (``--json`` for JSON responses, as the benchmark asks for).

Run it in its own venv, never in Baton's: ``python -m venv V && V/bin/pip install fastmcp==4.1.6``
(bench/compare uses ``.cache/bench/fastmcp``, the interop tests ``.cache/interop/fastmcp``).
"""

from __future__ import annotations

import argparse

from fastmcp import Context, FastMCP
from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult

QUESTION_KEY = "confirm"
CONFIRM_FORM = {
    "type": "object",
    "properties": {"confirm": {"type": "boolean", "description": "Go ahead with the action?"}},
    "required": ["confirm"],
}

# The name may be sealed into every requestState: keep its length, or the bench's sizes move.
mcp = FastMCP("baton-peers-fastmcp")


def ask(action: str) -> InputRequiredResult:
    """The question, with a requestState that marks this action as asked."""
    form = ElicitRequestFormParams(message=f"Go ahead with {action}?", requested_schema=CONFIRM_FORM)
    return InputRequiredResult(
        input_requests={QUESTION_KEY: ElicitRequest(method="elicitation/create", params=form)},
        request_state=f"asked:{action}",
    )


@mcp.tool
async def perform(action: str, ctx: Context) -> str | InputRequiredResult:
    """Perform an action once the user has confirmed it."""
    responses = ctx.input_responses
    answer = responses.get(QUESTION_KEY) if responses else None
    # Trust an answer only when our own (sealed) state says this very action was asked.
    if not isinstance(answer, ElicitResult) or ctx.request_state != f"asked:{action}":
        return ask(action)
    if answer.action == "accept" and (answer.content or {}).get("confirm") is True:
        return f"done: {action}"
    return f"not confirmed: {action}"


def main() -> None:
    parser = argparse.ArgumentParser(description="fastmcp 4.1.6 peer server (127.0.0.1, path /mcp).")
    parser.add_argument("--port", type=int, default=8775, help="TCP port on 127.0.0.1 (default 8775)")
    parser.add_argument("--json", action="store_true", help="JSON responses instead of FastMCP's default SSE")
    opts = parser.parse_args()
    mcp.run(
        transport="http",
        host="127.0.0.1",
        port=opts.port,
        json_response=True if opts.json else None,  # None: FastMCP's own default (its settings)
        stateless_http=True,
        show_banner=False,
        log_level="WARNING",
    )


if __name__ == "__main__":
    main()
