"""`baton bridge URL [--protocol V] [--header K=V ...] [--no-ask] [--no-browser] [--ask-timeout S] [--no-token-store]
[--timeout S]`.

The host starts it as a stdio server; it forwards to the Streamable HTTP server at URL. A server that
answers 401 gets the browser login of `baton tools URL`, tokens in the same store, never shown to the
host. `--header K=V` adds a static header; `$NAME` or `${NAME}` in V is read from the environment, so a
key need not be written in the host's config, and no value is ever printed. Bad input is one line and
exit 2; EOF on stdin and SIGTERM exit 0, Ctrl-C 130 (protocol.md P137).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import re
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..bridge import ASK_TIMEOUT_S
from ..client.oauth.rules import may_carry_tokens
from ..client.probe import AUTO, ProtocolChoice
from ..stop_signals import STOP_SIGNALS, exit_status
from .client_commands.args import OneLineError, protocol_choice, seconds

if TYPE_CHECKING:
    from .main import Commands

CLIENT_NAME = "baton-bridge"
_VARIABLE = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))")


USAGE = "baton bridge URL [options]\n       baton bridge --serve-http PORT [options] -- COMMAND [ARG ...]"
SERVE_HTTP_ONLY = ("host", "allow_host")
URL_ONLY = ("header", "no_ask", "no_browser", "ask_timeout", "no_token_store")


def register(commands: Commands) -> None:
    """`baton bridge` and its options: those of each direction in a group of its own."""
    p = commands.add_parser(
        "bridge",
        help="serve a host over stdio, forwarding to an HTTP server, both MCP versions: baton bridge URL; "
        "or a stdio server over HTTP: baton bridge --serve-http PORT -- COMMAND",
        usage=USAGE,
        description="Serve a host over stdio and forward to the MCP server at URL (Streamable HTTP), translating "
        "between MCP 2025-11-25 and 2026-07-28 both ways, questions included. The reverse, a stdio server served "
        "over HTTP: baton bridge --serve-http PORT -- COMMAND ... See docs/bridge.md.",
    )
    p.set_defaults(run=run, command_parser=p, takes_command=True)
    p.add_argument("url", metavar="URL", nargs="?", help="the server's MCP endpoint, http(s)://...")
    p.add_argument(
        "--protocol",
        default=AUTO,
        metavar="VERSION",
        help="the MCP version to speak to the server: 2026-07-28, 2025-11-25, or auto (the default: ask it)",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        default=300.0,
        metavar="SECONDS",
        help="how long one request may wait for the server (default 300); answering questions does not count",
    )
    to_url = p.add_argument_group("baton bridge URL")
    to_url.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="K=V",
        help="a header sent with every request (repeatable); $NAME or ${NAME} in V is read from the environment",
    )
    to_url.add_argument(
        "--no-ask",
        action="store_true",
        help="decline the server's questions a host cannot show, instead of asking on a loopback page",
    )
    to_url.add_argument(
        "--no-browser",
        action="store_true",
        help="do not open a browser for such a question: only print the page's address on stderr",
    )
    to_url.add_argument(
        "--ask-timeout",
        type=seconds,
        default=ASK_TIMEOUT_S,
        metavar="SECONDS",
        help=f"how long a question waits on the page before it is cancelled (default {ASK_TIMEOUT_S:g})",
    )
    to_url.add_argument(
        "--no-token-store",
        action="store_true",
        help="keep login tokens in memory only (by default in Baton's data directory, as baton tools does)",
    )
    serve_http = p.add_argument_group(
        "baton bridge --serve-http PORT -- COMMAND",
        "serve the stdio MCP server COMMAND as a Streamable HTTP endpoint on loopback, for clients of MCP "
        "2025-11-25 and 2026-07-28, translating questions both ways",
    )
    serve_http.add_argument("--serve-http", metavar="PORT", help="the port (0: pick a free one)")
    serve_http.add_argument("--host", default="127.0.0.1", help="the address to listen on (default 127.0.0.1)")
    serve_http.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="admit this Host header besides loopback names (repeatable; * admits any); needed to listen "
        "on an address other than loopback",
    )


def _foreign(args: argparse.Namespace, dests: tuple[str, ...]) -> list[str]:
    """The options among `dests` given a value other than their default (they belong to the other direction)."""
    given = [d for d in dests if getattr(args, d) != args.command_parser.get_default(d)]
    return ["--" + d.replace("_", "-") for d in given]


def headers_of(pairs: Sequence[str], env: dict[str, str]) -> dict[str, str]:
    """`--header K=V` values, variables read from `env`; OneLineError names a bad one (never its value)."""
    headers: dict[str, str] = {}
    for pair in pairs:
        name, eq, value = pair.partition("=")
        name = name.strip()
        if not eq or not name or not re.fullmatch(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+", name):
            raise OneLineError(f"--header takes NAME=VALUE, with a header name before '=' (got {name or pair[:20]!r})")

        missing = [m.group(1) or m.group(2) for m in _VARIABLE.finditer(value) if (m.group(1) or m.group(2)) not in env]
        if missing:
            raise OneLineError(f"--header {name}: ${missing[0]} is not set in the environment")
        text = _VARIABLE.sub(lambda m: env[m.group(1) or m.group(2)], value)
        if any(c in text for c in "\r\n\0"):
            raise OneLineError(f"--header {name}: the value holds a line break or NUL")
        headers[name] = text
    return headers


async def bridge(url: str, protocol: ProtocolChoice, headers: dict[str, str], args: argparse.Namespace) -> int:
    """Serve the host on stdio until EOF or a signal; the exit status (0, or 130 after SIGINT)."""
    import asyncio  # noqa: PLC0415 (the engine loads when the bridge runs)

    from ..bridge.ask import HostAsker  # noqa: PLC0415 (the engine loads when the bridge runs)
    from ..bridge.host import HostSide, Lines  # noqa: PLC0415 (the engine loads when the bridge runs)
    from ..bridge.page import LoopbackAskPage  # noqa: PLC0415 (the engine loads when the bridge runs)
    from ..bridge.remote import Remote  # noqa: PLC0415 (the engine loads when the bridge runs)
    from ..client import Client  # noqa: PLC0415 (the engine loads when the bridge runs)
    from ..serve.stdio import open_stdio  # noqa: PLC0415 (the engine loads when the bridge runs)
    from ..server.outbound import Outbound  # noqa: PLC0415 (the engine loads when the bridge runs)
    from .client_commands import oauth_setup  # noqa: PLC0415 (the client's OAuth loads when the bridge runs)

    reader, out = await open_stdio()
    given_auth = any(k.lower() == "authorization" for k in headers)
    auth, browser = (
        (None, None) if given_auth or not may_carry_tokens(url) else oauth_setup.oauth(store=not args.no_token_store)
    )
    lines = Lines(out)
    page = None if args.no_ask else LoopbackAskPage(open_browser=not args.no_browser, timeout_s=args.ask_timeout)
    asker = HostAsker(lines.send, Outbound("bridge-"), page)
    client = Client(
        url,
        on_form=asker,
        on_url=asker,
        name=CLIENT_NAME,
        protocol=protocol,
        auth=auth,
        headers=headers,
        deadline_s=args.timeout,
        cache=False,  # the host caches as the server's ttlMs says; the bridge passes lists on as they are now
    )
    host = HostSide(Remote(client, page.ask if page is not None else None), asker, reader, lines)
    loop = asyncio.get_running_loop()
    for signum in STOP_SIGNALS:
        loop.add_signal_handler(signum, host.stop, signum)
    try:
        with contextlib.closing(out):
            await host.run()
    finally:
        for signum in STOP_SIGNALS:
            loop.remove_signal_handler(signum)
        with contextlib.suppress(Exception):
            await client.close()
        if page is not None:
            await page.close()
        if browser is not None:
            with contextlib.suppress(Exception):
                await browser.aclose()
    return exit_status(host.signal)


def run(args: argparse.Namespace) -> int:
    """`baton bridge ...`: the exit status."""
    if args.serve_http is not None:
        foreign = _foreign(args, URL_ONLY) + ([args.url] if args.url else [])
        if foreign:
            args.command_parser.error(f"unrecognized arguments with --serve-http: {' '.join(foreign)}")
        from .bridge_http import run as serve_http  # noqa: PLC0415 (uvicorn loads only for this direction)

        return serve_http(args)
    if args.url is None:
        args.command_parser.error("the following arguments are required: URL")
    foreign = _foreign(args, SERVE_HTTP_ONLY) + (["--", *args.server_command] if args.server_command else [])
    if foreign:
        args.command_parser.error(f"unrecognized arguments without --serve-http: {' '.join(foreign)}")
    try:
        if not args.url.startswith(("http://", "https://")):
            raise OneLineError(f"URL is the server's http(s) MCP endpoint, not {args.url!r}")
        protocol = protocol_choice(args.protocol)
        headers = headers_of(args.header, dict(os.environ))
    except OneLineError as exc:
        print(f"baton bridge: {exc}", file=sys.stderr)
        return 2
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="baton bridge: %(message)s")
    import asyncio  # noqa: PLC0415 (the engine loads when the bridge runs)

    try:
        return asyncio.run(bridge(args.url, protocol, headers, args))
    except KeyboardInterrupt:  # Ctrl-C before the signal handlers were set
        return 130
    except Exception as exc:  # one line, never a traceback
        print(f"baton bridge: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 1
