"""The HTTP/1.1 protocol `baton.web` gives uvicorn: uvicorn's httptools protocol, made cheaper per response.

uvicorn has no options for what this changes, so this module changes it, through the one choice uvicorn leaves to
whoever starts it, the HTTP protocol class (`uvicorn.Config(http=...)`). Each change was measured on the live server
(bench/README.md, "The seventh pass" and "The eighth pass"):

- One write per response (protocol.md P230, about 4 % of the server's CPU per round trip). uvicorn writes a
  response's head and its body with two `transport.write` calls, and uvloop sends each at once: two system calls and
  two TCP segments, and a client waiting for the body woken twice. Here a head with a `content-length`, for any
  method but HEAD, is held until the first body write and sent with it. A streamed response (chunked, as SSE is)
  and an empty one are sent as before: nothing waits for a write that may not come soon. A response that ends
  without its body (the app failed after `http.response.start`; uvicorn then closes the connection) loses its head
  as well: the client sees the connection close, where it saw a head and then the close.
- One keep-alive timer per idle stretch of a connection, not one per response (protocol.md P232, about 4 %).
  uvicorn arms a timer (`loop.call_later`) when a response completes and cancels it when the next request's bytes
  arrive: a timer made and dropped for every request. Here a response notes when the connection fell idle and arms
  the timer only when none is armed; when it fires, it closes the connection if it has been idle for the whole
  `timeout_keep_alive`, waits out the rest if it became idle later, and goes away if a request is running (that
  request's response arms the next). A connection is still closed `timeout_keep_alive` seconds after its last
  response, and never while a request runs, as uvicorn does it.

The classes:

- `HttpProtocol`: uvicorn's `HttpToolsProtocol`, with the keep-alive timer above, whose request-response cycles are
  `HttpCycle`s. uvicorn makes each cycle by its global name in `on_headers_complete`; the protocol runs uvicorn's
  own function with that name bound to `HttpCycle` (no copy of it; changing a made cycle's class costs more than
  the write saves).
- `HttpCycle`: uvicorn's `RequestResponseCycle` with its ASGI `send` written here. A wrapper around uvicorn's (or
  around the transport) would be two Python calls more per response, measured as costly as the write it saves; so
  `send` is whole here and does what uvicorn's does (the same bytes, checks and state: the tests compare the two
  over generated message sequences), except for the held head.
- `HTTP_PROTOCOL`: what `baton.web` passes as uvicorn's `http`: `HttpProtocol` on the uvicorn release whose code
  this one was compared with (`COMPARED_UVICORN`), else "auto" (uvicorn's own choice), as also where httptools is
  not installed (it is a dependency on CPython only).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib.util import find_spec
from types import FunctionType
from typing import TYPE_CHECKING, cast

COMPARED_UVICORN = "0.55"
"""The uvicorn release (major.minor) whose protocol and cycle `HttpProtocol` and `HttpCycle` were compared with; on
any other, uvicorn's own protocol serves (two writes and a timer per response) until the two are compared again."""

if TYPE_CHECKING or find_spec("httptools") is not None:
    import uvicorn
    from uvicorn._types import ASGISendEvent
    from uvicorn.protocols.http import httptools_impl
    from uvicorn.protocols.http.httptools_impl import (
        HEADER_RE,
        HEADER_VALUE_RE,
        STATUS_LINE,
        HttpToolsProtocol,
        RequestResponseCycle,
    )
    from uvicorn.protocols.utils import get_client_addr, get_path_with_query_string

    class HttpCycle(RequestResponseCycle):
        """uvicorn's request-response cycle, a head with a `content-length` held until the body's first write."""

        held: bytes | None = None

        async def send(self, message: ASGISendEvent) -> None:
            if self.flow.write_paused and not self.disconnected:
                await self.flow.drain()
            if self.disconnected:
                return
            if not self.response_started:
                if message["type"] != "http.response.start":
                    raise RuntimeError(f"Expected ASGI message 'http.response.start', but got '{message['type']}'.")
                self.response_started = True
                self.waiting_for_100_continue = False
                status = message["status"]
                if self.access_log:
                    self.access_logger.info(
                        '%s - "%s %s HTTP/%s" %d',
                        get_client_addr(self.scope),
                        self.scope["method"],
                        get_path_with_query_string(self.scope),
                        self.scope["http_version"],
                        status,
                    )
                head = [STATUS_LINE[status]]
                closes = False
                for given, value in [*self.default_headers, *message.get("headers", ())]:
                    if HEADER_RE.search(given):
                        raise RuntimeError("Invalid HTTP header name.")
                    if HEADER_VALUE_RE.search(value):
                        raise RuntimeError("Invalid HTTP header value.")
                    name = given.lower()
                    if name == b"content-length" and self.chunked_encoding is None:
                        self.expected_content_length = int(value.decode())
                        self.chunked_encoding = False
                    elif name == b"transfer-encoding" and value.lower() == b"chunked":
                        self.expected_content_length = 0
                        self.chunked_encoding = True
                    elif name == b"connection" and b"close" in [t.lower().strip() for t in value.split(b",")]:
                        self.keep_alive = False
                        closes = True
                    head += (name, b": ", value, b"\r\n")
                if not self.keep_alive and not closes:
                    head.append(b"connection: close\r\n")
                method = self.scope["method"]
                if self.chunked_encoding is None and method != "HEAD" and status not in (204, 304):
                    self.chunked_encoding = True  # neither content-length nor transfer-encoding given
                    head.append(b"transfer-encoding: chunked\r\n")
                head.append(b"\r\n")
                if self.chunked_encoding is False and self.expected_content_length and method != "HEAD":
                    self.held = b"".join(head)  # its body follows: one write for both
                else:
                    self.transport.write(b"".join(head))
                return
            if self.response_complete:
                raise RuntimeError(
                    f"Unexpected ASGI message '{message['type']}' sent, after response already completed."
                )
            if message["type"] != "http.response.body":
                raise RuntimeError(f"Expected ASGI message 'http.response.body', but got '{message['type']}'.")
            body = message.get("body", b"")
            more_body = message.get("more_body", False)
            if self.scope["method"] == "HEAD":
                self.expected_content_length = 0
            elif self.chunked_encoding:
                chunk = [b"%x\r\n" % len(body), body, b"\r\n"] if body else []
                if not more_body:
                    chunk.append(b"0\r\n\r\n")
                self.transport.write(b"".join(chunk))
            else:
                if len(body) > self.expected_content_length:
                    raise RuntimeError("Response content longer than Content-Length")
                self.expected_content_length -= len(body)
                held = self.held
                if held is not None:
                    self.held = None
                    body = held + body
                self.transport.write(body)
            if not more_body:
                if self.expected_content_length != 0:
                    raise RuntimeError("Response content shorter than Content-Length")
                self.response_complete = True
                self.message_event.set()
                if not self.keep_alive:
                    self.transport.close()
                self.on_response()

    def _making(cycle: type[RequestResponseCycle]) -> Callable[[HttpToolsProtocol], None]:
        """uvicorn's own `on_headers_complete`, run with `cycle` where it names `RequestResponseCycle`: it makes each
        request's cycle by that global name, so this is how a cycle of another class is made without copying it."""
        made = HttpToolsProtocol.on_headers_complete
        names = {**vars(httptools_impl), "RequestResponseCycle": cycle}
        return cast(
            "Callable[[HttpToolsProtocol], None]",
            FunctionType(made.__code__, names, made.__name__, made.__defaults__, made.__closure__),
        )

    class HttpProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol, its cycles `HttpCycle`s, one keep-alive timer per idle stretch."""

        on_headers_complete = _making(HttpCycle)
        idle_since: float | None = None
        """When the connection's last response completed (the loop's clock), or None while a request is running."""

        def _unset_keepalive_if_required(self) -> None:
            # uvicorn calls it when a request's bytes arrive (and when the connection is lost, below): the armed
            # timer stays, and finds the connection busy when it fires.
            self.idle_since = None

        def connection_lost(self, exc: Exception | None) -> None:
            super().connection_lost(exc)
            timer = self.timeout_keep_alive_task
            if timer is not None:  # nothing left to close: no timer keeps the protocol for its seconds
                self.timeout_keep_alive_task = None
                timer.cancel()

        def on_response_complete(self) -> None:
            self.server_state.total_requests += 1
            if self.transport.is_closing():
                return
            self.flow.resume_reading()
            if self.pipeline:  # a pipelined request is next: the connection stays busy
                cycle, app = self.pipeline.pop()
                self._start_asgi_task(cycle, app)
                return
            self.idle_since = self.loop.time()
            if self.timeout_keep_alive_task is None:
                self.timeout_keep_alive_task = self.loop.call_later(self.timeout_keep_alive, self._keep_alive_due)

        def _keep_alive_due(self) -> None:
            """The timer fired: close the connection if idle for `timeout_keep_alive`, else wait out the rest."""
            self.timeout_keep_alive_task = None
            idle_since = self.idle_since
            if idle_since is None:  # a request is running; its response arms the timer again
                return
            left = idle_since + self.timeout_keep_alive - self.loop.time()
            if left > 0:
                self.timeout_keep_alive_task = self.loop.call_later(left, self._keep_alive_due)
            else:
                self.timeout_keep_alive_handler()

    def _protocol() -> type[asyncio.Protocol] | str:
        """`HttpProtocol` on the uvicorn whose protocol and cycle it was compared with (and which makes its cycles
        by that name), else uvicorn's own choice."""
        same_release = uvicorn.__version__.startswith(COMPARED_UVICORN + ".")
        by_name = "RequestResponseCycle" in HttpToolsProtocol.on_headers_complete.__code__.co_names
        return HttpProtocol if same_release and by_name else "auto"

    HTTP_PROTOCOL: type[asyncio.Protocol] | str = _protocol()
else:  # pragma: no cover - httptools is installed on CPython
    HTTP_PROTOCOL = "auto"  # uvicorn's choice: its h11 protocol
