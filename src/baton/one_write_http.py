"""One write per HTTP response: uvicorn's httptools protocol, each response's head sent with its body.

uvicorn writes a response's head (status line and headers) and its body with two `transport.write` calls, and
uvloop sends each at once: two system calls and two TCP segments per response, and a client waiting for the body
is woken twice. Sending the head with the body cut Baton's server CPU per round trip by about 4 % (bench/README.md,
"The seventh pass"; protocol.md P230). uvicorn has no option for it, so this module does it, through the one choice
uvicorn leaves to whoever starts it, the HTTP protocol class (`uvicorn.Config(http=...)`):

- `OneWriteProtocol`: uvicorn's `HttpToolsProtocol`, whose request-response cycles are `OneWriteCycle`s. uvicorn
  makes each cycle by its global name in `on_headers_complete`; the protocol runs uvicorn's own function with that
  name bound to `OneWriteCycle` (no copy of it; changing a made cycle's class costs more than the write saves).
- `OneWriteCycle`: uvicorn's `RequestResponseCycle` with its ASGI `send` written here. A wrapper around the
  transport, two Python calls per response, measured as costly as the write it saves (a wrapper around uvicorn's
  `send` would be two calls as well); so `send` is whole here and does what uvicorn's does (the same bytes, checks
  and state: the tests compare the two over generated message sequences), except that a head with a
  `content-length`, for any method but HEAD, is held until the first body write and sent with it. A streamed
  response (chunked, as SSE is) and an empty one are sent as before: nothing waits for a write that may not come
  soon.
- `HTTP_PROTOCOL`: what `baton.web` passes as uvicorn's `http`: `OneWriteProtocol` on the uvicorn release whose
  `send` this one was compared with (`COMPARED_UVICORN`), else "auto" (uvicorn's choice, two writes), as also
  where httptools is not installed (it is a dependency on CPython only).

A response that ends without its body (the app failed after `http.response.start`; uvicorn then closes the
connection) loses its head as well: the client sees the connection close, where it saw a head and then the close.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from importlib.util import find_spec
from types import FunctionType
from typing import TYPE_CHECKING, cast

COMPARED_UVICORN = "0.55"
"""The uvicorn release (major.minor) whose `RequestResponseCycle.send` `OneWriteCycle.send` matches; on any other,
uvicorn's own protocol serves (two writes per response) until the two are compared again."""

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

    class OneWriteCycle(RequestResponseCycle):
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

    class OneWriteProtocol(HttpToolsProtocol):
        """uvicorn's httptools protocol, its cycles `OneWriteCycle`s."""

        on_headers_complete = _making(OneWriteCycle)

    def _protocol() -> type[asyncio.Protocol] | str:
        """`OneWriteProtocol` on the uvicorn whose `send` `OneWriteCycle.send` was compared with (and which makes
        its cycles by that name), else uvicorn's own choice."""
        same_send = uvicorn.__version__.startswith(COMPARED_UVICORN + ".")
        by_name = "RequestResponseCycle" in HttpToolsProtocol.on_headers_complete.__code__.co_names
        return OneWriteProtocol if same_send and by_name else "auto"

    HTTP_PROTOCOL: type[asyncio.Protocol] | str = _protocol()
else:  # pragma: no cover - httptools is installed on CPython
    HTTP_PROTOCOL = "auto"  # uvicorn's choice: its h11 protocol, two writes per response
