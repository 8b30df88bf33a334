"""`baton install HOST TARGET [--name NAME] [--env KEY=VALUE ...] [--env-file FILE] [--workspace DIR] [--dry-run]
[--bridge [--header NAME=$VAR ...]]`.

The entry starts the server from any working directory and PATH: this environment's Python by its
absolute path, `-m baton serve` and the server file's absolute path, `--stdio --quiet`, and the `--env`
values (an `--env-file` first, `--env` over it). Before anything is written the server is loaded and its
start-up checks are run as the host will run them, with those variables and not this shell's
(`baton.install.check`): a server that would refuse to start in the host (a `ctx.secret` tool without
`BATON_PUBLIC_URL`, an unsupported parameter) is not installed, and the message says what is missing.
A URL target is written as a URL entry where the host's file supports one; with `--bridge`, and by
default for Claude Desktop, whose file takes none, as a stdio entry running `baton bridge URL`
(`bridged`). Values from `--env` are never
printed: a dry run, `mcp-json` and the `claude mcp add` line show `${KEY}` in their place. The file is
read, merged and written by `config_file` and `safe_file`.
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from ..install import check, config_file, safe_file
from ..install.bridged import bridge_entry
from ..install.host_apps import HOSTS, Entry, HostName, InstallError, entry_json, servers_key
from ..install.host_apps import config_file as host_file
from ..targets import split_target

if TYPE_CHECKING:
    from .main import Commands

USAGE = (
    "baton install {claude-desktop,claude-code,cursor,vscode,mcp-json} TARGET [--name NAME] "
    "[--env KEY=VALUE ...] [--env-file FILE] [--workspace DIR] [--dry-run] [--bridge [--header NAME=$VAR ...]]"
)


def register(commands: Commands) -> None:
    """`baton install` and its options."""
    p = commands.add_parser(
        "install",
        help="put a server into a host: baton install claude-desktop|claude-code|cursor|vscode|mcp-json FILE",
        usage=USAGE,
        description="Put a Baton server into an MCP host's configuration, so that the host starts it (or, for a "
        "URL, connects to it). The server's start-up checks run first: nothing is written for a server that "
        "would not start in the host. Other entries of the file are kept; the old file is kept beside it as "
        "FILE.bak. See docs/hosts.md.",
    )
    p.add_argument("host", choices=HOSTS, metavar="HOST", help=f"one of {', '.join(HOSTS)}")
    p.add_argument("target", help="FILE.py[:ATTR] (run over stdio by the host) or an http(s) URL")
    p.add_argument("--name", help="the server's name in the host (default: the Server's name, or the URL's host)")
    p.add_argument("--env", action="append", default=[], metavar="KEY=VALUE", help="a variable for the server")
    p.add_argument("--env-file", type=Path, metavar="FILE", help="variables for the server, KEY=VALUE lines")
    p.add_argument("--workspace", type=Path, metavar="DIR", help="cursor and vscode: this project's file")
    p.add_argument("--dry-run", action="store_true", help="print what would change; write nothing")
    p.add_argument(
        "--bridge",
        action="store_true",
        help="for a URL: a stdio entry that runs baton bridge URL (both MCP versions, questions translated); "
        "the default for claude-desktop, whose file takes no URL",
    )
    p.add_argument(
        "--header",
        action="append",
        default=[],
        metavar="NAME=$VAR",
        help="with a bridge: a header it sends, its value read from the variable VAR when it starts (repeatable)",
    )
    p.set_defaults(run=run, command_parser=p)


def run(args: argparse.Namespace) -> int:
    """`baton install`: the exit status."""
    try:
        return install(args)
    except InstallError as exc:
        print(f"baton install: {exc}", file=sys.stderr)
        return exc.status


def install(args: argparse.Namespace) -> int:
    host: HostName = args.host
    env = _variables(args.env_file, args.env)
    if args.workspace is not None and host not in ("cursor", "vscode"):
        raise InstallError("--workspace is for cursor and vscode")
    if args.target.startswith(("http://", "https://")):
        if args.bridge or host == "claude-desktop":  # Claude Desktop's file starts stdio servers only (P159)
            entry = bridge_entry(args.target, args.header, env)
        elif env or args.header:
            raise InstallError(
                "--env, --env-file and --header are for a server the host starts; a URL server has its own "
                "(add --bridge to run baton bridge URL, which takes them)"
            )
        else:
            entry = Entry(url=args.target)
        name = args.name or _url_name(args.target)
    else:
        if args.bridge or args.header:
            raise InstallError("--bridge and --header are for an http(s) URL target")
        path, attr, server_name = _checked(args.target, env)
        entry = Entry(
            command=sys.executable,
            args=("-m", "baton", "serve", f"{path}{attr}", "--stdio", "--quiet"),
            env=tuple(env.items()),
        )
        name = args.name or server_name
    if host == "mcp-json":
        print(json.dumps({"mcpServers": {name: entry_json(host, entry, mask=True)}}, indent=2))
        if env:
            print(f"note: put the values of {', '.join(env)} where it says ${{...}}", file=sys.stderr)
        return 0
    if host == "claude-code":
        return _claude_code(name, entry, dry_run=args.dry_run)
    workspace = args.workspace.resolve() if args.workspace is not None else None
    named = host_file(host, workspace)
    path = safe_file.destination(named, workspace)
    shown = json.dumps({name: entry_json(host, entry, mask=True)}, indent=2)
    if args.dry_run:
        config, _ = config_file.parse(path, safe_file.read(path), comments=host == "vscode")
        _, replaced = config_file.put(path, config, servers_key(host), name, entry_json(host, entry))
        print(f"would {'replace' if replaced else 'add'} {name!r} in {named}:\n{shown}")
        return 0
    with safe_file.locked(path):  # read-merge-write, one install at a time (P119)
        old = safe_file.read(path)
        config, had_comments = config_file.parse(path, old, comments=host == "vscode")
        updated, replaced = config_file.put(path, config, servers_key(host), name, entry_json(host, entry))
        backup = safe_file.replace(path, config_file.dumps(updated), old, private=bool(entry.env))
    where = f"{named}" + (f" (a link to {path})" if path != named else "")
    print(
        f"{'replaced' if replaced else 'added'} {name!r} in {where}" + (f" (the old file: {backup})" if backup else "")
    )
    if had_comments:
        print(f"note: the comments in {path} were not kept; they are in {backup}", file=sys.stderr)
    print(f"restart {_shown_host(host)} to start it")
    return 0


def _checked(target: str, env: dict[str, str]) -> tuple[Path, str, str]:
    """The server file's absolute path, its `:ATTR` and the Server's name, once its start-up checks pass
    as the host will run them (`baton.install.check`); InstallError says what would stop it there."""
    spec, attr = split_target(target)
    if not spec.endswith(".py"):
        raise InstallError(f"{target!r}: the target is a server file (FILE.py[:ATTR]) or an http(s) URL")
    path = Path(spec).resolve()
    try:
        path.open("rb").close()
    except FileNotFoundError:
        pass  # the check says so, with the closest name
    except OSError as exc:
        raise safe_file.failed("read", path, exc) from None
    name = check.checked(f"{path}{':' + attr if attr else ''}", env)
    return path, f":{attr}" if attr else "", name


def _variables(env_file: Path | None, pairs: list[str]) -> dict[str, str]:
    values: dict[str, str] = {}
    if env_file is not None:
        try:
            lines = env_file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise safe_file.failed("read --env-file", env_file, exc) from None
        except UnicodeDecodeError as exc:
            raise InstallError(f"cannot read --env-file {env_file}: not UTF-8 text ({exc.reason})", status=1) from None
        for number, line in enumerate(lines, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            key, sep, value = text.removeprefix("export ").partition("=")
            if not sep or not key.strip().isidentifier():
                raise InstallError(f"{env_file}, line {number}: expected KEY=VALUE")
            values[key.strip()] = value.strip().strip("'\"")
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.isidentifier():
            raise InstallError(f"--env takes KEY=VALUE, not {pair.partition('=')[0]!r}...")
        values[key] = value
    return values


def _url_name(url: str) -> str:
    return urlsplit(url).hostname or "server"


def _claude_code(name: str, entry: Entry, *, dry_run: bool) -> int:
    if entry.url is not None:
        words = ["claude", "mcp", "add", "--transport", "http", name, entry.url]
    else:
        words = ["claude", "mcp", "add", name]
        for key, _ in entry.env:
            words += ["-e", f"{key}=${{{key}}}"]
        words += ["--", entry.command or "", *entry.args]
    # "KEY=${KEY}" is left for the shell to fill in from its own environment: the value is never printed
    shown = " ".join(f'"{w}"' if "=${" in w else shlex.quote(w) for w in words)
    claude = shutil.which("claude")
    if claude is None or dry_run:
        why = "" if dry_run else "claude is not on PATH; run this where it is:\n"
        print(f"{why}{shown}")
        return 0
    real = ["claude", "mcp", "add", *([] if entry.url is None else ["--transport", "http"]), name]
    if entry.url is not None:
        real.append(entry.url)
    else:
        for key, value in entry.env:
            real += ["-e", f"{key}={value}"]
        real += ["--", entry.command or "", *entry.args]
    done = subprocess.run([claude, *real[1:]], check=False)
    if done.returncode != 0:
        raise InstallError(f"claude mcp add failed (exit status {done.returncode})", status=1)
    print(f"added {name!r} to Claude Code")
    return 0


def _shown_host(host: HostName) -> str:
    return {"claude-desktop": "Claude Desktop", "cursor": "Cursor", "vscode": "VS Code"}.get(host, host)
