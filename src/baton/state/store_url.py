"""Store URLs, read in one place for every Baton store: the single-use ledger and the connect kit's stores.

- `memory:` (or `memory://`): in the process;
- `sqlite:` (or `sqlite://`): the store's default file in the data directory; `sqlite:///abs/path` or
  `sqlite://rel/path`: that file;
- `redis://…`, `rediss://…`, `unix://…`: Redis (needs the `redis` extra); a database in the path is a number.

The scheme is case-insensitive. Every error names what the URL is for ("ledger URL", "connect store URL"),
says which forms are accepted, and shows the URL without its password. `StoreUnavailable` is what a
store raises when its backend cannot be reached or used.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TypeVar
from urllib.parse import urlsplit

from ..extras import install_extra
from .keys import data_dir
from .redis_client import redacted

T = TypeVar("T")

StoreKind = Literal["memory", "sqlite", "redis"]
REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})
FORMS = "use memory:, sqlite:, sqlite:///PATH or redis://HOST:PORT/DB"
NEEDS_REDIS = f"needs the redis package, Baton's [redis] extra: {install_extra('redis')}"


class StoreUnavailable(Exception):
    """A store's backend cannot be reached or used (the message never holds a password)."""


@dataclass(frozen=True, slots=True)
class StoreUrl:
    """A parsed store URL. `url` is as given (it may hold a password): show `shown` instead."""

    kind: StoreKind
    scheme: str  # lower-cased: memory, sqlite, redis, rediss or unix
    url: str = field(repr=False)
    what: str  # what the URL is for, in messages: "ledger", "connect store"
    path: Path | None = None  # sqlite: the file the URL names; None for the store's default file
    db: int | None = None  # redis: the database number in the path, None if it names none

    @property
    def shown(self) -> str:
        """The URL for messages: no password."""
        return redacted(self.url)

    def sqlite_file(self, default_name: str) -> Path:
        """The SQLite file: the one the URL names, else `default_name` in the data directory."""
        return self.path if self.path is not None else data_dir() / default_name

    def open(
        self,
        default_name: str,
        *,
        memory: Callable[[], T],
        sqlite: Callable[[Path], T],
        redis: Callable[[], T],
    ) -> T:
        """The store this URL names, made by the factory for its kind (`sqlite` gets the file's path). The
        `redis` factory imports the redis package; without it, the error says which extra to install."""
        if self.kind == "memory":
            return memory()
        if self.kind == "sqlite":
            return sqlite(self.sqlite_file(default_name))
        try:
            return redis()
        except ModuleNotFoundError as exc:
            raise self.redis_missing(exc) from None

    def redis_missing(self, exc: ModuleNotFoundError) -> ValueError:
        """The error for a Redis URL without the redis package; any other missing module is raised as is."""
        if (exc.name or "").partition(".")[0] != "redis":
            raise exc
        return ValueError(f"{self.what} URL {self.shown!r} {NEEDS_REDIS}")


def parse_store_url(url: str, what: str) -> StoreUrl:
    """`url` parsed, for `what` ("ledger", "connect store"); a malformed one raises ValueError naming the forms."""
    shown = redacted(url)
    scheme, sep, rest = url.partition(":")
    scheme = scheme.lower()
    if not sep or not scheme:
        raise ValueError(f"{what} URL {shown!r} has no scheme: {FORMS}")
    if scheme == "memory":
        if rest not in ("", "//"):
            noun = what.rpartition(" ")[2]
            raise ValueError(f"{what} URL {shown!r}: a memory {noun} takes no location, write memory:")
        return StoreUrl("memory", scheme, url, what)
    if scheme == "sqlite":
        if rest in ("", "//"):
            return StoreUrl("sqlite", scheme, url, what)
        if not rest.startswith("//"):
            raise ValueError(f"{what} URL {shown!r}: write sqlite:///absolute/path or sqlite://relative/path")
        return StoreUrl("sqlite", scheme, url, what, path=Path(rest[2:]))
    if scheme in REDIS_SCHEMES:
        return StoreUrl("redis", scheme, url, what, db=_redis_database(url, scheme, what))
    raise ValueError(f"{what} URL {shown!r}: unknown scheme {scheme!r}; {FORMS}")


def _redis_database(url: str, scheme: str, what: str) -> int | None:
    """The database number in a Redis URL's path (a unix socket's path is the socket: none).

    A database that is not a number is refused: redis-py would quietly use database 0.
    """
    try:
        db = urlsplit(url).path.strip("/") if scheme != "unix" else ""
    except ValueError as exc:
        raise ValueError(f"{what} URL {redacted(url)!r}: {exc}") from None
    if not db:
        return None
    if db.isdigit():
        with contextlib.suppress(ValueError):  # "²" is a digit that int() refuses
            return int(db)
    raise ValueError(f"{what} URL {redacted(url)!r}: the database is a number, write redis://HOST:PORT/DB")
