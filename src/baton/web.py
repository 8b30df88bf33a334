"""What every HTTP page Baton serves is built on: security headers, a capped body, lifespan, uvicorn.

Baton's pages (the connect kit's `/connect/` pages, `baton dev`'s page, the OAuth loopback's "you can
close this tab") and its MCP endpoint are hand-written on ASGI (or, for the loopback, on asyncio
streams); this module holds the parts they share, so each rule is written once:

- `security_headers(csp, referrer=...)`: the response headers of a page a browser shows, with the page's
  own Content-Security-Policy; no framing (`X-Frame-Options: DENY`), `Referrer-Policy` (default
  `no-referrer`), `X-Content-Type-Options: nosniff`, `Cache-Control: no-store`. Send them with every
  response of a page: `[(b"content-type", ...), *security_headers(MY_CSP)]`.
- `await read_body(receive, limit)`: the whole request body, or `BodyTooLarge` once more than `limit` bytes
  came, or `ClientGone` when the client left first. `first=` hands over a message already received.
- `await lifespan(receive, send)`: answer an ASGI `lifespan` scope for an app with nothing to start or stop
  (`if scope["type"] == "lifespan": await lifespan(receive, send); return`).
- `listen(host, port)`: a bound, listening TCP socket (`PortTaken`, whose message is one line, when it
  cannot be), with TCP_NODELAY (without it a streamed reply's events can wait ~40 ms for Nagle).
- `run(app, host, port, ...)`: blocking, uvicorn serving `app` (an ASGI app, or the "module:factory" string
  that `workers` > 1 and `reload_dirs` need) on a socket from `listen` until SIGINT or SIGTERM; the exit status
  (2 when the app's lifespan refused to start). `await started(app, sock)` serves inside a running loop, with
  no signal handlers of uvicorn's (the caller owns them): a `Started` to `stop()` and await `stopped()`.
  Both serve with `baton.http_protocol`'s protocol: each response's head leaves with its body, in one write, and a
  connection keeps one keep-alive timer while idle, not one per response.

A new page: route on `scope["path"]`, answer `lifespan` with `lifespan`, read a POST with `read_body`,
send with `security_headers(its CSP)`, and serve through `run` or `started`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import Callable, Iterator, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from .protocol.asgi import Receive, Send
from .stop_signals import STOP_SIGNALS, exit_status

STARTUP_FAILED = 3  # uvicorn's exit status when the app's lifespan startup failed
SERVER_HEADER = False
"""No `server: uvicorn` header: it names the server software to whoever asks (protocol.md P227), and it is one
header more to build and write on every response."""
PROXY_HEADERS = False
"""No uvicorn proxy-header middleware: Baton's HTTP transport reads `X-Forwarded-For` itself, by the same rule, for
the requests that carry it (`baton.serve.forwarded`, protocol.md P228); the middleware was one more coroutine and a
pass over the headers of every request."""


def security_headers(csp: str, *, referrer: str = "no-referrer", framed: bool = False) -> list[tuple[bytes, bytes]]:
    """The headers of every response of a page a browser shows, with that page's Content-Security-Policy
    (protocol.md P175). `framed`: a page meant to be shown in a frame (an MCP App in `baton dev`), whose CSP
    names who may frame it (`frame-ancestors`), so no `X-Frame-Options: DENY`."""
    headers = [
        (b"content-security-policy", csp.encode()),
        (b"x-frame-options", b"DENY"),
        (b"referrer-policy", referrer.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"cache-control", b"no-store"),
    ]
    return [h for h in headers if h[0] != b"x-frame-options"] if framed else headers


class BodyTooLarge(Exception):
    """More than the limit of bytes came in the request body."""


class ClientGone(Exception):
    """The client disconnected before the end of the request body."""


async def read_body(receive: Receive, limit: int, *, first: MutableMapping[str, Any] | None = None) -> bytes:
    """The whole request body, read no further than `limit` bytes; `first`: a message already received."""
    chunks: list[bytes] = []
    size = 0
    message = first if first is not None else await receive()
    while True:
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise BodyTooLarge
        chunks.append(chunk)
        if not message.get("more_body"):
            return b"".join(chunks)
        message = await receive()


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer an ASGI lifespan scope at once: an app with nothing to start or stop."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


class PortTaken(OSError):
    """Nothing can listen on the address asked for; the message says why, in one line."""


def listen(host: str, port: int, *, backlog: int = 2048) -> socket.socket:
    """A TCP socket listening on host:port (port 0: any free one), as uvicorn would bind it, with TCP_NODELAY."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # inherited by every accepted connection
        sock.bind((host, port))
        sock.listen(backlog)
    except OSError as exc:
        sock.close()
        shown = f"[{host}]" if ":" in host else host
        raise PortTaken(f"cannot listen on {shown}:{port}: {exc.strerror or exc}") from None
    sock.setblocking(False)
    sock.set_inheritable(True)  # for uvicorn's worker and reloader processes
    return sock


def run(
    app: Any,
    host: str,
    port: int,
    *,
    graceful_s: int,
    log_level: str = "warning",
    log_config: dict[str, Any] | None = None,
    workers: int = 1,
    worker_healthcheck_s: int = 5,
    reload_dirs: list[str] | None = None,
) -> int:
    """Blocking: uvicorn serves `app` on host:port until SIGINT or SIGTERM; 0 (130 after SIGINT), or 2 if its lifespan
    refused to start; `PortTaken` before anything starts when nothing can listen there.

    `app` is an ASGI app, or a "module:factory" string (each worker process, or each process the reloader
    starts, calls it); `workers` > 1 runs that many processes, each given `worker_healthcheck_s` to answer
    uvicorn's health check, `reload_dirs` restarts the process when a file under them changes. The socket
    is `listen`'s (uvicorn binds nothing): a supervisor takes it by its descriptor, a single process as is."""
    import uvicorn  # noqa: PLC0415 (uvicorn loads only for HTTP serving)

    from .http_protocol import HTTP_PROTOCOL  # noqa: PLC0415 (as uvicorn)

    options: dict[str, Any] = {"log_config": log_config} if log_config is not None else {}
    if reload_dirs:
        options.update(reload=True, reload_dirs=reload_dirs)
    elif workers > 1:
        options.update(workers=workers, timeout_worker_healthcheck=worker_healthcheck_s)
    options.update(factory=isinstance(app, str), log_level=log_level, access_log=False, server_header=SERVER_HEADER)
    options.update(proxy_headers=PROXY_HEADERS, http=HTTP_PROTOCOL)
    options.update(timeout_graceful_shutdown=graceful_s)
    if reload_dirs or workers > 1:  # a supervisor process: uvicorn's own, which takes the signals over
        supervised = _Supervised.install()  # before the port opens, as below
        try:
            sock = listen(host, port)
            try:
                failed = _startup_failed(lambda: uvicorn.run(app, fd=sock.fileno(), **options))
            finally:
                sock.close()
        except _SignalledEarly:
            failed = False
        finally:
            supervised.uninstall()
        return 2 if failed else supervised.status
    server = uvicorn.Server(uvicorn.Config(app, **options))
    stopped = _Stopped.install(server)  # before the port opens: whoever sees it open may signal at once
    try:
        sock = listen(host, port)
    except PortTaken:
        stopped.uninstall()
        raise
    try:
        failed = _startup_failed(lambda: server.run(sockets=[sock]))
    finally:
        sock.close()
        stopped.uninstall()
    if failed or (stopped.signum is None and not server.started):
        return 2  # the app's lifespan refused to start (it said why)
    return stopped.status


def _startup_failed(serve: Callable[[], None]) -> bool:
    """Run `serve`; whether uvicorn ended it because the app's startup failed (its exit status 3)."""
    try:
        serve()
    except SystemExit as exc:
        if exc.code == STARTUP_FAILED:
            return True
        raise
    return False


@dataclass(slots=True)
class _Stopped:
    """The signal that ended a single-process server, for its exit status: 130 after Ctrl-C, 0 after SIGTERM,
    as every Baton command (P98). These handlers ask uvicorn to stop as its own do; uvicorn takes the signals
    over while it serves, and re-raises the one it caught on these handlers once it has shut down."""

    server: Any  # uvicorn.Server
    previous: dict[int, Any] = field(default_factory=dict)
    signum: int | None = None

    @classmethod
    def install(cls, server: Any) -> _Stopped:
        noted = cls(server)
        with contextlib.suppress(ValueError):  # not the main thread: the caller owns the signals
            noted.previous = _handle_stops(noted._note)
        return noted

    def _note(self, signum: int, frame: object) -> None:
        self.signum = signum
        self.server.should_exit = True

    def uninstall(self) -> None:
        _restore(self.previous)

    @property
    def status(self) -> int:
        return exit_status(self.signum)


class _SignalledEarly(BaseException):
    """SIGINT or SIGTERM came before uvicorn's supervisor took the signals over: the start ends there. A
    BaseException, as KeyboardInterrupt, so that no `except Exception` on the way swallows it."""


@dataclass(slots=True)
class _Supervised:
    """The signal that ended a supervisor (`--workers`, `--reload`), for its exit status as `_Stopped`'s: 130 after
    Ctrl-C, 0 after SIGTERM (P98). uvicorn's supervisor installs handlers of its own once it runs and ends
    normally after either signal. Until then these handlers end the start (`_SignalledEarly`): whoever sees the
    port open may signal at once, and the default SIGTERM would kill the process by the signal. After, the signal
    is read from the wakeup fd, where Python writes the number of each signal it catches, whichever handler runs."""

    previous: dict[int, Any] = field(default_factory=dict)
    pipe: tuple[int, int] | None = None
    wakeup: int = -1  # the wakeup fd before this one
    caught: list[int] = field(default_factory=list)

    @classmethod
    def install(cls) -> _Supervised:
        noted = cls()
        read, write = os.pipe()
        os.set_blocking(read, False)
        os.set_blocking(write, False)
        try:
            noted.wakeup = signal.set_wakeup_fd(write, warn_on_full_buffer=False)
        except ValueError:  # not the main thread: the caller owns the signals
            os.close(read)
            os.close(write)
            return noted
        noted.pipe = (read, write)
        noted.previous = _handle_stops(_signalled_early)
        return noted

    def uninstall(self) -> None:
        _restore(self.previous)
        if self.pipe is not None:
            signal.set_wakeup_fd(self.wakeup)
            with contextlib.suppress(BlockingIOError):
                while chunk := os.read(self.pipe[0], 512):
                    self.caught += chunk
            for fd in self.pipe:
                os.close(fd)
            self.pipe = None

    @property
    def status(self) -> int:
        stops = [signum for signum in self.caught if signum in STOP_SIGNALS]
        return exit_status(stops[-1] if stops else None)


def _signalled_early(signum: int, frame: object) -> None:
    raise _SignalledEarly(signum)


def _handle_stops(handler: Callable[[int, Any], None]) -> dict[int, Any]:
    """`handler` for SIGINT and SIGTERM; the handlers it replaced, for `_restore`."""
    return {signum: signal.signal(signum, handler) for signum in STOP_SIGNALS}


def _restore(previous: dict[int, Any]) -> None:
    for signum, handler in previous.items():
        signal.signal(signum, handler)


@dataclass(slots=True)
class Started:
    """uvicorn serving inside this loop: `stop()` asks it to end, `await stopped()` waits until it has."""

    server: Any  # uvicorn.Server
    serving: asyncio.Future[None]  # done when uvicorn returns

    def stop(self) -> None:
        self.server.should_exit = True

    async def stopped(self) -> None:
        with contextlib.suppress(Exception):
            await self.serving


async def started(app: Any, sock: socket.socket, *, graceful_s: int = 1, log_level: str = "warning") -> Started:
    """uvicorn serving `app` on `sock` in the running loop, once it accepts connections; its own signal handlers
    left out (the caller handles SIGINT and SIGTERM). Raises what stopped it from starting."""
    import uvicorn  # noqa: PLC0415 (uvicorn loads only for HTTP serving)

    from .http_protocol import HTTP_PROTOCOL  # noqa: PLC0415 (as uvicorn)

    class Quiet(uvicorn.Server):
        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    config = uvicorn.Config(
        app,
        log_level=log_level,
        lifespan="on",
        server_header=SERVER_HEADER,
        proxy_headers=PROXY_HEADERS,
        http=HTTP_PROTOCOL,
        timeout_graceful_shutdown=graceful_s,
    )
    server = Quiet(config)
    serving = asyncio.ensure_future(server.serve(sockets=[sock]))
    while not server.started and not serving.done():  # noqa: ASYNC110 - uvicorn has no event for this
        await asyncio.sleep(0.01)
    if serving.done():
        serving.result()  # raises why it could not start
    return Started(server, serving)
