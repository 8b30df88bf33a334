"""The 2025-11-25 session scenario both legacy client peers run, and the report they print; stdlib only.

Imported from the peer's own folder by `legacy_mcp1_client.py` (mcp==1.30.0) and `legacy_mcp2_client.py`
(mcp==2.3.0, `mode="legacy"`), so the two libraries run exactly the same calls (`play`) and report alike
(`Report`, whose `hooked` taps the SDK's HTTP client).

Usage of either client: `python CLIENT URL` (Streamable HTTP) or `python CLIENT -- COMMAND [ARG ...]`
(stdio: the client starts the server command, with this process's environment). In one session it calls,
in order, the tools of `CALLS` on a server that has `book(city)` (one form: `nights`, `confirm`) and
`echo(text)`, answering each elicitation as the call says. It prints one JSON line, the report:

- `protocol`, `server`: what `initialize` negotiated, and the server's name;
- `calls`: per call its tool, arguments, the answer given, the elicitations seen (their params), the text
  of the result and `is_error`;
- `sent`: every JSON-RPC message the client wrote, in order (a request or notification by its method, a
  response to a server request as `response`), so a test can count the `initialize` requests;
- `http`: over HTTP, each request's method, the JSON-RPC methods in its body, the `Mcp-Session-Id` it
  carried, its status and the `Mcp-Session-Id` its response set;
- `error`: set when the run raised (the traceback goes to stderr).

Exit status: 0 when every call returned, 1 when the run raised, 2 on bad usage. Whether the results are
right is for the test to say.
"""

from __future__ import annotations

import asyncio
import json
import sys
import traceback
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    """One tool call of the scenario, and how to answer its elicitation (None: it should ask nothing)."""

    tool: str
    arguments: dict[str, Any]
    action: str | None = None
    content: dict[str, Any] | None = None


CALLS = [
    Call("book", {"city": "Paris"}, "accept", {"nights": 3, "confirm": True}),
    Call("book", {"city": "Rome"}, "decline"),
    Call("echo", {"text": "hi"}),
    Call("book", {"city": "Oslo"}, "cancel"),
    Call("book", {"city": "Lima"}, "accept", {"nights": 1, "confirm": True}),
]


@dataclass
class Report:
    """What the run saw; `answer(params)` is the elicitation policy, `message`/`on_*` the taps."""

    protocol: str | None = None
    server: str | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)
    sent: list[str] = field(default_factory=list)
    http: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None
    current: Call | None = None

    def begin(self, call: Call) -> None:
        self.current = call
        self.calls.append(
            {"tool": call.tool, "arguments": call.arguments, "action": call.action, "questions": [], "text": None}
        )

    def end(self, text: str, is_error: bool) -> None:
        self.calls[-1].update(text=text, is_error=is_error)

    def answer(self, params: dict[str, Any]) -> tuple[str, dict[str, Any] | None]:
        """Record an elicitation's params; the (action, content) the current call answers it with."""
        if self.calls:
            self.calls[-1]["questions"].append(params)
        call = self.current
        if call is None or call.action is None:
            return "cancel", None
        return call.action, call.content if call.action == "accept" else None

    def message(self, payload: dict[str, Any]) -> None:
        """Tap on the client's outgoing JSON-RPC messages."""
        self.sent.append(payload.get("method") or "response")

    def on_request(self, method: str, session_id: str | None, body: bytes) -> None:
        """HTTP tap: a request as it leaves."""
        try:
            decoded = json.loads(body) if body else None
        except ValueError:
            decoded = None
        items = decoded if isinstance(decoded, list) else [decoded] if isinstance(decoded, dict) else []
        rpc = [item.get("method") or "response" for item in items if isinstance(item, dict)]
        self.http.append({"method": method, "rpc": rpc, "session": session_id, "status": None, "set_session": None})

    def on_response(self, method: str, status: int, session_id: str | None) -> None:
        """HTTP tap: the status and `Mcp-Session-Id` of the latest request with that method not answered yet."""
        for entry in reversed(self.http):
            if entry["method"] == method and entry["status"] is None:
                entry.update(status=status, set_session=session_id)
                return

    def hooked(self, client: Any) -> Any:
        """`client` (the SDK's httpx.AsyncClient) with event hooks that show every request and response to the
        report (`on_request`, `on_response`)."""

        async def on_request(request: Any) -> None:
            body = request.content if request.method == "POST" else b""
            self.on_request(request.method, request.headers.get("mcp-session-id"), body)

        async def on_response(response: Any) -> None:
            self.on_response(response.request.method, response.status_code, response.headers.get("mcp-session-id"))

        client.event_hooks = {"request": [on_request], "response": [on_response]}
        return client

    def dump(self) -> str:
        return json.dumps(
            {
                "protocol": self.protocol,
                "server": self.server,
                "calls": self.calls,
                "sent": self.sent,
                "http": self.http,
                "error": self.error,
            }
        )


class TapWriter:
    """A write stream that shows every message to `record` (as JSON-RPC dicts) before passing it on."""

    def __init__(self, inner: Any, record: Callable[[dict[str, Any]], None]) -> None:
        self._inner = inner
        self._record = record

    async def send(self, item: Any) -> None:
        message = getattr(item, "message", item)
        message = getattr(message, "root", message)
        dump = getattr(message, "model_dump", None)
        if dump is not None:
            self._record(dump(by_alias=True, exclude_none=True, mode="json"))
        await self._inner.send(item)

    async def __aenter__(self) -> TapWriter:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> Any:
        return await self._inner.__aexit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


async def play(report: Report, call_tool: Callable[[str, dict[str, Any]], Awaitable[Any]], is_error: str) -> None:
    """Once `initialize` is in the report: the calls of `CALLS` in order, through the SDK's `call_tool`; each
    result's text and error flag (the attribute `is_error` of the SDK's CallToolResult) go into the report."""
    print(f"initialized: {report.protocol} with {report.server}", file=sys.stderr)
    for call in CALLS:
        report.begin(call)
        result = await call_tool(call.tool, call.arguments)
        report.end("".join(b.text for b in result.content if b.type == "text"), bool(getattr(result, is_error)))


def target() -> str | list[str] | None:
    """The URL, or the server command after `--`, from the command line; None on bad usage."""
    args = sys.argv[1:]
    if len(args) == 1 and args[0].startswith(("http://", "https://")):
        return args[0]
    if len(args) >= 2 and args[0] == "--":
        return args[1:]
    return None


def leaves(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or the exception itself."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


def main(name: str, run: Callable[[str | list[str], Report], Awaitable[None]]) -> int:
    """Parse the command line, run the scenario, print the report; the exit status."""
    where = target()
    if where is None:
        print(f"usage: {name} URL | {name} -- COMMAND [ARG ...]", file=sys.stderr)
        return 2
    report = Report()
    try:
        asyncio.run(run(where, report))
    except Exception as exc:  # the report says what went wrong; the traceback goes to stderr
        report.error = "; ".join(f"{type(leaf).__name__}: {leaf}" for leaf in leaves(exc))
        traceback.print_exc()
    print(report.dump(), flush=True)
    return 1 if report.error else 0
