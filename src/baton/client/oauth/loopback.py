"""`LoopbackRedirect`: the browser part of a login for a program on the user's computer (RFC 8252 §7.3).

It listens on 127.0.0.1, on a port the system picks when it is made (so its `redirect_uri` is known
before any login), and serves one thing: the authorization server's redirect to its path, while a
login waits for it, carrying the `state` of the authorization URL it was given. That request gets a
small page ("you can close this tab", no script, nothing of the request echoed back, `no-store`) and
its URL goes back to the login, which checks it (`response`). A request to that path with another
state, or none (a forged callback from another program or page), gets 400 and the listener keeps
waiting. Anything else gets 404. Calling it (it is an `open_browser` for `OAuth`) first calls
`show(url)`, so the person sees the full address before anything opens, then `opener(url)` (the
system browser by default), and waits (protocol.md P58).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import webbrowser
from collections.abc import Callable
from urllib.parse import parse_qs, urlsplit

from ...web import security_headers

MAX_HEAD = 16 * 1024
READ_S = 10.0
_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Signed in</title>"
    b"<p>The sign-in went back to the program that asked for it. You can close this tab.</p>"
)
_BAD_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>Not this sign-in</title><p>This is not the sign-in that is waiting.</p>"
)
_SECURITY_HEADERS = security_headers("default-src 'none'")  # no script, no style, nothing loaded
_NOT_FOUND_PAGE = b"<!doctype html><meta charset=utf-8><title>Not found</title><p>No sign-in is waiting here.</p>"


class LoopbackRedirect:
    """A one-shot redirect listener on 127.0.0.1 and the system browser, usable as `OAuth(open_browser=...)`."""

    def __init__(
        self,
        *,
        path: str = "/callback",
        show: Callable[[str], None] | None = None,
        opener: Callable[[str], object] = webbrowser.open,
    ) -> None:
        if not path.startswith("/"):
            raise ValueError(f"path must start with /, not {path!r}")
        self.path = path
        self.show = show
        self.opener = opener
        self._sock: socket.socket | None = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(8)
        self._sock.setblocking(False)
        self.port = int(self._sock.getsockname()[1])
        self.redirect_uri = f"http://127.0.0.1:{self.port}{path}"
        self._server: asyncio.Server | None = None
        self._waiting: asyncio.Future[str] | None = None
        self._state: str | None = None  # the state of the login waiting

    async def __call__(self, authorization_url: str) -> str:
        """Show the URL, open it in the browser, and return the URL the browser is redirected to."""
        if self._waiting is not None:
            raise RuntimeError("a login is already waiting for its redirect")
        if self._server is None:
            if self._sock is None:
                raise RuntimeError("the redirect listener is closed")
            self._server = await asyncio.start_server(self._handle, sock=self._sock, limit=MAX_HEAD)
            self._sock = None  # the server owns it now
        self._waiting = asyncio.get_running_loop().create_future()
        self._state = _state_of(authorization_url)
        try:
            if self.show is not None:
                self.show(authorization_url)
            await asyncio.to_thread(self.opener, authorization_url)
            return await self._waiting
        finally:
            self._waiting = None

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(READ_S):
                head = await reader.readuntil(b"\r\n\r\n")
            method, target, _ = head.split(b"\r\n", 1)[0].decode("latin-1").split(" ", 2)
            waiting = self._waiting
            parts = urlsplit(target)
            if method == "GET" and parts.path == self.path and waiting is not None and not waiting.done():
                if self._state is None or _state_of(target) != self._state:
                    await _answer(writer, 400, _BAD_PAGE)  # not the redirect of this login: keep waiting
                    return
                await _answer(writer, 200, _DONE_PAGE)
                waiting.set_result(f"http://127.0.0.1:{self.port}{target}")
            else:
                await _answer(writer, 404, _NOT_FOUND_PAGE)
        except (TimeoutError, ValueError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        finally:
            writer.close()
            with contextlib.suppress(OSError):
                await writer.wait_closed()

    async def aclose(self) -> None:
        self.close()
        if self._server is not None:
            await self._server.wait_closed()

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> LoopbackRedirect:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _answer(writer: asyncio.StreamWriter, status: int, page: bytes) -> None:
    reason = {200: b"OK", 400: b"Bad Request"}.get(status, b"Not Found")
    head = b"".join(b"%s: %s\r\n" % pair for pair in _SECURITY_HEADERS)
    writer.write(
        b"HTTP/1.1 %d %s\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n%s"
        b"Connection: close\r\n\r\n%s" % (status, reason, len(page), head, page)
    )
    await writer.drain()


def _state_of(url: str) -> str | None:
    """The one `state` parameter of a URL's query, or None (absent or repeated)."""
    values = parse_qs(urlsplit(url).query).get("state", [])
    return values[0] if len(values) == 1 else None
