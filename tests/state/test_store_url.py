"""Store URLs (`baton.state.store_url`): one parser for the ledger's URL and the connect kit's.

Both users must accept the same URLs and refuse the same ones with the same words (only what the URL
is for differs), and no message may show a password from the URL.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from pathlib import Path

import pytest

from baton.connect import ConnectKit
from baton.connect.stores import parse_store_url, tickets_from_url, vault_store_from_url
from baton.state.keys import data_dir
from baton.state.ledger_url import ledger_from_url
from baton.state.store_url import NEEDS_REDIS, StoreUrl
from baton.state.store_url import parse_store_url as parse

MALFORMED = [
    "",
    "connect.db",
    ":memory:",
    "postgres://db/x",
    "memory://somewhere",
    "sqlite:relative.db",
    "redis://127.0.0.1:6379/sessions",
    "redis://127.0.0.1:6379/²",
    "redis://:hunter2@[::1/0",
]
# Each user of the parser: what it calls the URL in messages, and how it is handed a URL.
USERS: list[tuple[str, Callable[[str], object]]] = [
    ("ledger", ledger_from_url),
    ("connect store", tickets_from_url),
    ("connect store", vault_store_from_url),
    ("connect store", lambda url: ConnectKit(store=url)),
]


def refusal(make: Callable[[str], object], url: str) -> str:
    with pytest.raises(ValueError) as info:
        make(url)
    return str(info.value)


def normalized(what: str, message: str) -> str:
    """`message` with what the URL is for ("ledger URL", "a memory ledger") written alike for every user."""
    noun = what.rpartition(" ")[2]
    return message.replace(f"{what} URL", "WHAT URL").replace(f"a memory {noun} ", "a memory WHAT ")


def test_the_parsed_value() -> None:
    assert parse("memory:", "ledger") == StoreUrl("memory", "memory", "memory:", "ledger")
    assert parse("MEMORY://", "ledger").kind == "memory"
    default = parse("sqlite:", "ledger")
    assert (default.kind, default.path) == ("sqlite", None)
    assert default.sqlite_file("x.sqlite3") == data_dir() / "x.sqlite3"
    assert parse("sqlite://", "ledger").path is None
    assert parse("sqlite:///var/lib/baton/l.db", "ledger").path == Path("/var/lib/baton/l.db")
    assert parse("sqlite://rel/l.db", "ledger").sqlite_file("x.sqlite3") == Path("rel/l.db")
    redis = parse("redis://:hunter2@127.0.0.1:6379/3", "ledger")
    assert (redis.kind, redis.scheme, redis.db) == ("redis", "redis", 3)
    assert redis.url == "redis://:hunter2@127.0.0.1:6379/3" and "hunter2" not in redis.shown + repr(redis)
    assert parse("rediss://h", "ledger").db is None
    assert (parse("unix:///run/redis.sock", "ledger").scheme, parse("unix:///run/redis.sock", "ledger").db) == (
        "unix",
        None,
    )
    assert parse_store_url("memory:").what == "connect store"


@pytest.mark.parametrize("url", MALFORMED)
def test_both_users_refuse_alike(url: str) -> None:
    messages = {normalized(what, refusal(make, url)) for what, make in USERS}
    assert len(messages) == 1, messages
    assert "hunter2" not in "".join(messages)


@pytest.mark.parametrize(
    ("url", "message"),
    [
        (":memory:", "has no scheme: use memory:, sqlite:, sqlite:///PATH or redis://HOST:PORT/DB"),
        ("memory://:hunter2@x", "a memory ledger takes no location"),
        ("postgres://u:hunter2@db/x", "unknown scheme 'postgres'"),
        ("sqlite:relative.db", "write sqlite:///absolute/path"),
        ("redis://:hunter2@127.0.0.1:6379/zero", "the database is a number"),
    ],
)
def test_a_ledger_url_is_refused_without_its_password(url: str, message: str) -> None:
    """The ledger's copy of the parser showed the URL as given, password and all, in most refusals."""
    shown = refusal(ledger_from_url, url)
    assert shown.startswith("ledger URL ") and message in shown
    assert "hunter2" not in shown


def test_a_redis_package_without_redis_asyncio_names_the_fix_for_both(monkeypatch: pytest.MonkeyPatch) -> None:
    """An old redis (3.x) has no `redis.asyncio`: the ledger let that ModuleNotFoundError through."""
    for name in [m for m in sys.modules if m.startswith(("redis.", "baton.state.ledger_redis"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.delitem(sys.modules, "baton.connect.redis_stores", raising=False)
    old_redis = types.ModuleType("redis")
    old_redis.__path__ = []  # a package with nothing in it: `import redis.asyncio` fails with that name
    monkeypatch.setitem(sys.modules, "redis", old_redis)
    for what, make in USERS[:3]:
        shown = refusal(make, "redis://:hunter2@127.0.0.1:6379/0")
        assert shown == f"{what} URL 'redis://:***@127.0.0.1:6379/0' {NEEDS_REDIS}"
