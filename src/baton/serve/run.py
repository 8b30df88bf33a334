"""Serving one `Server` in this process, the way `baton serve` and `Server.run()` both do.

`ready` mounts the default connect kit and runs the start-up checks (a refusal is one message, exit 2);
`announce` says on stderr where the server answers (on stdio one short line, none when `quiet`, since
stdout is the protocol there and a host shows stderr in its logs); `telemetry` sets up OpenTelemetry
export when the standard variables ask for it; `serve_http` runs uvicorn on one address;
`run` is all of it for `Server.run(transport=..., host=..., port=...)`. `baton serve` adds what only a
command line has (`--workers`, `--auth-*`, `--reload`) around the same functions.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
from typing import TYPE_CHECKING, Any, Literal

from .. import web
from ..connect import ConnectKit, mount_default_kit
from ..server.ladder import PAGE_RUNGS
from ..server.startup import ConfigurationError, connect_users
from ..state.keys import data_dir
from ..state.ledger_sqlite import DEFAULT_FILE_NAME
from ..state.store_url import parse_store_url
from ..telemetry.logs import LogFormat, uvicorn_config
from ..telemetry.logs import line as stderr_line
from ..telemetry.setup import from_env, shutdown
from .http import ENV_INSTANCE, instance_header_value, instance_name
from .http_sessions import bus_url
from .stdio import serve_stdio

if TYPE_CHECKING:
    from ..server.core import Server

ServeTransport = Literal["http", "stdio"]
GRACEFUL_SHUTDOWN_S = 5
"""How long serving waits, on SIGTERM, for open connections: long-lived SSE streams (a session's
standalone GET, `subscriptions/listen`) would otherwise hold the server up for ever."""
WORKER_HEALTHCHECK_S = 30
"""How long a `--workers` process may take to answer uvicorn's health check, its start included (P190: with
uvicorn's 5 s, on a busy machine, workers still importing the server are killed and restarted for ever)."""
UNNAMED = " (unnamed: no baton-instance header; $BATON_INSTANCE names it)"
"""Said after an unnamed instance's name in the start-up lines: its responses do not name it (protocol.md P229)."""


def refuse(message: str, fmt: LogFormat = "text") -> int:
    """Print why the server cannot be served (one line on stderr); the exit status, 2."""
    print(stderr_line(message, "ERROR", fmt), file=sys.stderr)
    return 2


def ready(server: Server, transport: ServeTransport) -> str | None:
    """Mount the default connect kit and run the start-up checks: why the server cannot be served, or None.

    Also creates the shared key file before any worker races for it."""
    mount_default_kit(server)
    try:
        server.check_startup(transport)
    except ConfigurationError as exc:
        return f"cannot serve {server.name!r}: {exc}"
    return None


def announce(
    server: Server, where: str, fmt: LogFormat = "text", *, quiet: bool = False, brief: bool = False, workers: int = 1
) -> None:
    """Say on stderr where the server answers and what it uses (its keys, its data directory, over HTTP its
    instance name and its ledger, its connect pages); `brief`: only the first line (stdio); `quiet`: nothing.
    Over HTTP, warn when several instances (`$BATON_INSTANCE` set, or `workers`) would each use a local
    ledger and so share no answer bus (protocol.md P113)."""
    if quiet:
        return
    kit = server.runtime.connect_kit if server.runtime.has_connect_kit else None
    # Tools on the page rung (P145), over HTTP: a page needs the public URL (over stdio the error rung answers).
    on_page = [] if brief else [name for name, tool in server.tools.items() if _on_page(tool.flow)]
    pages = None
    if (
        isinstance(kit, ConnectKit)
        and kit.configured
        and (server.runtime.connect_declared or on_page or any(connect_users(server)))
    ):
        pages = f"connect pages: {kit.base_url}/connect/"
    if brief:
        lines = [f"serving {server.name!r} {where}" + (f"; {pages}" if pages else "")]
    else:
        lines = [
            f"serving {server.name!r} {where}",
            f"instance: {instance_name()}" + ("" if instance_header_value() else UNNAMED),
            f"keys: {server.runtime.key_ring.source}",
            f"data directory: {data_dir()}",
            f"ledger: {ledger_line(server.runtime.ledger_url)}",
        ]
        lines += [pages] if pages else []
    for line in lines:
        print(stderr_line(line, "INFO", fmt), file=sys.stderr)
    warnings = [] if brief else [local_ledger_warning(server.runtime.ledger_url, workers)]
    if on_page and not (isinstance(kit, ConnectKit) and kit.configured):
        warnings.append(no_page_warning(on_page))
    for warning in warnings:
        if warning:
            print(stderr_line(warning, "WARNING", fmt), file=sys.stderr)
    sys.stderr.flush()


def _on_page(flow: Any) -> bool:
    return flow is not None and flow.when_unasked in PAGE_RUNGS


def no_page_warning(tools: list[str]) -> str:
    """Tools declared `when_unasked="page"` on a server without a public URL: no page can be given (P145)."""
    named = ", ".join(tools[:3]) + (f" and {len(tools) - 3} more" if len(tools) > 3 else "")
    return (
        f'{named} take the page rung (when_unasked="page" or "app"), but the server has no public URL, so no page '
        "can be given: a question their client cannot show ends the call with an error. Set $BATON_PUBLIC_URL (or "
        "Server(public_url=...)) to where browsers reach this server"
    )


def ledger_line(url: str | None) -> str:
    """What the single-use ledger is, and whether 2025-11-25 answers pass between instances through it."""
    if url is None:
        return "the Ledger object given to Server(ledger=...); no answer bus between instances"
    try:
        parsed = parse_store_url(url, "ledger")
    except ValueError:  # pragma: no cover - refused by Server() and the start-up checks first
        return "(a malformed URL)"
    if parsed.kind == "redis":
        return f"Redis at {parsed.shown}, also the answer bus between instances"
    if parsed.kind == "memory":
        return "in memory, this process only (set BATON_LEDGER=redis://... to share it)"
    shared = "set BATON_LEDGER=redis://... to share it"
    return f"SQLite file {parsed.sqlite_file(DEFAULT_FILE_NAME)}, this host only ({shared})"


def local_ledger_warning(url: str | None, workers: int) -> str | None:
    """A warning when this is one of several instances and its ledger is local (not Redis), else None."""
    if bus_url(url) is not None or url is None:
        return None
    answers = "a 2025-11-25 answer that reaches another {} than the one that asked is refused (421)"
    if workers > 1:
        return (
            f"the {workers} worker processes share no answer bus (the ledger is not Redis): "
            f"{answers.format('worker')}; set BATON_LEDGER=redis://..."
        )
    if os.environ.get(ENV_INSTANCE):
        return (
            f"${ENV_INSTANCE} names this one of several instances, but its ledger is local: each instance keeps "
            f"its own, so single use holds per instance only, and {answers.format('instance')}; give every "
            "instance the same BATON_LEDGER=redis://..."
        )
    return None


def telemetry(server: Server, *, worker: bool = False) -> None:
    """Set up OpenTelemetry export when the standard variables ask for it (protocol.md P60); the instance
    is named by `instance_name`: `$BATON_INSTANCE`, else `host:pid`, a `--workers` process's
    `$BATON_INSTANCE:pid` (each process its own `service.instance.id`). Once set up, the server's
    `aclose` (which the transport awaits when it shuts down: uvicorn's lifespan on SIGTERM or SIGINT, in each
    worker; the end of stdio) exports what is queued and shuts the providers down, bounded (protocol.md P70)."""

    if not from_env(server.name, instance_name(worker=worker)):
        return
    close = server.aclose

    async def aclose() -> None:
        try:
            await close()
        finally:
            await asyncio.to_thread(shutdown)

    vars(server)["aclose"] = aclose  # an instance attribute, as `instrument` shadows the entry points


def can_listen(host: str, port: int) -> str | None:
    """Why nothing can listen on host:port (taken, not an address of this machine), or None."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        with socket.socket(infos[0][0], socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds it
            sock.bind(infos[0][4])
    except OSError as exc:
        return exc.strerror or str(exc)
    return None


def where(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"at http://{shown}:{port}/mcp"


def serve_http(
    server: Server,
    host: str,
    port: int,
    *,
    allowed_hosts: list[str] | None = None,
    log_level: str = "warning",
    fmt: LogFormat = "text",
) -> int:
    """Blocking: serve Streamable HTTP at http://host:port/mcp until SIGINT or SIGTERM; the exit status."""
    logs = uvicorn_config(log_level) if fmt == "json" else None
    app = server.asgi(allowed_hosts=allowed_hosts)
    try:
        return web.run(app, host, port, log_level=log_level, log_config=logs, graceful_s=GRACEFUL_SHUTDOWN_S)
    except web.PortTaken as exc:
        return refuse(str(exc), fmt)


def run(server: Server, transport: ServeTransport, host: str, port: int, *, quiet: bool = False) -> int:
    """Serve `server` as `baton serve` would (checks, announcement, telemetry); the exit status."""

    if transport not in ("stdio", "http"):
        return refuse(f'transport is "stdio" or "http", not {transport!r}')
    refusal = ready(server, transport)
    if refusal:
        return refuse(refusal)
    telemetry(server)
    if transport == "stdio":
        announce(server, "on stdio", quiet=quiet, brief=True)
        return serve_stdio(server)
    taken = can_listen(host, port)
    if taken:
        return refuse(f"cannot listen on {host}:{port}: {taken}")
    announce(server, where(host, port), quiet=quiet)
    return serve_http(server, host, port)
