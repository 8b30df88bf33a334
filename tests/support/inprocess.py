"""A `Server`'s Streamable HTTP app served in this process, reached by URL through `wire` as a `baton serve` on
loopback would be, with no socket and no process.

`InProcessServer(server, log)` mounts `server.asgi()` behind httpx's ASGI transport, driven on one event loop
kept in a thread of its own (so that what the app keeps between requests, the listen hub or the single-use
ledger's tasks, lives on one loop, as under uvicorn). Its `url` is `http://127.0.0.1:N/mcp` with an `N` no
socket ever binds: `wire.post` and `wire.call` look the URL up here first (`client_for`). The server's log
lines go to `log`, as a subprocess's stderr would. Responses are read whole, so this serves requests that
end: JSON answers and SSE streams that close; a stream held open needs a real server.
"""

from __future__ import annotations

import asyncio
import importlib.util
import itertools
import logging
import sys
import threading
from pathlib import Path
from types import ModuleType

import httpx

from baton import Server

_SERVERS: dict[str, InProcessServer] = {}
_FAKE_PORTS = itertools.count(1)  # never bound: only a key for `client_for`
TIMEOUT_S = 30.0


class _Bridge(httpx.BaseTransport):
    """A synchronous httpx transport that hands each request to the ASGI transport on the server's loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop, app: object) -> None:
        self._loop = loop
        self._asgi = httpx.ASGITransport(app=app)  # type: ignore[arg-type]

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        async def send() -> tuple[int, httpx.Headers, bytes]:
            forwarded = httpx.Request(request.method, request.url, headers=request.headers, content=request.read())
            response = await self._asgi.handle_async_request(forwarded)
            body = b"".join([chunk async for chunk in response.stream])  # type: ignore[union-attr]
            return response.status_code, response.headers, body

        status, headers, body = asyncio.run_coroutine_threadsafe(send(), self._loop).result(TIMEOUT_S)
        return httpx.Response(status, headers=headers, content=body, request=request)


class InProcessServer:
    """`server.asgi()` in this process; `url` reaches it through `wire`, `log` holds what it logged."""

    def __init__(self, server: Server, log: Path) -> None:
        self.server = server
        self.log = log
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="in-process server", daemon=True)
        self._thread.start()
        self.app = server.asgi()
        self.url = f"http://127.0.0.1:{next(_FAKE_PORTS)}/mcp"
        self.http = httpx.Client(transport=_Bridge(self._loop, self.app), timeout=TIMEOUT_S)
        self._handler = logging.FileHandler(log)
        self._handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
        self._logger = logging.getLogger("baton")
        self._level = self._logger.level
        self._logger.addHandler(self._handler)
        self._logger.setLevel(logging.INFO)
        _SERVERS[httpx.URL(self.url).netloc.decode()] = self

    @property
    def port(self) -> int:
        """The port its URL names (no socket binds it)."""
        return int(httpx.URL(self.url).port or 80)

    def close(self) -> None:
        _SERVERS.pop(httpx.URL(self.url).netloc.decode(), None)
        self.http.close()
        asyncio.run_coroutine_threadsafe(self.server.aclose(), self._loop).result(TIMEOUT_S)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(TIMEOUT_S)
        self._loop.close()
        self._logger.removeHandler(self._handler)
        self._logger.setLevel(self._level)
        self._handler.close()

    def __enter__(self) -> InProcessServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def client_for(url: str) -> httpx.Client | None:
    """The client of the in-process server `url` points at, if it is one."""
    server = _SERVERS.get(httpx.URL(url).netloc.decode())
    return server.http if server is not None else None


def load_server(path: Path) -> Server:
    """The `server` of a server module, imported afresh (its module-level settings read the environment now)."""
    spec = importlib.util.spec_from_file_location(f"inprocess_{path.stem}_{next(_FAKE_PORTS)}", path)
    assert spec is not None and spec.loader is not None
    module: ModuleType = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    server = module.server
    assert isinstance(server, Server)
    return server
