"""`baton`: one argparse parser whose subparsers are the commands, each added by its own module (`register`)
and run by the function it sets as `run`. Nothing reads the words before argparse does, but one rule
every command shares: the words after the first `--` are the command that starts a stdio server
(`baton dev -- COMMAND`, `baton call TOOL -- COMMAND`, `baton bridge --serve-http PORT -- COMMAND`), handed
to the command as `args.server_command`; a command that starts none refuses them as argparse would (protocol.md P222).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from . import bridge, client_commands, dev, install, keys, publish, serve

if TYPE_CHECKING:
    Commands = argparse._SubParsersAction[argparse.ArgumentParser]

REGISTER: tuple[Callable[[Commands], None], ...] = (
    serve.register,
    install.register,
    bridge.register,
    dev.register,
    keys.register,
    publish.register,
    client_commands.register,
)
"""Every command, in the order `baton --help` lists them."""
_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")


def parser() -> argparse.ArgumentParser:
    """The `baton` parser: one subparser per command."""
    top = argparse.ArgumentParser(
        prog="baton", description="MCP servers and clients: stateless 2026-07-28, and 2025-11-25 sessions."
    )
    top.set_defaults(takes_command=False, intermixed=False)  # what a command's own set_defaults may change
    commands = top.add_subparsers(dest="command", required=True)
    for register in REGISTER:
        register(commands)
    return top


def main(argv: list[str] | None = None) -> int:
    """Run the command `argv` (default: this process's arguments) names; its exit status."""
    words = list(sys.argv[1:] if argv is None else argv)
    server_command = words[words.index("--") + 1 :] if "--" in words else None
    head = words[: words.index("--")] if "--" in words else words
    try:
        args, extras = parser().parse_known_args(head)
        command: argparse.ArgumentParser = args.command_parser
        if server_command and not args.takes_command:
            command.error(f"unrecognized arguments: -- {' '.join(server_command)}")
        args.server_command = server_command
        args.given = head[1:]  # the words after the command's name, before any `--`
        args.extras = [word for word in extras if not word.startswith("-") or _NEGATIVE_NUMBER.match(word)]
        args.unknown = [word for word in extras if word not in args.extras]
        if extras and not args.intermixed:  # only the client commands take words among their options
            command.error(f"unrecognized arguments: {' '.join(extras)}")
        status: int = args.run(args)
    except SystemExit as exc:  # --help (0) or a malformed command line (2), printed by argparse
        if isinstance(exc.code, int):
            return exc.code
        raise  # a message to print as the process ends
    return status
