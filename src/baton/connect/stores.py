"""Where the connect kit keeps tickets and vault records, chosen by a URL (like `BATON_LEDGER`).

`ConnectKit(store=URL)`, else `$BATON_CONNECT_STORE`, else `sqlite:`; the URL is read by
`baton.state.store_url`, as the ledger's is:

- `memory:`: in the process (tests; everything is lost on restart);
- `sqlite:`: the data directory's `connect-tickets.sqlite3` and `vault.sqlite3` (one host);
- `sqlite:///abs/path.db` or `sqlite://rel/path.db`: both tables in that one file (one host);
- `redis://…`, `rediss://…`, `unix://…`: Redis, shared by every instance (needs the `redis` extra).
"""

from __future__ import annotations

from ..state import store_url
from ..state.store_url import StoreUnavailable, StoreUrl
from .tickets import MemoryTickets, SqliteTickets, TicketStore
from .vault import MemoryVaultStore, SqliteVaultStore, VaultStore

ENV_STORE = "BATON_CONNECT_STORE"
DEFAULT_STORE = "sqlite:"
TICKETS_FILE = "connect-tickets.sqlite3"
VAULT_FILE = "vault.sqlite3"

__all__ = [
    "DEFAULT_STORE",
    "ENV_STORE",
    "TICKETS_FILE",
    "VAULT_FILE",
    "StoreUnavailable",
    "parse_store_url",
    "tickets_from_url",
    "vault_store_from_url",
]


def parse_store_url(url: str) -> StoreUrl:
    """`url` parsed as a connect store URL; raises ValueError naming the accepted forms."""
    return store_url.parse_store_url(url, "connect store")


def tickets_from_url(url: str, *, redis_prefix: str | None = None) -> TicketStore:
    """The ticket store for `url` (see the module docstring); `redis_prefix` overrides the key prefix."""

    def redis() -> TicketStore:
        from .redis_stores import RedisTickets  # noqa: PLC0415 (the optional redis extra)

        return RedisTickets(url, prefix=redis_prefix)

    return parse_store_url(url).open(TICKETS_FILE, memory=MemoryTickets, sqlite=SqliteTickets, redis=redis)


def vault_store_from_url(url: str, *, redis_prefix: str | None = None) -> VaultStore:
    """The vault store for `url` (see the module docstring); `redis_prefix` overrides the key prefix."""

    def redis() -> VaultStore:
        from .redis_stores import RedisVaultStore  # noqa: PLC0415 (the optional redis extra)

        return RedisVaultStore(url, prefix=redis_prefix)

    return parse_store_url(url).open(VAULT_FILE, memory=MemoryVaultStore, sqlite=SqliteVaultStore, redis=redis)
