"""A tiny HTTP/1.1 server on 127.0.0.1 that runs in the test's own event loop, with full control of the bytes.

`async with Stub({"GET /prm": handler, ...}) as stub:` serves `stub.url`; a handler gets the `Seen`
request and returns a `Reply` (status, JSON or bytes, headers; `chunks`, an async iterator, is sent
chunked with no length, for bodies that never end or are larger than any cap). Unknown routes get
404. Every request is recorded in `stub.seen`. One request per connection (`Connection: close`).
`json_reply(obj)` is the common case; `oversized(declared)` a body over any cap, announced by its
`Content-Length` or endless; `oauth_as(stub, ...)` adds a minimal authorization server (metadata,
registration, token endpoint) whose answers a test can change. `run(coro, limit)` runs a test's
coroutine with a deadline, so that a guard that does not hold fails instead of hanging.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes

    def form(self) -> dict[str, str]:
        return {k: v[0] for k, v in parse_qs(self.body.decode()).items()}


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    chunks: AsyncIterator[bytes] | None = None


def json_reply(obj: Any, status: int = 200, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(obj).encode(), {"Content-Type": "application/json", **(headers or {})})


async def endless() -> AsyncIterator[bytes]:
    """A body that never ends."""
    while True:
        yield b" " * 65536


def oversized(declared: bool) -> Reply:
    """A body far over any cap: announced by its `Content-Length` (and never sent), or endless and unannounced."""
    if declared:
        return Reply(headers={"Content-Length": str(600 * 1024 * 1024)}, chunks=None, body=b"")
    return Reply(chunks=endless())


T = TypeVar("T")


def run(coro: Awaitable[T], limit: float = 30.0) -> T:
    async def bounded() -> T:
        async with asyncio.timeout(limit):  # a guard that does not hold fails here instead of hanging
            return await coro

    return asyncio.run(bounded())


Handler = Callable[[Seen], Reply | Awaitable[Reply]]


class Stub:
    def __init__(self, routes: dict[str, Handler] | None = None) -> None:
        self.routes: dict[str, Handler] = dict(routes or {})
        self.seen: list[Seen] = []
        self.url = ""
        self._server: asyncio.Server | None = None
        self._tasks: set[asyncio.Task[None]] = set()

    def paths(self, method: str | None = None) -> list[str]:
        return [s.path for s in self.seen if method is None or s.method == method]

    async def __aenter__(self) -> Stub:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, target, _ = lines[0].split(" ", 2)
            headers = {k.strip().lower(): v.strip() for k, v in (ln.split(":", 1) for ln in lines[1:] if ":" in ln)}
            body = await reader.readexactly(int(headers.get("content-length") or 0))
            parts = urlsplit(target)
            seen = Seen(method, parts.path, parts.query, headers, body)
            self.seen.append(seen)
            handler = self.routes.get(f"{method} {parts.path}")
            reply = Reply(404, b"{}") if handler is None else handler(seen)
            if not isinstance(reply, Reply):
                reply = await reply
            status = f"HTTP/1.1 {reply.status} X\r\nConnection: close\r\n"
            extra = "".join(f"{k}: {v}\r\n" for k, v in reply.headers.items())
            if reply.chunks is None:
                length = "" if "Content-Length" in reply.headers else f"Content-Length: {len(reply.body)}\r\n"
                writer.write(f"{status}{extra}{length}\r\n".encode() + reply.body)
            else:
                writer.write(f"{status}{extra}Transfer-Encoding: chunked\r\n\r\n".encode())
                async for chunk in reply.chunks:
                    writer.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                    await writer.drain()
                writer.write(b"0\r\n\r\n")
            await writer.drain()
        except (OSError, asyncio.IncompleteReadError, asyncio.CancelledError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()


def oauth_as(stub: Stub, **metadata: Any) -> dict[str, Any]:
    """Routes of a minimal authorization server at `stub.url` (its issuer); returns the metadata dict,
    which the test may change. Registration gives `cid-N`; the token endpoint answers `stub.token`."""
    meta: dict[str, Any] = {
        "issuer": stub.url,
        "authorization_endpoint": f"{stub.url}/authorize",
        "token_endpoint": f"{stub.url}/token",
        "registration_endpoint": f"{stub.url}/register",
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        **metadata,
    }
    counter = iter(range(1, 1000))
    stub.token = {"access_token": "AT-1", "token_type": "Bearer"}  # type: ignore[attr-defined]
    stub.routes["GET /.well-known/oauth-authorization-server"] = lambda seen: json_reply(meta)
    stub.routes["POST /register"] = lambda seen: json_reply(
        {"client_id": f"cid-{next(counter)}", "token_endpoint_auth_method": "none"}, 201
    )
    stub.routes["POST /token"] = lambda seen: json_reply(stub.token)  # type: ignore[attr-defined]
    return meta


def prm(stub: Stub, resource: str, servers: list[str], path: str = "/prm") -> None:
    """A Protected Resource Metadata document at `path` of `stub`."""
    stub.routes[f"GET {path}"] = lambda seen: json_reply({"resource": resource, "authorization_servers": servers})


async def consent(url: str) -> str:
    """A browser that consents at once: the redirect back with a code, the request's state and no iss."""
    query = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    return f"{query['redirect_uri']}?code=c1&state={query['state']}"
