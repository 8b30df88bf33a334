"""The words of a client subcommand: its parser (`--help`, `--json`), the server it names, and `key=value` pairs.

A server is an http(s) URL, the first word, or the command that starts a stdio server, after `--`
at the end: `baton call my_tool x=1 -- baton serve app.py --stdio`. Options (`--json`, `--help`)
come before the `--`; everything after it belongs to the server's command.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

from ...client.probe import AUTO, CHOICES, ProtocolChoice

if TYPE_CHECKING:
    from ..main import Commands


class CommandLineError(Exception):
    """Command-line input that cannot be used; the message says how to fix it."""


class OneLineError(CommandLineError):
    """Input wrong in one named place: the message alone, one line, exit 2 (no usage block)."""


@dataclass(frozen=True, slots=True)
class Command:
    """One client subcommand: what it does, the words it needs after the server, whether it takes key=value."""

    name: str
    summary: str
    needs: tuple[str, ...] = ()
    pairs: bool = False
    optional: tuple[str, ...] = ()  # words after `needs` that may be left out

    def usage(self) -> str:
        extra = [f"[{word}]" for word in self.optional] + (["[key=value ...]"] if self.pairs else [])
        words = " ".join((*self.needs, *extra))
        words = f" {words}" if words else ""
        return f"baton {self.name} [--json] URL{words}\n       baton {self.name} [--json]{words} -- COMMAND ..."


COMMANDS = {
    c.name: c
    for c in (
        Command("tools", "list a server's tools"),
        Command("call", "call a tool, answering its questions at the terminal", ("TOOL",), pairs=True),
        Command("resources", "list a server's resources and resource templates"),
        Command("read", "read a resource, answering its questions at the terminal", ("URI",)),
        Command("prompts", "list a server's prompts"),
        Command("prompt", "get a prompt, answering its questions at the terminal", ("NAME",), pairs=True),
        Command("skills", "list a server's skills, or show one (its SKILL.md, verified) by NAME", optional=("NAME",)),
    )
}
TARGET_HELP = """\
The server is an http(s) URL (the first word), or the command that starts a stdio server, given last,
after --. Options come before the --. Servers of 2026-07-28 and of 2025-11-25 both work: by default
(--protocol auto) the client asks the server which it speaks and uses 2026-07-28 when it can.

exit status: 0 done; 1 the server refused, failed or could not be reached (or the tool reported an
error); 2 the command line cannot be used (or a question has no answer and no terminal); 130 Ctrl-C."""
PAIRS_HELP = {
    "call": "key=value: a tool argument; the value stays a string where the tool's schema says string, "
    "and is read as JSON otherwise (n=3, flags='[\"a\"]').",
    "prompt": "key=value: a prompt argument (prompt arguments are strings).",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class Invocation:
    """A parsed command line: the server, the words after it (`needs`, then key=value pairs), `--json`."""

    target: str | list[str]
    words: list[str]
    json: bool
    token_store: bool = True
    timeout: float | None = None  # --timeout: the client's deadline_s
    answers: tuple[str, ...] = ()  # --answer KEY=JSON, in order
    answers_file: str | None = None
    protocol: ProtocolChoice = AUTO  # --protocol: the era, or auto (probe)
    elicitation: tuple[str, ...] = ("form", "url")  # --elicitation: the modes declared, as a host would
    login: str = "browser"  # --login: the browser, or a login with no person from the environment (P195, P196)


def add_parser(commands: Commands, command: Command, summary: str) -> argparse.ArgumentParser:
    """The subparser of one client command (`summary`: its line in `baton --help`)."""
    p = commands.add_parser(
        command.name,
        help=summary,
        usage=command.usage(),
        description=f"baton {command.name}: {command.summary}. {PAIRS_HELP.get(command.name, '')}".strip(),
        epilog=TARGET_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("words", nargs="*", metavar="URL " + " ".join(command.needs), help=argparse.SUPPRESS)
    p.add_argument("--json", action="store_true", help="print the MCP result as JSON (lists: every page merged)")
    p.add_argument(
        "--no-token-store",
        action="store_true",
        help="keep login tokens in memory only (by default a server that asks for a login gets its tokens kept in "
        "a file only you can read, in Baton's data directory)",
    )
    p.add_argument(
        "--login",
        choices=("browser", "client-credentials", "workload-identity", "enterprise"),
        default="browser",
        help="how to log in when the server asks (default: the browser). With no person, from the environment: "
        "client-credentials ($BATON_CLIENT_ID with $BATON_CLIENT_SECRET or the PEM key $BATON_CLIENT_KEY_FILE); "
        "workload-identity (the platform's token file $BATON_WORKLOAD_TOKEN_FILE); enterprise ($BATON_ID_TOKEN_FILE "
        "exchanged at $BATON_IDP_TOKEN_ENDPOINT as $BATON_IDP_CLIENT_ID, then the $BATON_CLIENT_ID client)",
    )
    p.add_argument(
        "--timeout",
        type=seconds,
        metavar="SECONDS",
        help="how long to wait for the server (default 300); time spent answering its questions does not count",
    )
    p.add_argument("--protocol", default=AUTO, metavar="VERSION", help=PROTOCOL_HELP)
    if command.name in ("call", "read", "prompt"):
        p.add_argument(
            "--answer",
            action="append",
            default=[],
            metavar="KEY=JSON",
            help="answer the question asked under KEY without a terminal: the form's content as a JSON object, or "
            "accept, decline, cancel; '*' answers any question (repeatable)",
        )
        p.add_argument("--answers", metavar="FILE", help="answers as a JSON object of KEY -> answer")
        p.add_argument(
            "--elicitation",
            default="all",
            choices=tuple(ELICITATION),
            help=ELICITATION_HELP,
        )
    return p


ELICITATION: dict[str, tuple[str, ...]] = {"none": (), "form": ("form",), "url": ("url",), "all": ("form", "url")}
"""`--elicitation`: the elicitation modes the client declares (protocol.md P138)."""
ELICITATION_HELP = (
    "the questions this client declares it can show, to see what a host without them gets: none, form, url, "
    "or all (the default)"
)

PROTOCOL_HELP = (
    "the MCP version to speak: 2026-07-28, 2025-11-25, or auto (the default: ask the server, and use "
    "2026-07-28 when it offers it). Pin 2025-11-25 for a server that offers 2026-07-28 but whose tools ask "
    "their questions during the call (ctx.elicit in mcp 2.x and FastMCP), which only works in a 2025-11-25 session"
)


def protocol_choice(text: str) -> ProtocolChoice:
    """The value of `--protocol` (every client command and `baton dev`, protocol.md P121), or OneLineError."""
    if text not in CHOICES:
        raise OneLineError(f"--protocol takes {', '.join(c for c in CHOICES if c != AUTO)} or {AUTO}, not {text!r}")
    return cast("ProtocolChoice", text)


def seconds(text: str) -> float:
    """A positive number of seconds, for argparse (`--timeout`, and `baton serve --ask-timeout`)."""
    try:
        value = float(text)
    except ValueError:
        value = 0.0
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a positive number of seconds, not {text!r}")
    return value


def parse(command: Command, args: argparse.Namespace) -> Invocation:
    """The invocation, or CommandLineError: the words argparse left (`args.extras`, options among them being
    `args.unknown`) join the words it read, in their order, and `args.server_command` is the stdio server's."""
    words: list[str] = args.given
    server_command: list[str] | None = args.server_command
    if server_command is not None and not server_command:
        raise CommandLineError("nothing after --: give the command that starts the stdio server")
    unknown: list[str] = args.unknown
    rest: list[str] = [*args.words, *args.extras]
    target: str | list[str]
    if server_command is None and rest and not rest[0].startswith(("http://", "https://")):
        raise CommandLineError(_missing_dashes(command, words, rest[0]))
    if unknown:
        raise CommandLineError(f"unrecognized arguments: {' '.join(unknown)}")
    if server_command is not None:
        target = server_command
    elif not rest:
        raise CommandLineError("give the server as an http(s) URL, or after -- as a command that starts a stdio server")
    else:
        target = rest.pop(0)
    if len(rest) < len(command.needs):
        missing = " ".join(command.needs[len(rest) :])
        raise CommandLineError(f"missing {missing}: {command.usage().splitlines()[0]}")
    most = len(command.needs) + len(command.optional)
    if not command.pairs and len(rest) > most:
        raise CommandLineError(f"unexpected words: {' '.join(rest[most:])}")
    return Invocation(
        target=target,
        words=rest,
        json=args.json,
        token_store=not args.no_token_store,
        timeout=args.timeout,
        answers=tuple(getattr(args, "answer", ())),
        answers_file=getattr(args, "answers", None),
        protocol=protocol_choice(args.protocol),
        elicitation=ELICITATION[getattr(args, "elicitation", "all")],
        login=args.login,
    )


def _missing_dashes(command: Command, words: list[str], first: str) -> str:
    """The hint for a first word that is not a URL: most likely a stdio command given without `--`."""
    problem = f"{first!r} is not an http(s) URL"
    if command.needs or command.pairs or command.optional:
        return f"{problem}: give the server's URL first, or the command that starts a stdio server last, after --"
    cut = words.index(first)
    suggested = " ".join(["baton", command.name, *words[:cut], "--", *words[cut:]])
    return f"{problem}; to start a stdio server, put -- before its command: {suggested}"


def split_pairs(pairs: Sequence[str]) -> list[tuple[str, str]]:
    """`key=value` words as (key, text); CommandLineError for a word without `=` or without a key."""
    out = []
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise CommandLineError(f"arguments are written key=value, not {pair!r}")
        out.append((key, text))
    return out


def parse_arguments(pairs: Sequence[str], schema: dict[str, Any]) -> dict[str, Any]:
    """`key=value` pairs as tool arguments: strings stay strings where the schema says so, else JSON."""
    props = schema.get("properties") or {}
    out: dict[str, Any] = {}
    for key, text in split_pairs(pairs):
        spec = props.get(key)
        if isinstance(spec, dict) and spec.get("type") == "string":
            out[key] = text
            continue
        try:
            out[key] = json.loads(text)
        except json.JSONDecodeError:
            out[key] = text
    return out
