"""A scriptable raw MCP server for client tests: records every request and answers from a per-test script.

Over HTTP (`MockMcp`, a uvicorn ASGI app on a loopback port in a background thread) each JSON-RPC
method has a queue of answers; the last one repeats. An answer is a result dict, an `Err`, an `Sse`
stream, a `Raw` HTTP reply, a `Delay` around another answer, or a callable taking the `Seen` request
and returning any of these (sync or async). Nothing is validated, so misbehaving servers are easy.

Over stdio (`python mock_mcp.py --stdio SCRIPT.json`) it answers each method with the result that
SCRIPT.json maps it to (or -32601), one JSON message per line.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import uvicorn

META_VERSION = "io.modelcontextprotocol/protocolVersion"


@dataclass
class Seen:
    """One request as the mock received it: lowercase header names, raw body, parsed body, arrival time."""

    headers: dict[str, str]
    raw: bytes
    body: dict[str, Any]
    at: float

    @property
    def method(self) -> str:
        return str(self.body.get("method"))

    @property
    def id(self) -> Any:
        return self.body.get("id")

    @property
    def params(self) -> dict[str, Any]:
        params = self.body.get("params")
        return params if isinstance(params, dict) else {}

    @property
    def meta(self) -> dict[str, Any]:
        meta = self.params.get("_meta")
        return meta if isinstance(meta, dict) else {}

    @property
    def args(self) -> dict[str, Any]:
        """`params.arguments` (tools/call, prompts/get)."""
        args = self.params.get("arguments")
        return args if isinstance(args, dict) else {}


@dataclass
class Err:
    """A JSON-RPC error response with the request's id."""

    code: int
    message: str = "error"
    data: Any = None
    status: int = 400


@dataclass
class Sse:
    """A `text/event-stream` answer: each item is a message (dict, sent as one event) or raw text."""

    items: list[dict[str, Any] | str]
    final: Any = None  # a result dict (or Err) sent last, with the request's id; None: no final response


@dataclass
class Raw:
    status: int
    body: bytes = b""
    content_type: str = "application/json"


@dataclass
class Delay:
    seconds: float
    then: Any


Answer = Any  # dict | Err | Sse | Raw | Delay | Callable[[Seen], Answer | Awaitable[Answer]]


def response(rid: Any, answer: dict[str, Any] | Err) -> dict[str, Any]:
    if isinstance(answer, Err):
        error: dict[str, Any] = {"code": answer.code, "message": answer.message}
        if answer.data is not None:
            error["data"] = answer.data
        return {"jsonrpc": "2.0", "id": rid, "error": error}
    return {"jsonrpc": "2.0", "id": rid, "result": answer}


@dataclass
class MockMcp:
    """The HTTP mock: `on(method, *answers)` scripts it, `seen` records every request in arrival order."""

    seen: list[Seen] = field(default_factory=list)
    routes: dict[str, list[Answer]] = field(default_factory=dict)
    url: str = ""
    _server: uvicorn.Server | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def on(self, method: str, *answers: Answer) -> None:
        self.routes[method] = list(answers)

    def requests(self, method: str | None = None) -> list[Seen]:
        with self._lock:
            return [s for s in self.seen if method is None or s.method == method]

    def _next(self, method: str) -> Answer:
        with self._lock:
            queue = self.routes.get(method)
            if not queue:
                return Err(-32601, f"Method not found: {method}", status=404)
            return queue.pop(0) if len(queue) > 1 else queue[0]

    async def __call__(self, scope: dict[str, Any], receive: Callable[..., Any], send: Callable[..., Any]) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            event = await receive()
            raw += event.get("body", b"")
            if not event.get("more_body"):
                break
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        try:
            body = json.loads(raw)
        except ValueError:
            body = {}
        seen = Seen(headers, raw, body if isinstance(body, dict) else {}, time.monotonic())
        with self._lock:
            self.seen.append(seen)
        answer = self._next(seen.method)
        while True:
            if isinstance(answer, Delay):
                await asyncio.sleep(answer.seconds)
                answer = answer.then
            elif callable(answer):
                answer = answer(seen)
                if inspect.isawaitable(answer):
                    answer = await answer
            else:
                break
        await self._send(send, seen, answer)

    async def _send(self, send: Callable[..., Any], seen: Seen, answer: Answer) -> None:
        if isinstance(answer, Raw):
            status, ctype, payload = answer.status, answer.content_type, answer.body
        elif isinstance(answer, Sse):
            status, ctype = 200, "text/event-stream"
            chunks = [item if isinstance(item, str) else f"data: {json.dumps(item)}\n\n" for item in answer.items]
            if answer.final is not None:
                chunks.append(f"data: {json.dumps(response(seen.id, answer.final))}\n\n")
            payload = "".join(chunks).encode()
        elif isinstance(answer, Err):
            status, ctype, payload = answer.status, "application/json", json.dumps(response(seen.id, answer)).encode()
        else:
            status, ctype, payload = 200, "application/json", json.dumps(response(seen.id, answer)).encode()
        headers = [(b"content-type", ctype.encode()), (b"content-length", str(len(payload)).encode())]
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": payload})

    def start(self, port: int) -> MockMcp:
        config = uvicorn.Config(
            self,
            host="127.0.0.1",
            port=port,
            loop="asyncio",
            lifespan="off",
            log_level="warning",
            timeout_graceful_shutdown=1,
        )
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._server.run, name=f"mock-mcp-{port}", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the mock MCP server did not start")
            time.sleep(0.01)
        self.url = f"http://127.0.0.1:{port}/mcp"
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(10)


def stdio_main(script_path: str) -> None:
    """Answer newline-delimited JSON-RPC on stdin from a {method: result} JSON file."""
    with open(script_path, encoding="utf-8") as fh:
        script: dict[str, Any] = json.load(fh)
    for line in sys.stdin:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict) or "id" not in message:
            continue
        method = message.get("method")
        answer: dict[str, Any] | Err = script[method] if method in script else Err(-32601, f"no {method}")
        sys.stdout.write(json.dumps(response(message["id"], answer)) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "--stdio":
        raise SystemExit("usage: mock_mcp.py --stdio SCRIPT.json")
    stdio_main(sys.argv[2])
