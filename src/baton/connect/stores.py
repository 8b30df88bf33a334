"""Where the connect kit keeps tickets and vault records, chosen by a URL (like `BATON_LEDGER`).

`ConnectKit(store=URL)`, else `$BATON_CONNECT_STORE`, else `sqlite:`:

- `memory:`: in the process (tests; everything is lost on restart);
- `sqlite:`: the data directory's `connect-tickets.sqlite3` and `vault.sqlite3` (one host);
- `sqlite:///abs/path.db` or `sqlite://rel/path.db`: both tables in that one file (one host);
- `redis://…`, `rediss://…`, `unix://…`: Redis, shared by every instance (needs the `redis` extra).
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from ..state.keys import data_dir
from ..state.redis_client import check_database, redacted
from .tickets import MemoryTickets, SqliteTickets, TicketStore
from .vault import MemoryVaultStore, SqliteVaultStore, VaultStore

ENV_STORE = "BATON_CONNECT_STORE"
DEFAULT_STORE = "sqlite:"
TICKETS_FILE = "connect-tickets.sqlite3"
VAULT_FILE = "vault.sqlite3"
_REDIS_SCHEMES = frozenset({"redis", "rediss", "unix"})
_FORMS = "use memory:, sqlite:, sqlite:///PATH or redis://HOST:PORT/DB"

Kind = Literal["memory", "sqlite", "redis"]


class StoreUnavailable(Exception):
    """A connect store's backend cannot be reached or used (the message never holds a password)."""


def parse_store_url(url: str) -> tuple[Kind, Path | None]:
    """(kind, SQLite file or None) for a store URL; raises ValueError naming the accepted forms."""
    shown = redacted(url)
    scheme, sep, rest = url.partition(":")
    scheme = scheme.lower()
    if not sep or not scheme:
        raise ValueError(f"connect store URL {shown!r} has no scheme: {_FORMS}")
    if scheme == "memory":
        if rest not in ("", "//"):
            raise ValueError(f"connect store URL {shown!r}: a memory store takes no location, write memory:")
        return "memory", None
    if scheme == "sqlite":
        if rest in ("", "//"):
            return "sqlite", None
        if not rest.startswith("//"):
            raise ValueError(f"connect store URL {shown!r}: write sqlite:///absolute/path or sqlite://relative/path")
        return "sqlite", Path(rest[2:])
    if scheme in _REDIS_SCHEMES:
        check_database(url, "connect store")
        return "redis", None
    raise ValueError(f"connect store URL {shown!r}: unknown scheme {scheme!r}; {_FORMS}")


def _missing_redis(url: str, exc: ModuleNotFoundError) -> ValueError:
    """The error for a Redis URL without the redis package; any other missing module is raised as is."""
    if (exc.name or "").partition(".")[0] != "redis":
        raise exc
    return ValueError(f"connect store URL {redacted(url)!r} needs the redis package: pip install 'mcp-baton[redis]'")


def tickets_from_url(url: str, *, redis_prefix: str | None = None) -> TicketStore:
    """The ticket store for `url` (see the module docstring); `redis_prefix` overrides the key prefix."""
    kind, path = parse_store_url(url)
    if kind == "memory":
        return MemoryTickets()
    if kind == "sqlite":
        return SqliteTickets(path or data_dir() / TICKETS_FILE)
    try:
        from .redis_stores import RedisTickets
    except ModuleNotFoundError as exc:
        raise _missing_redis(url, exc) from None
    return RedisTickets(url, prefix=redis_prefix)


def vault_store_from_url(url: str, *, redis_prefix: str | None = None) -> VaultStore:
    """The vault store for `url` (see the module docstring); `redis_prefix` overrides the key prefix."""
    kind, path = parse_store_url(url)
    if kind == "memory":
        return MemoryVaultStore()
    if kind == "sqlite":
        return SqliteVaultStore(path or data_dir() / VAULT_FILE)
    try:
        from .redis_stores import RedisVaultStore
    except ModuleNotFoundError as exc:
        raise _missing_redis(url, exc) from None
    return RedisVaultStore(url, prefix=redis_prefix)
