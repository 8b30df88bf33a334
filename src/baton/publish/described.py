"""What both publishing formats read from a server, with the checks a user can act on: one `PublishError`
(exit 2) per problem, naming the option that fixes it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from ..server.core import Server

DESCRIPTION_MAX: Final = 100  # the registry's limit on `description` and `title` (server.schema.json)
_RANGE: Final = re.compile(r"[\^~<>=*]|(^|\.)[xX*](\.|$)")


class PublishError(Exception):
    """Bad input for `baton publish`; the message says what to pass instead. `status` is the exit status."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Described:
    """A loaded server and the words that describe it."""

    server: Server
    description: str


def load(target: str, description: str | None) -> Described:
    """The server at `target`, and its description: `description` if given, else its card's, else its
    instructions."""
    from ..serve.target import TargetError, load_server  # noqa: PLC0415 (`baton` parses a command line without the server)

    try:
        server = load_server(target)
    except TargetError as exc:
        raise PublishError(str(exc)) from None
    card = server.settings.card
    text = description or (card.description if card else None) or server.instructions
    if not text or not text.strip():
        raise PublishError(
            f"server {server.name!r} has no description: pass --description TEXT (or give the Server instructions=...)"
        )
    check_version(server.version, "the server's version (Server(version=...))")
    return Described(server, " ".join(text.split()))


def check_version(version: str, what: str) -> None:
    """A specific version: registries refuse `latest` and ranges such as `^1.2`, `>=1`, `1.x`."""
    if not version or version == "latest" or _RANGE.search(version):
        raise PublishError(f"{what} is {version!r}: registries need one specific version, such as 1.4.0")


def fits(text: str, label: str, option: str) -> str:
    """`text` if it fits the registry's 100 characters, else an error naming the option to shorten it."""
    if len(text) > DESCRIPTION_MAX:
        raise PublishError(
            f"the {label} is {len(text)} characters; the registry takes at most {DESCRIPTION_MAX}: pass a "
            f"shorter one with {option}"
        )
    return text


def read_file(path: Path) -> bytes:
    """The bytes of a file the user named; one that cannot be read is exit 1."""
    try:
        return path.read_bytes()
    except OSError as exc:
        raise PublishError(f"cannot read {path}: {exc.strerror or exc}", status=1) from None
