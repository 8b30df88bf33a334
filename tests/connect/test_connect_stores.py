"""The connect stores (tickets, vault records) on every backend: memory, SQLite and a real redis-server.

One contract runs every store through the same cases. Two store objects over one backend stand for two
instances behind a load balancer: two connections to one SQLite file, two clients of one Redis (memory
has no sharing, so there both are the same object). redis-server is started on a free loopback port;
if it is not installed the Redis tests fail (never skip). Then the configuration (`BATON_CONNECT_STORE`,
`ConnectKit(store=...)`), Redis failures, and two real `baton serve` processes sharing one Redis.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import importlib.abc
import os
import re
import socket
import sqlite3
import stat
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from support.paths import SERVERS
from support.processes import free_port
from support.redis_server import RedisServer
from support.serve import RunningServer, start_server
from wire import call

from baton import KeyRing
from baton.connect import (
    ConnectKit,
    MemoryTickets,
    MemoryVaultStore,
    SqliteTickets,
    SqliteVaultStore,
    StoreUnavailable,
    Ticket,
    TicketStore,
    Vault,
    VaultStore,
)
from baton.connect.redis_stores import TICKET_PREFIX, VAULT_PREFIX, RedisTickets, RedisVaultStore
from baton.connect.stores import ENV_STORE, TICKETS_FILE, VAULT_FILE, tickets_from_url, vault_store_from_url
from baton.connect.tickets import mint
from baton.extras import install_extra
from baton.state.keys import data_dir
from baton.state.ledger_sqlite import SqliteLedger
from baton.state.sqlite_file import SqliteFile

CONTRACT_TIMEOUT_S = 30.0


class Backend:
    """One backend's location; `tickets()` and `vault()` open one more store object ("instance") on it."""

    def __init__(self, kind: str, tmp_path: Path, redis_url: str = "") -> None:
        self.kind = kind
        self.path = tmp_path / "connect.sqlite3"
        self.redis_url = redis_url
        self.prefix = f"test:{uuid.uuid4().hex}:"
        self._memory_tickets = MemoryTickets()
        self._memory_vault = MemoryVaultStore()
        self.opened: list[TicketStore | VaultStore] = []

    def tickets(self) -> TicketStore:
        store: TicketStore
        if self.kind == "memory":
            store = self._memory_tickets
        elif self.kind == "sqlite":
            store = SqliteTickets(self.path)
        else:
            # The contract, not the timeouts (tested apart): a race of 400 calls on a loaded machine may wait more
            # than the default 2 s for one of the pool's connections.
            store = RedisTickets(self.redis_url, prefix=self.prefix + "t:", timeout_s=CONTRACT_TIMEOUT_S)
        self.opened.append(store)
        return store

    def vault(self) -> VaultStore:
        store: VaultStore
        if self.kind == "memory":
            store = self._memory_vault
        elif self.kind == "sqlite":
            store = SqliteVaultStore(self.path)
        else:
            store = RedisVaultStore(self.redis_url, prefix=self.prefix + "v:", timeout_s=CONTRACT_TIMEOUT_S)
        self.opened.append(store)
        return store

    def run(self, body: Callable[[], Awaitable[None]]) -> None:
        """Run `body` in a fresh event loop, then close every store it opened."""

        async def main() -> None:
            try:
                await body()
            finally:
                for store in self.opened:
                    await store.close()
                self.opened.clear()

        asyncio.run(main())


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Backend:
    url = request.getfixturevalue("redis_server").url if request.param == "redis" else ""
    return Backend(request.param, tmp_path, url)


def flow() -> bytes:
    return bytes(range(256)) + os.urandom(16)  # every byte value, and unique


# -- tickets: the contract --------------------------------------------------------------------------


def test_ticket_round_trips_and_completes_once(backend: Backend) -> None:
    async def body() -> None:
        store = backend.tickets()
        ticket = mint("alice", flow(), "oauth-state:T:verifier ü 🎫")
        await store.put(ticket)
        assert await store.get(ticket.id) == ticket
        for other in ("bob", "alic", "alice ", "alice\x00", "Alice", ""):  # not hers: refused, not marked done
            assert not await store.complete(ticket.id, other), other
        assert await store.get(ticket.id) == ticket
        assert await store.complete(ticket.id, "alice")
        assert not await store.complete(ticket.id, "alice")
        done = await store.get(ticket.id)
        assert done == Ticket(
            id=ticket.id,
            principal="alice",
            flow_id=ticket.flow_id,
            purpose=ticket.purpose,
            expires_at=ticket.expires_at,
            done=True,
        )
        unknown = mint("alice", flow(), "secret:x").id
        assert await store.get(unknown) is None
        assert not await store.complete(unknown, "alice")

    backend.run(body)


def test_tricky_principals_complete_only_their_own(backend: Backend) -> None:
    principals = ["", "a", "ab", "a\x00", "a\x00b", "0", "1", "ü", "user@example.com", "x" * 300]

    async def body() -> None:
        store = backend.tickets()
        tickets = {p: mint(p, flow(), "secret:k") for p in principals}
        for ticket in tickets.values():
            await store.put(ticket)
        for owner, ticket in tickets.items():
            for other in principals:
                if other != owner:
                    assert not await store.complete(ticket.id, other), (owner, other)
            assert await store.complete(ticket.id, owner), owner
            got = await store.get(ticket.id)
            assert got is not None and got.principal == owner and got.done

    backend.run(body)


def test_ticket_stored_done_cannot_complete(backend: Backend) -> None:
    async def body() -> None:
        store = backend.tickets()
        ticket = Ticket(
            id=mint("alice", b"", "secret:x").id,
            principal="alice",
            flow_id=b"",
            purpose="secret:x",
            expires_at=time.time() + 60,
            done=True,
        )
        await store.put(ticket)
        assert await store.get(ticket.id) == ticket
        assert not await store.complete(ticket.id, "alice")

    backend.run(body)


def test_tickets_expire(backend: Backend) -> None:
    async def body() -> None:
        store = backend.tickets()
        gone = mint("alice", flow(), "secret:x", ttl_s=-1)
        await store.put(gone)
        assert await store.get(gone.id) is None
        assert not await store.complete(gone.id, "alice")
        open_, used, kept = (mint("alice", flow(), "secret:x", ttl_s=s) for s in (0.5, 0.5, 60))
        for ticket in (open_, used, kept):
            await store.put(ticket)
        assert await store.complete(used.id, "alice")
        await asyncio.sleep(0.8)
        for ticket in (open_, used):
            assert await store.get(ticket.id) is None
            assert not await store.complete(ticket.id, "alice")
        assert await store.complete(kept.id, "alice")

    backend.run(body)


def test_two_instances_share_tickets(backend: Backend) -> None:
    async def body() -> None:
        one, two = backend.tickets(), backend.tickets()
        ticket = mint("alice", flow(), "secret:x")
        await one.put(ticket)
        assert await two.get(ticket.id) == ticket
        assert await two.complete(ticket.id, "alice")
        seen = await one.get(ticket.id)
        assert seen is not None and seen.done
        assert not await one.complete(ticket.id, "alice")

    backend.run(body)


def test_complete_raced_across_instances_succeeds_once(backend: Backend) -> None:
    async def body() -> None:
        one, two = backend.tickets(), backend.tickets()
        tickets = [mint("alice", flow(), f"secret:k{i}") for i in range(20)]
        for ticket in tickets:
            await one.put(ticket)
        racers: list[Awaitable[bool]] = []
        for ticket in tickets:
            for i in range(10):
                racers.append((one if i % 2 else two).complete(ticket.id, "alice"))
                racers.append((two if i % 2 else one).complete(ticket.id, "mallory"))
        outcomes = await asyncio.gather(*racers)
        for n, ticket in enumerate(tickets):
            mine = outcomes[n * 20 : n * 20 + 20 : 2]
            assert mine.count(True) == 1, ticket.id
            assert not any(outcomes[n * 20 + 1 : n * 20 + 20 : 2]), "another principal completed a ticket"
            seen = await two.get(ticket.id)
            assert seen is not None and seen.done

    backend.run(body)


# -- vault records: the contract --------------------------------------------------------------------

TRICKY = [
    ("a:b", "c"),
    ("a", "b:c"),
    ("a", "bc"),
    ("ab", "c"),
    ("", "a:b:c"),
    ("a:b:c", ""),
    ("a\x00b", "c"),
    ("a", "b\x00c"),
    ("a\x00\x00\x00\x01b", "c"),
    ("ü", "name"),
    ("u\u0308", "name"),  # the decomposed ü: another principal
    ("alice", "api"),
    ("api", "alice"),
]


def test_vault_records_round_trip(backend: Backend) -> None:
    blob = bytes(range(256)) * 32

    async def body() -> None:
        store = backend.vault()
        assert await store.read("alice", "api") is None
        await store.delete("alice", "api")  # nothing to delete: no error
        await store.write("alice", "api", blob)
        assert await store.read("alice", "api") == blob
        await store.write("alice", "api", b"\x00")
        assert await store.read("alice", "api") == b"\x00"
        await store.delete("alice", "api")
        assert await store.read("alice", "api") is None

    backend.run(body)


def test_vault_keys_do_not_collide(backend: Backend) -> None:
    async def body() -> None:
        store = backend.vault()
        for principal, name in TRICKY:
            await store.write(principal, name, repr((principal, name)).encode())
        for principal, name in TRICKY:
            assert await store.read(principal, name) == repr((principal, name)).encode()
        await store.delete("a:b", "c")
        assert await store.read("a:b", "c") is None
        for principal, name in TRICKY[1:]:
            assert await store.read(principal, name) == repr((principal, name)).encode()

    backend.run(body)


def test_two_instances_share_vault_records(backend: Backend) -> None:
    async def body() -> None:
        ring = KeyRing.ephemeral_key()
        one, two = Vault(ring, backend.vault()), Vault(ring, backend.vault())
        await one.put("alice", "api", "sk-alice")
        assert await two.reveal("alice", "api") == "sk-alice"
        await two.handle("alice", "api").forget()
        assert not await one.has("alice", "api")

    backend.run(body)


# -- Redis specifics --------------------------------------------------------------------------------


def test_redis_keys_expire_in_redis_and_name_no_one(redis_server: RedisServer) -> None:
    backend = Backend("redis", Path(), redis_server.url)
    client = redis.Redis(port=redis_server.port)

    async def body() -> None:
        tickets, vault = backend.tickets(), backend.vault()
        ticket = mint("alice@example.com", flow(), "secret:x", ttl_s=0.6)
        await tickets.put(ticket)
        await vault.write("alice@example.com", "api", b"sealed")
        key = backend.prefix + "t:" + ticket.id
        assert 0 < client.pttl(key) <= 600
        assert await tickets.complete(ticket.id, "alice@example.com")
        assert 0 < client.pttl(key) <= 600, "completing keeps the ticket's expiry"
        digest = hashlib.sha256(b"alice@example.com").hexdigest()
        record_key = f"{backend.prefix}v:{digest}"
        assert sorted(redis_server.keys(backend.prefix)) == sorted([key.encode(), record_key.encode()])
        assert client.pttl(record_key) == -1, "credentials do not expire"
        await asyncio.sleep(0.8)
        assert redis_server.keys(backend.prefix + "t:") == [], "Redis itself dropped the ticket"

    try:
        backend.run(body)
    finally:
        client.close()


def test_default_prefixes_stay_apart_from_the_ledger() -> None:
    assert TICKET_PREFIX == "baton:connect:ticket:" and VAULT_PREFIX == "baton:connect:vault:"
    store = tickets_from_url("redis://127.0.0.1:1/0", redis_prefix="app1:")
    assert isinstance(store, RedisTickets) and store.prefix == "app1:"
    asyncio.run(store.close())


@pytest.mark.process
def test_redis_unreachable_fails_fast_without_the_password() -> None:
    url = f"redis://:hunter2@127.0.0.1:{free_port()}/0"

    async def main() -> None:
        tickets, vault = RedisTickets(url), RedisVaultStore(url)
        for what, attempt in [
            ("ticket store", tickets.get("A" * 32)),
            ("ticket store", tickets.complete("A" * 32, "alice")),
            ("vault store", vault.read("alice", "api")),
        ]:
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match=f"Redis {what} at redis://") as info:
                await attempt
            assert time.monotonic() - started < 5
            assert "hunter2" not in str(info.value)
        await tickets.close()
        await vault.close()

    asyncio.run(main())


@pytest.mark.process
def test_redis_that_never_answers_times_out() -> None:
    with socket.socket() as silent:  # accepts connections (the backlog) and never replies
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"redis://127.0.0.1:{silent.getsockname()[1]}/0"

        async def main() -> None:
            store = RedisTickets(url, connect_timeout_s=0.5, timeout_s=0.5)
            started = time.monotonic()
            with pytest.raises(StoreUnavailable, match="Timeout"):
                await store.get("A" * 32)
            assert time.monotonic() - started < 4
            await store.close()

        asyncio.run(main())


@pytest.mark.redis
def test_redis_outage_then_recovery(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    try:

        async def main() -> None:
            tickets, vault = RedisTickets(server.url), RedisVaultStore(server.url)
            await vault.write("alice", "api", b"sealed")
            server.stop()
            with pytest.raises(StoreUnavailable):
                await tickets.put(mint("alice", b"", "secret:x"))
            with pytest.raises(StoreUnavailable):
                await vault.read("alice", "api")
            server.start()  # same port, same store objects; no persistence, so the record is gone
            ticket = mint("alice", b"", "secret:x")
            await tickets.put(ticket)
            assert await tickets.complete(ticket.id, "alice")  # the Lua script is loaded again
            assert await vault.read("alice", "api") is None
            for store in (tickets, vault):
                await store.close()
                await store.close()  # idempotent
            with pytest.raises(StoreUnavailable, match="closed"):
                await tickets.get(ticket.id)
            with pytest.raises(StoreUnavailable, match="closed"):
                await vault.read("alice", "api")

        asyncio.run(main())
    finally:
        server.stop()


def test_redis_foreign_value_is_an_error_not_a_ticket(redis_server: RedisServer) -> None:
    with redis.Redis(port=redis_server.port) as client:
        client.set(TICKET_PREFIX + "B" * 32, b"not a ticket", px=60_000)

    async def main() -> None:
        store = RedisTickets(redis_server.url)
        with pytest.raises(StoreUnavailable, match="malformed"):
            await store.get("B" * 32)
        assert not await store.complete("B" * 32, "alice")
        await store.close()

    asyncio.run(main())


# -- SQLite: the file, opened as the ledger opens its own ---------------------------------------------


def test_sqlite_stores_fail_closed_and_close_once(tmp_path: Path) -> None:
    """Errors of the file are `StoreUnavailable` naming it (they were raw `OSError`s), and a closed store
    says so (it raised `RuntimeError` from its executor, on a second `close` too)."""
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")

    async def main() -> None:
        tickets, vault = SqliteTickets(blocker / "c.db"), SqliteVaultStore(blocker / "c.db")
        for what, attempt in [
            ("ticket store", tickets.put(mint("alice", b"", "secret:x"))),
            ("ticket store", tickets.complete("A" * 32, "alice")),
            ("vault store", vault.read("alice", "api")),
        ]:
            with pytest.raises(StoreUnavailable, match=f"SQLite {what} .*not-a-directory"):
                await attempt
        for store in (tickets, vault):
            await store.close()
            await store.close()  # idempotent
        with pytest.raises(StoreUnavailable, match="closed"):
            await tickets.get("A" * 32)
        with pytest.raises(StoreUnavailable, match="closed"):
            await vault.write("alice", "api", b"sealed")

    asyncio.run(main())


def test_sqlite_failed_commit_leaves_no_transaction_open(tmp_path: Path) -> None:
    """A COMMIT that fails (here a deferred foreign key) is rolled back; the connect stores' copy left the
    transaction open, and every later call failed with "cannot start a transaction within a transaction"."""
    schema = """
    PRAGMA foreign_keys = ON;
    CREATE TABLE IF NOT EXISTS parent (id INTEGER PRIMARY KEY);
    CREATE TABLE IF NOT EXISTS child (p INTEGER REFERENCES parent (id) DEFERRABLE INITIALLY DEFERRED);
    """

    async def main() -> None:
        file = SqliteFile(tmp_path / "fk.db", schema, what="test store")
        with pytest.raises(StoreUnavailable, match="FOREIGN KEY constraint failed"):
            await file.run(lambda db: db.execute("INSERT INTO child VALUES (7)"))
        assert await file.run(lambda db: db.execute("SELECT count(*) FROM child").fetchone()) == (0,)
        await file.close()

    asyncio.run(main())


@pytest.mark.parametrize(
    ("make", "synchronous"),
    [
        (SqliteLedger, 1),  # NORMAL: the ledger trades a power loss for speed
        (lambda path: SqliteLedger(path, durable=True), 2),
        (SqliteTickets, 2),  # FULL, as the connect stores always had (SQLite's default)
        (SqliteVaultStore, 2),
    ],
    ids=["ledger", "durable-ledger", "tickets", "vault"],
)
def test_every_embedded_store_opens_its_file_alike(
    tmp_path: Path, make: Callable[[Path], SqliteLedger | SqliteTickets | SqliteVaultStore], synchronous: int
) -> None:
    path = tmp_path / "new" / "dir" / "store.db"

    async def main() -> None:
        store = make(path)
        file = store._file
        assert await file.run(lambda db: db.execute("PRAGMA synchronous").fetchone()) == (synchronous,)
        await store.close()

    asyncio.run(main())
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    with sqlite3.connect(path) as db:
        assert db.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# -- configuration ----------------------------------------------------------------------------------


def test_store_urls(tmp_path: Path, redis_server: RedisServer) -> None:
    async def main() -> None:
        assert isinstance(tickets_from_url("memory:"), MemoryTickets)
        assert isinstance(vault_store_from_url("MEMORY://"), MemoryVaultStore)
        default_tickets, default_vault = tickets_from_url("sqlite:"), vault_store_from_url("sqlite:")
        assert isinstance(default_tickets, SqliteTickets) and isinstance(default_vault, SqliteVaultStore)
        await default_tickets.put(mint("alice", b"", "secret:x"))
        await default_vault.write("alice", "api", b"sealed")
        assert (data_dir() / TICKETS_FILE).exists() and (data_dir() / VAULT_FILE).exists()
        one_file = tmp_path / "deep" / "connect.db"
        tickets, vault = tickets_from_url(f"sqlite://{one_file}"), vault_store_from_url(f"sqlite://{one_file}")
        ticket = mint("alice", b"", "secret:x")
        await tickets.put(ticket)
        await vault.write("alice", "api", b"sealed")
        assert await tickets.get(ticket.id) == ticket and await vault.read("alice", "api") == b"sealed"
        redis_tickets, redis_vault = tickets_from_url(redis_server.url), vault_store_from_url(redis_server.url)
        assert isinstance(redis_tickets, RedisTickets) and redis_tickets.prefix == TICKET_PREFIX
        assert isinstance(redis_vault, RedisVaultStore) and redis_vault.prefix == VAULT_PREFIX
        for store in (default_tickets, default_vault, tickets, vault, redis_tickets, redis_vault):
            await store.close()
        with sqlite3.connect(one_file) as db:  # both tables in the one file
            tables = {row[0] for row in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert tables == {"baton_tickets", "baton_vault"}
        assert one_file.stat().st_mode & 0o077 == 0

    asyncio.run(main())


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("", "has no scheme"),
        ("connect.db", "has no scheme"),
        (":memory:", "has no scheme"),
        ("postgres://db/x", "unknown scheme 'postgres'"),
        ("memory://somewhere", "takes no location"),
        ("sqlite:relative.db", "sqlite:///absolute/path"),
        ("redis://127.0.0.1:6379/sessions", "the database is a number"),
    ],
)
def test_malformed_store_urls(url: str, message: str) -> None:
    for make in (tickets_from_url, vault_store_from_url, lambda u: ConnectKit(store=u)):
        with pytest.raises(ValueError, match=f"connect store URL .*{re.escape(message)}"):
            make(url)


def test_malformed_redis_url() -> None:
    with pytest.raises(ValueError, match=re.escape("Redis ticket store URL redis://:***@127.0.0.1:notaport/0: Port")):
        tickets_from_url("redis://:hunter2@127.0.0.1:notaport/0")
    with pytest.raises(ValueError, match=r"Redis vault store URL .*socket_timeout"):
        vault_store_from_url("redis://127.0.0.1:6379/0?socket_timeout=soon")
    for bad in ("redis://:hunter2@127.0.0.1/zero", "redis://:hunter2@[::1/0"):
        with pytest.raises(ValueError, match="connect store URL") as info:
            ConnectKit(store=bad)
        assert "hunter2" not in str(info.value)
    with pytest.raises(ValueError, match=re.escape("Redis vault store URL redis://h/0?***: Invalid value for 'db'")):
        vault_store_from_url("redis://h/0?password=hunter2&db=x")


class _NoRedis(importlib.abc.MetaPathFinder):
    """Makes `import redis` fail as it does where the package is not installed."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == "redis" or fullname.startswith("redis."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def test_redis_url_without_the_redis_package(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [m for m in sys.modules if m == "redis" or m.startswith(("redis.", "baton.connect.redis_stores"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoRedis(), *sys.meta_path])
    for make in (tickets_from_url, vault_store_from_url):
        needs = f"needs the redis package, Baton's [redis] extra: {install_extra('redis')}"
        with pytest.raises(ValueError, match=re.escape(needs)):
            make("redis://127.0.0.1:6379/0")
    assert isinstance(tickets_from_url("memory:"), MemoryTickets)  # the rest works without it


def test_kit_picks_its_stores(monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer) -> None:
    ring = KeyRing.ephemeral_key()

    def kit(**kwargs: Any) -> ConnectKit:
        made = ConnectKit(**kwargs)
        made.attach(ring, "https://mcp.example.com")
        return made

    default = kit()
    assert default.store_url == "sqlite:"
    assert isinstance(default.tickets, SqliteTickets) and isinstance(default.vault.store, SqliteVaultStore)
    monkeypatch.setenv(ENV_STORE, redis_server.url)
    from_env = kit()
    assert isinstance(from_env.tickets, RedisTickets) and isinstance(from_env.vault.store, RedisVaultStore)
    explicit = kit(store="memory:")  # the argument wins over the environment
    assert isinstance(explicit.tickets, MemoryTickets) and isinstance(explicit.vault.store, MemoryVaultStore)
    given = SqliteTickets(data_dir() / "mine.sqlite3")
    mixed = kit(tickets=given)  # given stores win; the other comes from the URL
    assert mixed.tickets is given and isinstance(mixed.vault.store, RedisVaultStore)
    for each in (default, from_env, explicit, mixed):
        asyncio.run(each.aclose())


def test_two_kits_on_one_redis_are_one_deployment(monkeypatch: pytest.MonkeyPatch, redis_server: RedisServer) -> None:
    monkeypatch.setenv(ENV_STORE, redis_server.url)
    ring = KeyRing.ephemeral_key()
    principal = f"alice-{uuid.uuid4().hex}"
    one, two = ConnectKit(), ConnectKit()
    for kit in (one, two):
        kit.attach(ring, "https://mcp.example.com")

    async def main() -> None:
        ticket = mint(principal, flow(), "secret:api")
        await one.tickets.put(ticket)
        results = await asyncio.gather(*(k.tickets.complete(ticket.id, principal) for k in (one, two) * 10))
        assert results.count(True) == 1
        await two.vault.put(principal, "api", "sk-shared")
        assert await one.vault.reveal(principal, "api") == "sk-shared"
        await one.aclose()
        await two.aclose()

    asyncio.run(main())


# -- two real servers behind an imaginary load balancer ---------------------------------------------


def _serve(port: int, env: dict[str, str], log: Path) -> RunningServer:
    return start_server(str(SERVERS / "connect_secret.py"), "--log-level", "debug", port=port, log=log, env=env)


def test_two_servers_share_tickets_and_vault(tmp_path: Path, redis_server: RedisServer) -> None:
    """The flow starts on one instance, the browser lands on the other, and the retry on either finishes."""
    port_a, port_b = free_port(), free_port()
    public = f"http://127.0.0.1:{port_a}"  # what the load balancer would be
    ring = f"k1:{base64.b64encode(os.urandom(32)).decode()}"
    shared = {"BATON_TEST_PUBLIC_URL": public, "BATON_STATE_KEYS": ring, ENV_STORE: redis_server.url}
    servers = [  # each its own data directory, as on two hosts: only the key ring and Redis are shared
        _serve(port, {**shared, "BATON_DATA_DIR": str(tmp_path / f"host-{port}")}, tmp_path / f"server-{port}.log")
        for port in (port_a, port_b)
    ]
    try:
        a, b = (f"http://127.0.0.1:{s.port}" for s in servers)
        who = f"alice-{uuid.uuid4().hex[:8]}"
        auth = {"Authorization": f"Bearer {who}"}
        caps = {"elicitation": {"url": {}}}
        first = call(f"{a}/mcp", "weather", {"city": "Oslo"}, caps=caps, **auth).json()["result"]
        ((key, ask),) = first["inputRequests"].items()
        ticket_url = ask["params"]["url"]
        path = ticket_url.removeprefix(public)
        with httpx.Client(base_url=b) as browser:  # the browser reaches instance B
            login = browser.post(f"/connect/login?next={path}", data={"principal": who})
            assert login.status_code == 303
            form = browser.get(path)
            assert form.status_code == 200, form.text
            match = re.search(r"name='csrf' value='([^']+)'", form.text)
            assert match is not None
            done = browser.post(path, data={"secret": "sk-on-b", "csrf": match.group(1)})
            assert done.status_code == 200 and "Connected" in done.text
        again = httpx.get(f"{a}{path}", cookies=browser.cookies)
        assert again.status_code == 410, "instance A sees the ticket B completed"
        final = call(
            f"{b}/mcp",
            "weather",
            {"city": "Oslo"},
            caps=caps,
            state=first["requestState"],
            responses={key: {"action": "accept"}},
            **auth,
        ).json()["result"]
        assert final["resultType"] == "complete", final
        digest = hashlib.sha256(b"sk-on-b").hexdigest()[:16]
        assert digest in final["content"][0]["text"]
        later = call(f"{a}/mcp", "weather", {"city": "Bergen"}, caps=caps, **auth).json()["result"]
        assert later["resultType"] == "complete" and digest in later["content"][0]["text"], "A reads B's vault record"
    finally:
        for server in servers:
            server.stop()
