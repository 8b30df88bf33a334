"""What `baton dev` connects to: a server file (run as a child over stdio), an http(s) URL, or any command.

`parse_target(words)` reads the command line after `baton dev [options]`: `FILE.py[:ATTR]` (or
`module:attr`), `http(s)://...`, or `-- COMMAND ...` for a stdio server in any language. A server file is
started with this Python as `python -m baton serve TARGET --stdio`, so it gets the same start-up
checks as `baton serve`, and its folder is watched for changes to Python files (`DevTarget.watch`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from ..targets import split_target


class DevTargetError(ValueError):
    """A `baton dev` target that cannot be used; the message says what to write instead."""


@dataclass(frozen=True, slots=True)
class DevTarget:
    """Exactly one of `url` and `command` is set; `watch` is the folder whose Python files restart the command."""

    shown: str  # how the page and the messages name the target
    url: str | None = None
    command: tuple[str, ...] | None = None
    watch: Path | None = None
    baton: bool = False  # the command is `baton serve`: it answers the 2026-07-28 probe, however slow to start


def parse_target(target: str | None, command: list[str]) -> DevTarget:
    """The target of `baton dev TARGET` or `baton dev -- COMMAND ...` (exactly one of the two)."""
    if command:
        if target is not None:
            raise DevTargetError(f"give a target or `-- COMMAND`, not both ({target!r} and {' '.join(command)!r})")
        return DevTarget(" ".join(command), command=tuple(command))
    if target is None:
        raise DevTargetError("name a server: baton dev FILE.py[:ATTR] | baton dev URL | baton dev -- COMMAND ...")
    if target.startswith(("http://", "https://")):
        return DevTarget(target, url=target)
    if "://" in target:
        raise DevTargetError(f"{target!r}: a server URL starts with http:// or https://")
    spec, attr = split_target(target)
    if spec.endswith(".py") or "/" in spec or "\\" in spec:
        path = Path(spec)
        if not path.is_file():
            raise DevTargetError(f"no such file: {spec}")
        suffix = f":{attr}" if attr else ""
        shown = f"{path}{suffix}"
        run = (sys.executable, "-m", "baton", "serve", f"{path.resolve()}{suffix}", "--stdio")
        return DevTarget(shown, command=run, watch=path.resolve().parent, baton=True)
    if ":" in target:  # module:attr, importable from here
        return DevTarget(target, command=(sys.executable, "-m", "baton", "serve", target, "--stdio"), baton=True)
    raise DevTargetError(
        f"{target!r} is no server file, URL or module:attr; "
        f"for a command, put `--` before it: baton dev -- {target} ..."
    )
