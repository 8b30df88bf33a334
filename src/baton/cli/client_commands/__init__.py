"""The client subcommands: `baton tools|call|resources|read|prompts|prompt`, a client from the command line.

    baton tools URL                          baton call URL TOOL [key=value ...]
    baton resources URL                      baton read URL URI
    baton prompts URL                        baton prompt URL NAME [key=value ...]

Each takes `--json` (the MCP result, for scripts), `--protocol 2026-07-28|2025-11-25|auto` and `--help`.
The server is a URL, or the command that starts a stdio server after `--`
(`baton call my_tool x=1 -- baton serve app.py --stdio`).
Questions the server asks are answered at the terminal through the terminal renderer, in both eras
(the client probes which one it talks to, protocol.md P34). `args` reads the words, `commands` runs
them, `show` prints the results.
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import os
import sys
from typing import TYPE_CHECKING

from .args import COMMANDS, CommandLineError, OneLineError, add_parser, parse

if TYPE_CHECKING:
    from ...protocol.errors import McpError
    from ..main import Commands

SUMMARIES = {
    "tools": "list a server's tools: baton tools URL | baton tools -- COMMAND...",
    "call": "call a tool: baton call URL TOOL [key=value ...] | baton call TOOL ... -- COMMAND...",
    "resources": "list a server's resources: baton resources URL | baton resources -- COMMAND...",
    "read": "read a resource: baton read URL URI | baton read URI -- COMMAND...",
    "prompts": "list a server's prompts: baton prompts URL | baton prompts -- COMMAND...",
    "prompt": "get a prompt: baton prompt URL NAME [key=value ...] | baton prompt NAME ... -- COMMAND...",
    "skills": "list a server's skills, or show one: baton skills URL [NAME] | baton skills [NAME] -- COMMAND...",
}
"""Each client command's line in `baton --help`."""


def register(commands: Commands) -> None:
    """The client commands, one subparser each; their words may come among their options (`intermixed`)."""
    for name, spec in COMMANDS.items():
        p = add_parser(commands, spec, SUMMARIES[name])
        p.set_defaults(run=run, command_parser=p, takes_command=True, intermixed=True)


def run(args: argparse.Namespace) -> int:
    """Run one client command; the exit status."""
    # The client loads here, not with the parser: `baton serve` and the other commands never pay for it.
    import asyncio  # noqa: PLC0415

    from ...client import ClientError  # noqa: PLC0415
    from ...client.http11 import HttpError  # noqa: PLC0415
    from ...protocol.errors import McpError  # noqa: PLC0415
    from .commands import RUN, NotOffered  # noqa: PLC0415

    command: str = args.command
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    try:
        invocation = parse(COMMANDS[command], args)
        return asyncio.run(RUN[command](invocation))
    except OneLineError as exc:  # a bad --protocol, a question with no answer and no terminal
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 2
    except CommandLineError as exc:
        args.command_parser.print_usage(sys.stderr)
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 2
    except NotOffered as exc:
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 1
    except McpError as exc:
        print(f"baton {command}: the server answered error {exc.code}: {exc.message}{_meaning(exc)}", file=sys.stderr)
        return 1
    except ClientError as exc:
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:  # our reader left (`baton tools URL | head`): stop quietly, as other tools do
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - the interpreter flushes it at exit
        return 141
    except HttpError as exc:  # the server answered, but not as an MCP endpoint does (protocol.md P91)
        where = invocation.target if isinstance(invocation.target, str) else "the server"
        print(f"baton {command}: {where}: {exc}", file=sys.stderr)
        return 1
    except (OSError, ConnectionError) as exc:
        print(f"baton {command}: cannot reach the server: {exc or type(exc).__name__}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:  # Ctrl-C outside a question: the requests were cancelled on the way out
        print(file=sys.stderr)
        return 130


def _meaning(exc: McpError) -> str:
    """What an error means to the person, where its message alone does not say (protocol.md P122)."""
    from ...client.restart import state_refused  # noqa: PLC0415 (with the client, in `run`)

    if state_refused(exc):  # the client already started the call over once
        return (
            " (refused again after the call started over: the answers came too late again, or the server "
            "cannot read its own state, e.g. instances that do not share a key; run the command again, and if "
            "it keeps failing, the server's log says why)"
        )
    return ""


__all__ = ["COMMANDS", "register", "run"]
