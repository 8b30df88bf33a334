"""`baton serve TARGET [--http HOST:PORT | --stdio] [--workers N] [--reload] [--auth-issuer URL --auth-audience URL]`:
serve a `Server` over Streamable HTTP or stdio (`baton.serve`), here its command line and worker processes."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..protocol.hosts import is_loopback
from ..targets import split_target
from ..telemetry.logs import DEFAULT_LEVEL, FORMATS, LOG_FORMAT_ENV, log_format, uvicorn_config
from ..telemetry.logs import configure as configure_logs
from ..telemetry.logs import line as stderr_line
from .client_commands.args import seconds

if TYPE_CHECKING:
    from ..server.core import Server
    from .main import Commands

# The server and its transports load when `baton serve` runs, not when `baton` parses a command line: every
# other command starts without them (tests/project/test_startup_imports.py).

ENV_TARGET = "BATON_SERVE_TARGET"
ENV_APP_OPTIONS = "BATON_SERVE_HOSTS"
ENV_AUTH = "BATON_SERVE_AUTH"  # --auth-* for the worker processes, as JSON
ENV_LOG_LEVEL = "BATON_SERVE_LOG_LEVEL"  # --log-level for the worker processes (the format: $BATON_LOG_FORMAT)
ENV_ASK_TIMEOUT = "BATON_SERVE_ASK_TIMEOUT"  # --ask-timeout for the worker processes
ENV_RESUME_WINDOW = "BATON_SERVE_RESUME_WINDOW"  # --resume-window for the worker processes
ENV_RELOAD = "BATON_SERVE_RELOAD"  # set for the process `--reload` restarts: it runs the start-up checks itself
TEXT_LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
ENV_AUTH_CLIENT_ID = "BATON_AUTH_CLIENT_ID"
ENV_AUTH_CLIENT_SECRET = "BATON_AUTH_CLIENT_SECRET"  # never a flag: argv is visible to every local user


def _worker_app() -> Any:
    """uvicorn factory for `--workers N`: each worker process loads the target itself, and logs as the parent
    was told to (`--log-level`, `--log-format`)."""
    from ..serve.http import instance_header_value  # noqa: PLC0415 (the server loads with the command that serves it)
    from ..serve.run import ready, telemetry  # noqa: PLC0415 (likewise)
    from ..serve.target import TargetError, load_server  # noqa: PLC0415 (likewise)

    configure_logs(os.environ.get(ENV_LOG_LEVEL), log_format(None), TEXT_LOG_FORMAT)
    try:  # SystemExit: the worker process ends printing only the message (what to fix), no traceback
        server = load_server(os.environ[ENV_TARGET])
    except TargetError as exc:
        return _unloadable(f"baton serve: {exc}")
    if ENV_RELOAD in os.environ:  # an edit may break what the first start checked
        refusal = ready(server, "http")
        if refusal:
            return _unloadable(f"baton serve: {refusal}")
    if ENV_ASK_TIMEOUT in os.environ:
        server.settings.ask_timeout_s = float(os.environ[ENV_ASK_TIMEOUT])
    if ENV_RESUME_WINDOW in os.environ:
        server.settings.resume_window_s = float(os.environ[ENV_RESUME_WINDOW])
    options = os.environ.get(ENV_AUTH)
    if options:
        problem = _protect(server, json.loads(options))
        if problem:
            raise SystemExit(f"baton serve: {problem}")
    telemetry(server, worker=True)  # each worker its own exporters (they do not survive a fork)
    hosts = os.environ.get(ENV_APP_OPTIONS)
    instance = instance_header_value(worker=True)  # `$BATON_INSTANCE:pid`, when named: no two processes alike
    return server.asgi(allowed_hosts=hosts.split(",") if hosts else None, instance=instance)


def _unloadable(message: str) -> Any:
    """A file that does not load: under `--reload`, the message on stderr and an app that answers 503 at
    once until the next save (protocol.md P126); a worker process ends with the message."""
    from ..serve.unloaded import unloaded_app  # noqa: PLC0415 (the server loads with the command that serves it)

    if ENV_RELOAD not in os.environ:
        raise SystemExit(message)
    print(message, file=sys.stderr, flush=True)
    return unloaded_app


def _auth_options(args: argparse.Namespace) -> dict[str, Any] | None:
    """The --auth-* options as one dict (for this process and the workers), or None without --auth-issuer."""
    if not args.auth_issuer:
        return None
    return {
        "issuer": args.auth_issuer,
        "audience": args.auth_audience,
        "scopes": args.auth_scopes or "",
        "introspection": bool(args.auth_introspection),
    }


def _protect(server: Server, options: dict[str, Any]) -> str | None:
    """Protect `server` with OAuth as --auth-issuer/--auth-audience say (discovering the issuer): why not, or None."""
    from ..auth import DiscoveryError, OAuthResource  # noqa: PLC0415 (JWT and JWKS code loads only with --auth-issuer)
    from ..server.startup import ConfigurationError  # noqa: PLC0415 (the server loads with the command that serves it)

    if not options.get("audience"):
        return "--auth-issuer needs --auth-audience URL: this server's MCP endpoint, the audience of its tokens"
    client = None
    if options.get("introspection"):
        client_id, secret = os.environ.get(ENV_AUTH_CLIENT_ID), os.environ.get(ENV_AUTH_CLIENT_SECRET)
        if not client_id or not secret:
            who = f"${ENV_AUTH_CLIENT_ID} and ${ENV_AUTH_CLIENT_SECRET}"
            return f"--auth-introspection needs {who} (Baton's client at the issuer)"
        client = (client_id, secret)
    try:
        auth = OAuthResource.from_issuer(
            options["issuer"],
            resource=options["audience"],
            scopes=options.get("scopes") or None,
            introspection_client=client,
        )
        server.use_auth(auth)
    except (DiscoveryError, ValueError, ConfigurationError) as exc:
        return str(exc)
    return None


def serve(args: argparse.Namespace) -> int:
    from .. import web  # noqa: PLC0415 (the server and its transports load with the command that serves it)
    from ..serve import run as engine  # noqa: PLC0415 (likewise)
    from ..serve.stdio import serve_stdio  # noqa: PLC0415 (likewise)
    from ..serve.target import TargetError, load_server  # noqa: PLC0415 (likewise)

    fmt = log_format(getattr(args, "log_format", None))  # the flag, else $BATON_LOG_FORMAT, else text

    def refuse(message: str) -> int:
        return engine.refuse(message, fmt)

    try:
        server = load_server(args.target)
    except TargetError as exc:
        return refuse(str(exc))
    if args.ask_timeout is not None:  # protocol.md P95
        server.settings.ask_timeout_s = args.ask_timeout
    if args.resume_window is not None:  # protocol.md P111
        server.settings.resume_window_s = args.resume_window
    auth_options = _auth_options(args)
    if auth_options is None and (args.auth_audience or args.auth_scopes or args.auth_introspection):
        return refuse("--auth-audience, --auth-scopes and --auth-introspection need --auth-issuer URL")
    if auth_options is not None and args.stdio:  # stdio keeps the OS user (protocol.md P37)
        note = "note: --auth-* options apply to HTTP only; on stdio the caller is the OS user"
        print(stderr_line(note, "WARNING", fmt), file=sys.stderr)
    elif auth_options is not None:
        problem = _protect(server, auth_options)
        if problem:
            return refuse(problem)
    if args.workers <= 1 or args.stdio:
        engine.telemetry(server)
    if args.stdio and args.reload:
        return refuse(
            "--reload is for HTTP: over stdio the host starts and owns the server process, so restart it from "
            "the host (or use baton dev FILE, which restarts a stdio server when you save)"
        )
    if args.stdio:
        refusal = engine.ready(server, "stdio")
        if refusal:
            return refuse(refusal)
        engine.announce(server, "on stdio", fmt, quiet=args.quiet, brief=True)  # one line: a host shows it in its log
        os.environ[LOG_FORMAT_ENV] = fmt  # for serve_stdio's own lines (a lifespan that fails, P132)
        return serve_stdio(server)  # 0 at EOF or SIGTERM, 130 after SIGINT (protocol.md P98)
    host, _, port_text = args.http.rpartition(":")
    if not host or not port_text.isdigit():
        return refuse(f"--http takes HOST:PORT, not {args.http!r}")
    host = host.strip("[]")
    refusal = engine.ready(server, "http")
    if refusal:
        return refuse(refusal)
    if args.workers > 1 and server.runtime.key_ring.ephemeral:
        return refuse(
            "--workers needs keys every worker shares, but this server uses a per-process key; "
            "set BATON_STATE_KEYS or use the default key file (do not pass KeyRing.ephemeral_key())"
        )
    taken = engine.can_listen(host, int(port_text))
    if taken:
        return refuse(f"cannot listen on {args.http}: {taken}")
    if args.reload and args.workers > 1:
        return refuse("--reload restarts one process; it cannot be used with --workers")
    workers = f" ({args.workers} worker processes)" if args.workers > 1 else ""
    workers += f" (restarted when a file under {_watched(args.target)} changes)" if args.reload else ""
    engine.announce(server, engine.where(host, int(port_text)) + workers, fmt, quiet=args.quiet, workers=args.workers)
    allowed = args.allow_host or None
    if not is_loopback(host) and allowed is None:
        logging.getLogger("baton").warning(
            "serving on %s: only loopback Host headers are admitted; pass --allow-host NAME for others", host
        )
    level = args.log_level or DEFAULT_LEVEL  # uvicorn's own lines
    if args.workers > 1 or args.reload:
        os.environ[ENV_TARGET] = args.target
        if allowed:
            os.environ[ENV_APP_OPTIONS] = ",".join(allowed)
        if auth_options is not None:
            os.environ[ENV_AUTH] = json.dumps(auth_options)
        if args.log_level:
            os.environ[ENV_LOG_LEVEL] = args.log_level
        if args.ask_timeout is not None:
            os.environ[ENV_ASK_TIMEOUT] = repr(args.ask_timeout)
        if args.resume_window is not None:
            os.environ[ENV_RESUME_WINDOW] = repr(args.resume_window)
        os.environ[LOG_FORMAT_ENV] = fmt
        if args.reload:  # uvicorn's reloader, with watchfiles: a new process on each change, same port
            os.environ[ENV_RELOAD] = "1"
        try:
            return web.run(
                "baton.cli.serve:_worker_app",
                host,
                int(port_text),
                workers=args.workers,
                worker_healthcheck_s=engine.WORKER_HEALTHCHECK_S,  # protocol.md P190
                reload_dirs=[_watched(args.target)] if args.reload else None,
                log_level=level,
                log_config=uvicorn_config(level) if fmt == "json" else None,
                graceful_s=engine.GRACEFUL_SHUTDOWN_S,
            )
        except web.PortTaken as exc:
            return refuse(str(exc))
    return engine.serve_http(server, host, int(port_text), allowed_hosts=allowed, log_level=level, fmt=fmt)


def _watched(target: str) -> str:
    """The folder `--reload` watches: the server file's, or the working directory for `module:attr`."""
    spec = split_target(target)[0]
    return str(Path(spec).resolve().parent) if spec.endswith(".py") or os.sep in spec else os.getcwd()


def register(commands: Commands) -> None:
    """`baton serve` and its options."""
    p = commands.add_parser("serve", help="serve a Server over Streamable HTTP or stdio")
    p.set_defaults(run=run, command_parser=p)
    p.add_argument("target", help="path/to/file.py[:attr] or module:attr")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument(
        "--http",
        default="127.0.0.1:8000",
        metavar="HOST:PORT",
        help="serve Streamable HTTP at http://HOST:PORT/mcp (default 127.0.0.1:8000)",
    )
    mode.add_argument("--stdio", action="store_true", help="serve newline-delimited JSON on stdin/stdout")
    p.add_argument("--workers", type=int, default=1, help="worker processes for HTTP (they share the key file)")
    p.add_argument(
        "--reload",
        action="store_true",
        help="HTTP only: restart the server, on the same port, when a file under its folder changes. Not for "
        "--stdio: there the host owns the process (restart it from the host, or use baton dev FILE)",
    )
    p.add_argument(
        "--quiet", action="store_true", help="no start-up lines on stderr (on stdio they are one line already)"
    )
    p.add_argument(
        "--allow-host",
        action="append",
        metavar="NAME",
        help="admit this Host header besides loopback names (repeatable; * admits any)",
    )
    p.add_argument(
        "--ask-timeout",
        type=seconds,
        metavar="SECONDS",
        help="how long a 2025-11-25 request waits for the answer to a question before reading it as cancelled "
        "(default: the server's ask_timeout_s, 600)",
    )
    p.add_argument(
        "--resume-window",
        type=seconds,
        metavar="SECONDS",
        help="how long a 2025-11-25 question whose stream the client closed waits for the client to resume the "
        "stream (GET with Last-Event-ID) before it reads as cancelled (default: the server's "
        "resume_window_s, 30)",
    )
    p.add_argument(
        "--log-level",
        choices=["debug", "info", "warning", "error"],
        help="what the server writes to stderr, from this level up (Baton's, uvicorn's and your handlers' "
        "lines). Default: warnings and errors, and your handlers' ctx.log lines from info up",
    )
    p.add_argument(
        "--log-format",
        choices=FORMATS,
        help=f"stderr log lines as text or JSON objects (default ${LOG_FORMAT_ENV}, else text)",
    )
    auth = p.add_argument_group(
        "OAuth (HTTP only)",
        "protect the server as an OAuth 2.1 resource: tokens from --auth-issuer, minted for --auth-audience, are "
        "required; the issuer's metadata (RFC 8414, else OpenID Connect Discovery) gives its jwks_uri; clients "
        "find the issuer at /.well-known/oauth-protected-resource/<path>. See docs/security.md.",
    )
    auth.add_argument("--auth-issuer", metavar="URL", help="the authorization server's issuer identifier")
    auth.add_argument(
        "--auth-audience", metavar="URL", help="this server's MCP endpoint URL, e.g. https://mcp.example.com/mcp"
    )
    auth.add_argument("--auth-scopes", metavar='"A B"', help="scopes every request needs (space-separated)")
    auth.add_argument(
        "--auth-introspection",
        action="store_true",
        help=f"check opaque tokens at the issuer's introspection endpoint as ${ENV_AUTH_CLIENT_ID} / "
        f"${ENV_AUTH_CLIENT_SECRET}",
    )


def run(args: argparse.Namespace) -> int:
    """`baton serve`: the exit status."""
    try:
        fmt = log_format(getattr(args, "log_format", None))
    except ValueError as exc:
        args.command_parser.error(str(exc))
    configure_logs(args.log_level, fmt, TEXT_LOG_FORMAT)
    try:
        return serve(args)
    except KeyboardInterrupt:  # Ctrl-C before serving began (loading the target, the checks): no traceback
        return 130
