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

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence

from ...client import ClientError
from ...client.http11 import HttpError
from ...client.restart import state_refused
from ...protocol.errors import McpError
from .args import COMMANDS, CommandLineError, OneLineError, parse, parser
from .commands import RUN, NotOffered


def run(command: str, argv: Sequence[str]) -> int:
    """Run one client subcommand with the words after its name; the exit status."""
    spec = COMMANDS[command]
    try:
        invocation = parse(spec, argv)
        return asyncio.run(RUN[command](invocation))
    except SystemExit as exc:  # --help (0) or a malformed option (2), printed by argparse
        return exc.code if isinstance(exc.code, int) else 2
    except OneLineError as exc:  # a bad --protocol, a question with no answer and no terminal
        print(f"baton {command}: {exc}", file=sys.stderr)
        return 2
    except CommandLineError as exc:
        parser(spec).print_usage(sys.stderr)
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
    if state_refused(exc):  # the client already started the call over once
        return (
            " (refused again after the call started over: the answers came too late again, or the server "
            "cannot read its own state, e.g. instances that do not share a key; run the command again, and if "
            "it keeps failing, the server's log says why)"
        )
    return ""


__all__ = ["COMMANDS", "run"]
