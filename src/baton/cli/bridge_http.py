"""`baton bridge --serve-http PORT [--host H] [--allow-host NAME] [--protocol V] [--timeout S] -- COMMAND ...`.

The reverse of `baton bridge URL`: it starts COMMAND, a stdio MCP server in any language speaking either
version, and serves it as a Streamable HTTP endpoint at http://127.0.0.1:PORT/mcp for clients of either
version (`front`, `child`). PORT 0 picks a free port; the endpoint's URL is the one line on stdout. Only
loopback by default: another `--host` is refused unless `--allow-host` names the Host headers to admit,
as `baton serve` admits them (protocol.md P158). Bad input is one line and exit 2; SIGTERM exits 0,
Ctrl-C 130, both at once and stopping the child (P137).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import shlex
import shutil
import socket
import sys
from collections.abc import Sequence

from .. import web
from ..bridge.child import Child
from ..bridge.front import front_server
from ..bridge.host import describe
from ..protocol.hosts import is_loopback
from ..stop_signals import STOP_SIGNALS, exit_status
from .client_commands.args import OneLineError, protocol_choice

SHUTDOWN_S = 1
"""How long stopping waits for open HTTP streams (a session's GET stream would otherwise hold it up)."""
log = logging.getLogger("baton.bridge")


def address(host: str, port_text: str, allowed: Sequence[str]) -> tuple[str, int]:
    """Where to listen (OneLineError for a bad port, or an address other than loopback not asked for)."""
    if not port_text.isdigit() or int(port_text) > 65535:
        raise OneLineError(f"--serve-http takes a port number, 0 to 65535 (0: pick one), not {port_text!r}")
    host = host.strip("[]")
    if not is_loopback(host) and not allowed:  # P158
        raise OneLineError(
            f"--host {host} is not a loopback address: anyone who reaches it could use the server's tools; "
            "pass --allow-host NAME (the Host header clients will send) to mean it"
        )
    return host, int(port_text)


def listener(host: str, port: int) -> socket.socket:
    """The bound, listening socket, with TCP_NODELAY (OneLineError when it cannot be bound)."""
    try:
        return web.listen(host, port)
    except web.PortTaken as exc:
        raise OneLineError(str(exc)) from None


async def serve(command: list[str], sock: socket.socket, args: argparse.Namespace) -> int:
    """Start the child, serve it until a signal; the exit status (0, or 130 after SIGINT)."""
    child = Child(command, protocol=protocol_choice(args.protocol), deadline_s=args.timeout, on_changed=_ignore)
    caught: list[int] = []
    front: web.Started | None = None
    starting = asyncio.current_task()

    def stop(signum: int) -> None:
        caught.append(signum)
        if front is not None:
            # Answered now, not cancelled by uvicorn after its grace (which it would log with a traceback):
            # requests in flight, listen streams, and the sessions' GET streams.
            child.stop_requests()
            server.runtime.hub.shutdown()
            app.sessions.close()
            front.stop()
        elif starting is not None:
            starting.cancel()  # a signal while the child starts: stop now, the child with us

    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop, signum)
    try:
        try:
            await child.start()
        except asyncio.CancelledError:
            await child.close()
            return exit_status(*caught)
        except (FileNotFoundError, PermissionError) as exc:
            raise OneLineError(f"cannot run {command[0]!r}: {exc.strerror or exc}") from None
        except Exception as exc:
            await child.close()
            why = "it exited before it answered" if isinstance(exc, ConnectionError) else describe(exc)
            raise StartFailed(f"the stdio server {shlex.join(command)!r} did not start: {why}") from None
        server = front_server(child)
        app = server.asgi(allowed_hosts=args.allow_host or None)
        front = await web.started(app, sock, graceful_s=SHUTDOWN_S)  # the signal handlers above are its own
        host, port = sock.getsockname()[:2]
        url = f"http://{f'[{host}]' if ':' in host else host}:{port}/mcp"
        print(url, flush=True)
        log.warning("serving %s (MCP %s over stdio) at %s", shlex.join(command), child.era, url)
        try:
            await front.serving
        finally:
            await child.close()
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
    return exit_status(*caught)


class StartFailed(Exception):
    """The child did not start: one line, exit 1."""


def _ignore(kind: str) -> None:
    """No listeners before the HTTP side exists."""


def run(args: argparse.Namespace) -> int:
    """`baton bridge --serve-http PORT ... -- COMMAND ...` (its options are added by `baton.cli.bridge`): the exit
    status."""
    command: list[str] = args.server_command or []
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="baton bridge: %(message)s")
    try:
        if not command:
            raise OneLineError(
                "--serve-http needs the stdio server's command after --: baton bridge --serve-http PORT -- COMMAND ..."
            )
        protocol_choice(args.protocol)
        host, port = address(args.host, args.serve_http, args.allow_host)
        if shutil.which(command[0]) is None:
            raise OneLineError(f"cannot run {command[0]!r}: no such executable (give a path, or a command on PATH)")
        sock = listener(host, port)
    except OneLineError as exc:
        print(f"baton bridge: {exc}", file=sys.stderr)
        return 2
    try:
        with sock:
            return asyncio.run(serve(command, sock, args))
    except OneLineError as exc:
        print(f"baton bridge: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were set
        return 130
    except Exception as exc:  # one line, never a traceback
        print(f"baton bridge: {exc if isinstance(exc, StartFailed) else describe(exc)}", file=sys.stderr)
        return 1
