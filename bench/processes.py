"""The processes of a benchmark run: start a server on a free loopback port, stop it, and stop on a signal.

A ``Server`` is started in a session of its own, so that ``stop`` ends its whole process group (a master and
its workers), politely first. ``Skip`` is what a server that cannot take part raises; its message says why.
``stop_on_signals`` turns SIGINT, SIGTERM and SIGHUP into ``Stopped``, so that a run interrupted anywhere still
stops its servers and reports what it measured (``stopping`` is the block that does both); ``signals_ignored``
keeps a second Ctrl-C from cutting that clean-up short. ``say`` is the progress line every part of bench/compare
prints on stderr.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent


class Skip(Exception):
    """A server that cannot take part in this run; the message says why."""


def say(text: str) -> None:
    print(f"compare: {text}", file=sys.stderr, flush=True)


@dataclass
class Server:
    """One server under test: how to start it, and the process once started."""

    name: str
    python: Path
    argv: Callable[[int], list[str]]
    port: int = 0
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None
    versions: dict[str, str] = field(default_factory=dict)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def baton_command(baton: Path) -> Callable[[int], list[str]]:
    return lambda port: [str(baton), "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"]


def script_command(python: Path, script: str, *args: str) -> Callable[[int], list[str]]:
    return lambda port: [str(python), script, "--port", str(port), *args]


def server_environment(scratch: Path) -> dict[str, str]:
    """This process's environment for a server under test: without `$BATON_INSTANCE` (a named instance sends one
    header more on every response, protocol.md P229: a shell's setting would change what is measured), and with a
    Baton data directory (its key file, its ledger) under `scratch` unless one is set, not the home directory's
    that Baton would default to."""
    env = {k: v for k, v in os.environ.items() if k != "BATON_INSTANCE"}
    env.setdefault("BATON_DATA_DIR", str(scratch / "baton-data"))
    return env


@contextlib.contextmanager
def servers_environment() -> Iterator[None]:
    """For a script that starts Baton itself: while it runs, this process's environment (which the processes it
    starts inherit) is `server_environment` of a scratch directory, removed afterwards."""
    saved = dict(os.environ)
    with tempfile.TemporaryDirectory(prefix="baton-bench-") as scratch:
        os.environ.clear()
        os.environ.update(server_environment(Path(scratch)))
        try:
            yield
        finally:
            os.environ.clear()
            os.environ.update(saved)


def start(server: Server, logs: Path, wait: float) -> None:
    """Start the server and wait until its port accepts connections; raise Skip if it does not."""
    server.port = free_port()
    server.log = logs / f"{server.name}.log"
    argv = server.argv(server.port)
    with server.log.open("wb") as out:
        server.proc = subprocess.Popen(
            argv,
            cwd=ROOT,
            env=server_environment(logs),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if server.proc.poll() is not None:
            raise Skip(f"exited with status {server.proc.returncode} at start: {tail(server.log)}")
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", server.port), timeout=1):
            return
        time.sleep(0.2)
    raise Skip(f"did not listen on port {server.port} within {wait:g} s: {tail(server.log)}")


def stop(server: Server) -> None:
    """Stop the server's whole process group (its session was started for it), politely first."""
    proc = server.proc
    if proc is None or proc.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(grace)
            break
        except subprocess.TimeoutExpired:
            continue
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)  # workers left behind by a master that exited


def tail(path: Path | None, lines: int = 6) -> str:
    if path is None or not path.exists():
        return "(no log)"
    text = path.read_text(errors="replace").strip().splitlines()[-lines:]
    return " | ".join(text) if text else f"(empty log {path})"


class Stopped(KeyboardInterrupt):
    """SIGINT, SIGTERM or SIGHUP arrived: stop the servers, report what was measured, exit 128 + signal."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """Raise Stopped on SIGINT, SIGTERM or SIGHUP (also when the shell started us with SIGINT ignored)."""

    def leave(signum: int, _frame: Any) -> None:
        raise Stopped(signum)

    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, leave) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@contextlib.contextmanager
def signals_ignored() -> Iterator[None]:
    signals = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in signals}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


@dataclass
class Stopping:
    """What ``stopping`` stops: the servers started so far; and the signal that ended the measuring (0 if none)."""

    started: list[Server] = field(default_factory=list)
    signum: int = 0


@contextlib.contextmanager
def stopping(say: Callable[[str], None]) -> Iterator[Stopping]:
    """Stop every server in ``.started`` when the block ends, however it ends. A signal (``Stopped``, or Ctrl-C)
    ends the block with its number in ``.signum`` and the run goes on after it, to report what was measured."""
    state = Stopping()
    try:
        yield state
    except KeyboardInterrupt as exc:
        state.signum = exc.signum if isinstance(exc, Stopped) else int(signal.SIGINT)
        say(f"{signal.Signals(state.signum).name}: stopping the servers and reporting what was measured")
    finally:
        with signals_ignored():  # a second Ctrl-C must not cut the clean-up short
            for server in state.started:
                stop(server)


def run_stoppable(
    run: Callable[[argparse.Namespace], int], opts: argparse.Namespace, say: Callable[[str], None]
) -> int:
    """``run(opts)``, or 128 + the signal number when a signal stops it."""
    with stop_on_signals():
        try:
            return run(opts)
        except Stopped as exc:  # during the venv set-up or the report; the measuring part handles its own
            say(f"{signal.Signals(exc.signum).name}: stopped")
            return 128 + exc.signum


def untraced_env() -> list[str]:
    """`env` without any `OTEL_*` variable of this process: a bench server starts under it, so that only what the
    bench gives it (`traced_env`) traces it."""
    return ["env", *(f"-u{k}" for k in os.environ if k.startswith("OTEL_"))]


def traced_env(endpoint: str, sampler: str, arg: str = "") -> list[str]:
    """The variables of a traced bench server: its OTLP/HTTP receiver, metrics exported every 5 s, the sampler and
    its argument."""
    return [
        f"OTEL_EXPORTER_OTLP_ENDPOINT={endpoint}",
        "OTEL_METRIC_EXPORT_INTERVAL=5000",
        f"OTEL_TRACES_SAMPLER={sampler}",
        *([f"OTEL_TRACES_SAMPLER_ARG={arg}"] if arg else []),
    ]


def start_sink(python: Path, logs: Path, name: str) -> tuple[subprocess.Popen[bytes], str]:
    """A bench/otlp_sink.py process of its own for `name` (an OTLP/HTTP receiver on a free loopback port), and
    its endpoint; Skip when it does not start. Stop it with ``terminate()``: it then prints the spans it got."""
    log = logs / f"otlp_sink-{name}.log"
    proc = subprocess.Popen(
        [str(python), str(ROOT / "bench/otlp_sink.py"), str(free_port())],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=log.open("wb"),
        start_new_session=True,
    )
    assert proc.stdout is not None
    try:
        endpoint = proc.stdout.readline().decode().strip()
    except BaseException:  # a signal while it starts: it is in a session of its own, so stop it here
        proc.kill()
        raise
    if not endpoint:
        proc.kill()
        raise Skip(f"the OTLP receiver for {name} did not start: see {log}")
    return proc, endpoint


def stop_sinks(sinks: dict[str, tuple[subprocess.Popen[bytes], str]]) -> dict[str, int]:
    """Stop the receivers (after their servers flushed on SIGTERM); the spans each received."""
    spans: dict[str, int] = {}
    with signals_ignored():
        for name, (sink, _) in sinks.items():
            sink.terminate()
            try:
                out, _ = sink.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                sink.kill()
                out, _ = sink.communicate()
            words = out.decode().split()  # the endpoint was read at the start: what is left is the count
            spans[name] = int(words[-1]) if words and words[-1].isdigit() else 0
    return spans


def git_tree(ref: str, into: Path, *paths: str) -> Path:
    """`paths` of the tree at git `ref`, written under `into` (returned); Skip with git's reason when the ref is
    unknown. For the benches that set an older Baton beside this one."""
    done = subprocess.run(["git", "archive", ref, *paths], cwd=ROOT, capture_output=True, check=False)
    if done.returncode != 0:
        reason = done.stderr.decode(errors="replace").strip().splitlines()
        raise Skip(f"git cannot archive {ref!r}: {reason[0] if reason else 'no reason given'}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=done.stdout, check=True)
    return into
