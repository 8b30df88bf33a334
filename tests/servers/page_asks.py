"""A server whose tools take the page rung (protocol.md P145), for tests; principal from `Bearer <name>`.

`choose` asks a one-answer form and says which answer reached it (accepted, declined, cancelled), so a test
sees decline and cancel on the page arrive as such. The public URL comes from `$BATON_TEST_PUBLIC_URL`; a
page link lives `$BATON_TEST_PAGE_TTL_S` seconds (an hour by default); the stores and the ledger are what
`$BATON_CONNECT_STORE` and `$BATON_LEDGER` say.
"""

from __future__ import annotations

import os

from baton import Accepted, Context, RequestInfo, Server
from baton.connect import ConnectKit


def principal(info: RequestInfo) -> str | None:
    # Test stand-in for token verification: the bearer value names the caller.
    auth = (info.headers.get("authorization") if info.headers is not None else None) or ""
    return auth.removeprefix("Bearer ").strip() or None


server = Server(
    "page-asks",
    principal=principal,
    public_url=os.environ["BATON_TEST_PUBLIC_URL"],
    connect=ConnectKit(page_ttl_s=float(os.environ.get("BATON_TEST_PAGE_TTL_S", "3600"))),
    when_unasked="page",
)


@server.tool()
async def choose(ctx: Context, topic: str) -> str:
    """Asks for a colour and says what came back."""
    answer = await ctx.elicit(["red", "green"], f"Which colour for {topic}?")
    said = f" {answer.data}" if isinstance(answer, Accepted) else ""
    return f"{type(answer).__name__}{said} for {topic}, asked by {ctx.principal}"
