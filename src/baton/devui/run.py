"""Running `baton dev`: the page on 127.0.0.1, the session on the target, the file watcher, and a clean stop.

The port is bound here before anything starts (port 0 picks a free one), so a taken port is one clear
line, not a traceback. Then the one line with the page's address is printed (its fragment carries the
run's token) and the browser opened unless `--no-browser`. Ctrl-C (SIGINT) or SIGTERM stops the page,
every call (cancelled on the wire), the client and its child process, and returns 130 (SIGINT) or 0:
uvicorn's own signal handling is replaced by this module's, so that nothing is re-raised as a
traceback afterwards. A server file's folder is watched with watchfiles, for Python files only
(protocol.md P126): a change to one restarts the child and the page reads every list again, while the
data a server writes beside itself (JSON, SQLite, logs) restarts nothing.
"""

from __future__ import annotations

import asyncio
import socket
import sys
import webbrowser
from typing import Any, TextIO

import watchfiles

from ..client.core import MODES
from ..client.probe import AUTO, ProtocolChoice
from ..stop_signals import STOP_SIGNALS, exit_status
from ..web import PortTaken, listen, started
from .app import DevApp
from .dev_target import DevTarget
from .live import DevSession
from .page_access import LOOPBACK, DevGuard

__all__ = ["PortTaken", "bind", "run"]

RELOAD_DEBOUNCE_MS = 300


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:port (0: any free port); PortTaken when that cannot be."""
    return listen(LOOPBACK, port, backlog=64)


def run(
    target: DevTarget,
    sock: socket.socket,
    *,
    open_browser: bool,
    auth: Any = None,
    out: TextIO | None = None,
    protocol: ProtocolChoice = AUTO,
    elicitation: tuple[str, ...] = MODES,
) -> int:
    """Serve the page on `sock` until Ctrl-C or SIGTERM; the exit status (130 after Ctrl-C). `elicitation`: the
    modes the page's client declares (`baton dev --elicitation`, protocol.md P148)."""
    main = _main(
        target,
        sock,
        open_browser=open_browser,
        auth=auth,
        out=out or sys.stdout,
        protocol=protocol,
        elicitation=elicitation,
    )
    return asyncio.run(main)


async def _main(
    target: DevTarget,
    sock: socket.socket,
    *,
    open_browser: bool,
    auth: Any,
    out: TextIO,
    protocol: ProtocolChoice,
    elicitation: tuple[str, ...],
) -> int:
    port = sock.getsockname()[1]
    guard = DevGuard(port)
    session = DevSession(target, auth=auth, protocol=protocol, elicitation=elicitation)
    app = DevApp(session, guard)
    stop = asyncio.Event()
    received: list[int] = []
    loop = asyncio.get_running_loop()

    def stop_on(signum: int) -> None:
        received.append(signum)
        stop.set()

    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, stop_on, signum)
    serving = await started(app, sock, graceful_s=1)  # uvicorn's own signal handlers left out: these are ours
    print(f"baton dev: {guard.address}", file=out, flush=True)
    if open_browser:
        await asyncio.to_thread(webbrowser.open, guard.address)
    work = [asyncio.ensure_future(session.connect())]
    if target.watch is not None:
        work.append(asyncio.ensure_future(_watch(target, session, stop)))
    try:
        stopping: asyncio.Future[Any] = asyncio.ensure_future(stop.wait())
        await asyncio.wait({serving.serving, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        app.close()
        serving.stop()
        for task in work:
            task.cancel()
        await session.close()
        await serving.stopped()
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
    return exit_status(*received)


async def _watch(target: DevTarget, session: DevSession, stop: asyncio.Event) -> None:
    """Restart the server whenever a Python file under its folder changes (P126: not its data files)."""

    assert target.watch is not None
    python = watchfiles.PythonFilter()
    async for changes in watchfiles.awatch(
        target.watch, watch_filter=python, stop_event=stop, debounce=RELOAD_DEBOUNCE_MS
    ):
        names = sorted({path.rsplit("/", 1)[-1] for _, path in changes})
        await session.restart(f"{', '.join(names[:3])} changed: restarting the server")
