"""The command line of `baton dev TARGET [--port PORT] [--no-browser]` and `baton dev [options] -- COMMAND ...`.

Bad input is one line on stderr and exit 2; Ctrl-C is exit 130 without a traceback (`run`).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from ..client.oauth.rules import may_carry_tokens
from .client_commands.args import ELICITATION, ELICITATION_HELP, PROTOCOL_HELP, OneLineError, protocol_choice

if TYPE_CHECKING:
    from .main import Commands

DEFAULT_PORT = 6280
OPTIONS = "[--port PORT] [--no-browser] [--protocol VERSION] [--elicitation MODES]"
USAGE = f"baton dev TARGET {OPTIONS} | baton dev {OPTIONS} -- COMMAND ..."


def register(commands: Commands) -> None:
    """`baton dev` and its options; the words after `--` are the stdio server's command."""
    p = commands.add_parser(
        "dev",
        help="see and drive a server's flows in the browser: baton dev FILE.py | URL | -- COMMAND",
        usage=USAGE,
        description="See and drive an MCP server's tools, resources and prompts in your browser: every round of "
        "every call, its questions answered in real forms, the raw JSON-RPC exchange. TARGET is a server file "
        "(FILE.py[:ATTR], run over stdio and restarted when a Python file in its folder changes), an http(s) URL, or "
        "`-- COMMAND ...` for any stdio server. The page listens on 127.0.0.1 only, and only the printed "
        "address (which carries this run's token) opens it.",
    )
    p.add_argument("target", nargs="?", help="FILE.py[:ATTR], module:attr, or an http(s) URL")
    p.add_argument(
        "--port",
        type=int,
        default=DEFAULT_PORT,
        help=f"the page's port on 127.0.0.1 (default {DEFAULT_PORT}; 0 picks one)",
    )
    p.add_argument("--no-browser", action="store_true", help="print the address only; do not open a browser")
    p.add_argument("--protocol", default="auto", metavar="VERSION", help=PROTOCOL_HELP)
    p.add_argument("--elicitation", default="all", choices=tuple(ELICITATION), help=ELICITATION_HELP)
    p.set_defaults(run=run, command_parser=p, takes_command=True)


def run(args: argparse.Namespace) -> int:
    """`baton dev`: the exit status."""
    import asyncio  # noqa: PLC0415 (with the page's modules)

    from ..devui.dev_target import DevTargetError, parse_target  # noqa: PLC0415 (a command loads its modules when run)
    from ..devui.run import PortTaken, bind  # noqa: PLC0415 (a command loads its modules when run)
    from ..devui.run import run as serve_page  # noqa: PLC0415

    try:
        target = parse_target(args.target, args.server_command or [])
        protocol = protocol_choice(args.protocol)
    except (DevTargetError, OneLineError) as exc:
        print(f"baton dev: {exc}", file=sys.stderr)
        return 2
    if not 0 <= args.port <= 65535:
        print(f"baton dev: --port takes 0 to 65535, not {args.port}", file=sys.stderr)
        return 2
    try:
        sock = bind(args.port)
    except PortTaken as exc:
        print(f"baton dev: {exc}; pass --port with another port, or --port 0 for any free one", file=sys.stderr)
        return 2
    auth: Any = None
    browser: Any = None
    if target.url is not None and may_carry_tokens(target.url):  # the login of `baton tools`: browser, stored tokens
        from .client_commands import oauth_setup  # noqa: PLC0415 (the client's OAuth loads for a URL only)

        auth, browser = oauth_setup.oauth(store=True)
    try:
        modes = ELICITATION[args.elicitation]
        return serve_page(
            target, sock, open_browser=not args.no_browser, auth=auth, protocol=protocol, elicitation=modes
        )
    finally:
        if browser is not None:
            asyncio.run(browser.aclose())
