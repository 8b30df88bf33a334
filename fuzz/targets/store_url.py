"""Store URLs (`--ledger`, the connect store): parsed, shown redacted, and a SQLite file path read from them."""

from __future__ import annotations

from baton.state.store_url import parse_store_url

from ..harness import Target


def one(data: bytes) -> None:
    url = parse_store_url(data.decode("utf-8", "replace"), "ledger")
    _ = url.shown
    if url.kind == "sqlite":
        url.sqlite_file("ledger.sqlite3")


TARGET = Target("store_url", "ledger and connect-store URLs", one, (ValueError,))
