"""`baton keys`: create, look at and rotate the key ring that seals `requestState` (and the connect kit's keys).

The key file is `--key-file`, else `$BATON_KEY_FILE`, else `state-keys` in the data directory.
`init` creates it (a server creates it too, on its first start); every other action needs it to exist,
so that a mistyped path is an error, never a new ring. Running servers follow their key file, so a
rotation reaches them without a restart: `rotate` puts a new key in front (it seals from then on) and
keeps the old ones (they still open tokens in flight); `retire` drops an old key once no token sealed
with it can still be alive (the state TTL: 10 minutes by default). For hosts that each hold a copy of
the file, `add` then `promote` rotates in two steps.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..state.keys import ENV_KEYS, Key, KeyRing, KeyRingError, default_key_file, write_key_file

if TYPE_CHECKING:
    from .main import Commands


def register(commands: Commands) -> None:
    """`baton keys` and its actions, each an argparse subparser of its own."""
    # --key-file is accepted before or after the action: `baton keys --key-file F rotate` or `... rotate --key-file F`.
    key_file = argparse.ArgumentParser(add_help=False)
    key_file.add_argument(
        "--key-file",
        type=Path,
        default=argparse.SUPPRESS,
        help="the key file (default $BATON_KEY_FILE or the data directory's)",
    )
    parser = commands.add_parser(
        "keys",
        help="create, list or rotate the state key ring: baton keys init|list|rotate|add|promote|retire|generate",
        description=__doc__.partition("\n\n")[0] if __doc__ else "",
        parents=[key_file],
    )
    parser.set_defaults(run=run, command_parser=parser)
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser("init", parents=[key_file], help="create the key file with one new key, and say where")
    actions.add_parser("list", parents=[key_file], help="key ids, the sealing one first (never the secrets)")
    actions.add_parser("rotate", parents=[key_file], help="add a new key in front: it seals from now on")
    actions.add_parser("add", parents=[key_file], help="add a new key at the end: it opens, does not seal (step 1/2)")
    promote = actions.add_parser("promote", parents=[key_file], help="move a key to the front: it seals (step 2/2)")
    promote.add_argument("kid")
    retire = actions.add_parser("retire", parents=[key_file], help="remove a key that no longer seals")
    retire.add_argument("kid")
    actions.add_parser("generate", help=f"print a new kid:base64key entry (for ${ENV_KEYS}); writes nothing")


def run(args: argparse.Namespace) -> int:
    """`baton keys ACTION`: the exit status."""
    if args.action == "generate":
        print(Key.generate().encode())
        return 0
    path: Path = getattr(args, "key_file", None) or default_key_file()
    if os.environ.get(ENV_KEYS):
        print(f"baton keys: note: ${ENV_KEYS} is set, and servers started with it use it, not {path}", file=sys.stderr)
    if args.action == "init":
        return _init(path)
    try:
        keys = list(KeyRing.from_file(path, create=False).keys)
    except FileNotFoundError:
        print(f"baton keys: no key file at {path}; create it with `baton keys init`", file=sys.stderr)
        return 1
    except (KeyRingError, OSError) as exc:
        print(f"baton keys: {_reason(exc)}", file=sys.stderr)
        return 1
    kids = [k.kid for k in keys]
    if args.action in ("promote", "retire") and args.kid not in kids:
        print(f"baton keys: no key {args.kid!r} in {path} (it has {', '.join(kids)})", file=sys.stderr)
        return 1
    if args.action == "list":
        for i, key in enumerate(keys):
            print(f"{key.kid}\t{'seals and opens' if i == 0 else 'opens'}")
        return 0
    if args.action in ("rotate", "add"):
        new = Key.generate()
        while new.kid in kids:  # pragma: no cover - 24 random bits
            new = Key.generate()
        keys = [new, *keys] if args.action == "rotate" else [*keys, new]
        message = f"added key {new.kid}" + (", which seals from now on" if args.action == "rotate" else " (opens only)")
    elif args.action == "promote":
        keys = [k for k in keys if k.kid == args.kid] + [k for k in keys if k.kid != args.kid]
        message = f"key {args.kid} seals from now on"
    else:
        if kids[0] == args.kid:
            print(f"baton keys: {args.kid} is the sealing key; rotate or promote another first", file=sys.stderr)
            return 1
        keys = [k for k in keys if k.kid != args.kid]
        message = f"retired key {args.kid}: tokens sealed with it no longer open"
    write_key_file(path, keys)
    print(f"baton keys: {message} ({path})", file=sys.stderr)
    return 0


def _init(path: Path) -> int:
    """Create the key file with one key; refuse if it exists (its keys may be sealing flows right now)."""
    if path.exists():
        print(
            f"baton keys: a key file already exists at {path}; nothing written (`baton keys list` shows it)",
            file=sys.stderr,
        )
        return 1
    try:
        ring = KeyRing.from_file(path, create=True)
    except (KeyRingError, OSError) as exc:
        print(f"baton keys: cannot create {path}: {_reason(exc)}", file=sys.stderr)
        return 1
    print(f"baton keys: created {path} with key {ring.current.kid}, which seals from now on", file=sys.stderr)
    return 0


def _reason(exc: Exception) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    return str(exc)
