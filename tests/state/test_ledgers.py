"""The single-use ledger contract (design.md §5) over every backend: memory, SQLite and a real redis-server.

redis-server is started by this module on a free loopback port; if it is not installed the Redis tests
fail (never skip). Run as a script, this file is the worker of the two-process tests.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib.abc
import json
import os
import sqlite3
import stat
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.processes import OutputLine, free_port, spawn
from support.redis_server import RedisServer

from baton.state.keys import data_dir
from baton.state.ledger import (
    ClaimStatus,
    Ledger,
    LedgerConflict,
    LedgerUnavailable,
    token_id,
)
from baton.state.ledger_memory import MemoryLedger
from baton.state.ledger_sqlite import DEFAULT_FILE_NAME, SqliteLedger
from baton.state.ledger_url import ledger_from_url

FRESH, IN_PROGRESS, DONE, FOREIGN = ClaimStatus.FRESH, ClaimStatus.IN_PROGRESS, ClaimStatus.DONE, ClaimStatus.FOREIGN


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(url, redis key prefix): a fresh ledger location for each test."""
    if request.param == "memory":
        return "memory:", ""
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/ledger.sqlite3", ""
    server: RedisServer = request.getfixturevalue("redis_server")
    return server.url, f"test:{uuid.uuid4().hex}:"


def run_with(backend: tuple[str, str], body: Callable[[Ledger], Awaitable[None]]) -> None:
    """Open the ledger inside a fresh event loop, run `body`, and close it."""
    url, prefix = backend

    async def main() -> None:
        async with ledger_from_url(url, redis_prefix=prefix or None) as ledger:
            await body(ledger)

    asyncio.run(main())


def tid(name: str) -> bytes:
    return token_id(f"b1.k1.{name}-{uuid.uuid4().hex}")


def later(seconds: float = 60.0) -> float:
    return time.time() + seconds


def test_claim_in_progress_done_foreign(backend: tuple[str, str]) -> None:
    async def body(ledger: Ledger) -> None:
        t = tid("round")
        assert (await ledger.claim(t, "alice", later())).status is FRESH
        assert (await ledger.claim(t, "alice", later())).status is IN_PROGRESS
        assert (await ledger.claim(t, "mallory", later())).status is FOREIGN
        await ledger.record(t, "alice", b'{"result":"deleted"}', later())
        again = await ledger.claim(t, "alice", later())
        assert again.status is DONE
        assert again.result == b'{"result":"deleted"}'
        foreign = await ledger.claim(t, "mallory", later())
        assert foreign.status is FOREIGN
        assert foreign.result is None  # another principal never sees the result
        assert (await ledger.claim(tid("other"), "alice", later())).status is FRESH

    run_with(backend, body)


def test_only_the_claimer_records_or_releases(backend: tuple[str, str]) -> None:
    async def body(ledger: Ledger) -> None:
        t = tid("round")
        with pytest.raises(LedgerConflict, match="expired or was released"):
            await ledger.record(t, "alice", b"never claimed", later())
        assert (await ledger.claim(t, "alice", later())).status is FRESH
        with pytest.raises(LedgerConflict, match="another principal"):
            await ledger.record(t, "mallory", b"stolen", later())
        await ledger.release(t, "mallory")  # not the holder: nothing happens
        assert (await ledger.claim(t, "alice", later())).status is IN_PROGRESS
        await ledger.release(t, "alice")
        await ledger.release(t, "alice")  # idempotent
        assert (await ledger.claim(t, "bob", later())).status is FRESH  # released: claimable again
        await ledger.record(t, "bob", b"first", later())
        await ledger.record(t, "bob", b"first", later())  # the same reply again (a retry): accepted
        with pytest.raises(LedgerConflict, match="already recorded"):
            await ledger.record(t, "bob", b"second", later())
        await ledger.release(t, "bob")  # a recorded round stays spent
        done = await ledger.claim(t, "bob", later())
        assert (done.status, done.result) == (DONE, b"first")

    run_with(backend, body)


def test_results_come_back_byte_exact(backend: tuple[str, str]) -> None:
    blob = bytes(range(256)) * 4096  # 1 MiB, every byte value
    cases = {"empty": b"", "nul": b"\x00P\x00D", "blob": blob}

    async def body(ledger: Ledger) -> None:
        for name, result in cases.items():
            t = tid(name)
            assert (await ledger.claim(t, "alice", later())).status is FRESH
            await ledger.record(t, "alice", result, later())
            done = await ledger.claim(t, "alice", later())
            assert done.status is DONE
            assert done.result == result

    run_with(backend, body)


def stored_entries(backend: tuple[str, str], redis: RedisServer | None) -> int | None:
    """How many entries the store itself holds (None for memory, which has no store to look into)."""
    url, prefix = backend
    if url.startswith("sqlite://"):
        with sqlite3.connect(url.removeprefix("sqlite://")) as db:
            return int(db.execute("SELECT count(*) FROM baton_ledger").fetchone()[0])
    if redis is not None:
        return len(redis.keys(prefix))
    return None


def test_entries_expire_with_the_token(backend: tuple[str, str], request: pytest.FixtureRequest) -> None:
    redis = request.getfixturevalue("redis_server") if backend[0].startswith("redis") else None
    counts: dict[str, int | None] = {}

    async def body(ledger: Ledger) -> None:
        claimed, recorded, untouched, long_lived, extended = (tid(n) for n in ("a", "b", "c", "d", "e"))
        soon = later(1.5)  # 0.5 s once ran out on two loaded cores before the entries were counted
        for t in (claimed, recorded, untouched, extended):
            assert (await ledger.claim(t, "alice", soon)).status is FRESH
        await ledger.record(recorded, "alice", b"result", soon)
        await ledger.record(extended, "alice", b"kept", later())  # recording sets the entry's new expiry
        assert (await ledger.claim(long_lived, "alice", later())).status is FRESH
        counts["before"] = stored_entries(backend, redis)
        await asyncio.sleep(max(0.0, soon - time.time()) + 0.3)
        purged = await ledger.purge()
        counts["after"] = stored_entries(backend, redis)
        if not backend[0].startswith("redis"):
            assert purged == 3
        with pytest.raises(LedgerConflict, match="expired"):
            await ledger.record(claimed, "alice", b"too late", later())
        assert (await ledger.claim(claimed, "mallory", later())).status is FRESH  # gone, not FOREIGN
        assert (await ledger.claim(recorded, "alice", later())).status is FRESH  # its result is gone too
        assert (await ledger.claim(long_lived, "alice", later())).status is IN_PROGRESS
        kept = await ledger.claim(extended, "alice", later())
        assert (kept.status, kept.result) == (DONE, b"kept")

    run_with(backend, body)
    if backend[0] != "memory:":
        assert counts == {"before": 5, "after": 2}


def test_claim_already_past_its_expiry_is_not_an_error(backend: tuple[str, str]) -> None:
    async def body(ledger: Ledger) -> None:
        t = tid("late")
        assert (await ledger.claim(t, "alice", time.time() - 5)).status is FRESH
        assert (await ledger.claim(t, "mallory", later())).status is FRESH  # nothing was kept

    run_with(backend, body)


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_periodic_purge_runs_on_claims(kind: str, tmp_path: Path) -> None:
    path = tmp_path / "ledger.sqlite3"

    async def main() -> None:
        ledger: Ledger = MemoryLedger(purge_every_s=0.2) if kind == "memory" else SqliteLedger(path, purge_every_s=0.2)
        async with ledger:
            for i in range(20):
                await ledger.claim(tid(f"old{i}"), "alice", later(0.1))
            await asyncio.sleep(0.5)
            await ledger.claim(tid("new"), "alice", later())  # triggers the purge, nobody calls purge()
            assert await ledger.purge() == 0
            if kind == "sqlite":
                assert stat.S_IMODE(path.stat().st_mode) == 0o600  # replies rest there: private
                with sqlite3.connect(path) as db:
                    assert db.execute("SELECT count(*) FROM baton_ledger").fetchone()[0] == 1

    asyncio.run(main())


def test_concurrent_claims_have_one_winner(backend: tuple[str, str]) -> None:
    async def body(ledger: Ledger) -> None:
        t = tid("same-principal")
        claims = await asyncio.gather(*(ledger.claim(t, "alice", later()) for _ in range(50)))
        statuses = [c.status for c in claims]
        assert statuses.count(FRESH) == 1
        assert statuses.count(IN_PROGRESS) == 49
        t = tid("many-principals")
        claims = await asyncio.gather(*(ledger.claim(t, f"user{i}", later()) for i in range(50)))
        statuses = [c.status for c in claims]
        assert statuses.count(FRESH) == 1
        assert statuses.count(FOREIGN) == 49

    run_with(backend, body)


def test_cancelled_claim_leaves_the_token_claimable(backend: tuple[str, str]) -> None:
    async def body(ledger: Ledger) -> None:
        for steps in (0, 1):
            t = tid(f"cancelled-after-{steps}")
            task = asyncio.ensure_future(ledger.claim(t, "alice", later()))
            for _ in range(steps):
                await asyncio.sleep(0)  # the claim is on its way to the backend
            task.cancel()
            try:
                claim = await task
            except asyncio.CancelledError:
                pass
            else:  # the memory ledger answers within one step: then the caller owns the claim
                assert backend[0] == "memory:"
                assert claim.status is FRESH
                await ledger.release(t, "alice")
            await asyncio.sleep(0.3)  # a claim that landed after the cancel is released again
            assert (await ledger.claim(t, "alice", later())).status is FRESH

    run_with(backend, body)


WORKER_TOKENS = 200


def worker_token(prefix: str, i: int) -> bytes:
    return hashlib.sha256(f"{prefix}:{i}".encode()).digest()


async def worker(url: str, prefix: str) -> dict[str, Any]:
    """One OS process of the two-process test: wait for `go AT`, then at time AT claim every token at once."""
    async with ledger_from_url(url, redis_prefix=prefix or None) as ledger:
        await asyncio.gather(*(ledger.ping() for _ in range(64)))  # warm a Redis connection pool up
        print("ready", flush=True)
        go = await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline)
        await asyncio.sleep(float(go.split()[1]) - time.time())
        claims = await asyncio.gather(
            *(ledger.claim(worker_token(prefix, i), "alice", later()) for i in range(WORKER_TOKENS))
        )
    return {
        "fresh": [i for i, c in enumerate(claims) if c.status is FRESH],
        "in_progress": sum(c.status is IN_PROGRESS for c in claims),
    }


@pytest.mark.parametrize(
    "kind", [pytest.param("sqlite", marks=pytest.mark.process), pytest.param("redis", marks=pytest.mark.redis)]
)
def test_two_processes_claim_each_token_once(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if kind == "sqlite":
        url, prefix = f"sqlite://{tmp_path}/shared.sqlite3", ""
    else:
        url, prefix = request.getfixturevalue("redis_server").url, f"test:{uuid.uuid4().hex}:"
    workers = [
        spawn(
            [sys.executable, __file__, url, prefix or "-"],
            env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[1])},  # tests/: its `support` imports
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        for _ in range(2)
    ]
    procs = [worker.proc for worker in workers]
    try:
        for worker in workers:
            worker.wait_ready(OutputLine("ready"), timeout=60)
        start = f"go {time.time() + 0.3}\n".encode()  # both start together, whatever their wake-up delay
        for proc in procs:
            assert proc.stdin is not None
            proc.stdin.write(start)
            proc.stdin.flush()
        outputs = [proc.communicate(timeout=60) for proc in procs]
    finally:
        for worker in workers:
            worker.stop()
    for proc, (_, err) in zip(procs, outputs, strict=True):
        assert proc.returncode == 0, err.decode()
    results = [json.loads(out) for out, _ in outputs]
    first, second = (set(r["fresh"]) for r in results)
    assert not first & second, "a token was FRESH in both processes"
    assert first | second == set(range(WORKER_TOKENS))
    for r in results:
        assert len(r["fresh"]) + r["in_progress"] == WORKER_TOKENS


def test_ping_and_close(backend: tuple[str, str]) -> None:
    url, prefix = backend

    async def main() -> None:
        ledger = ledger_from_url(url, redis_prefix=prefix or None)
        await ledger.ping()
        await ledger.close()
        await ledger.close()  # idempotent
        for call in (ledger.ping(), ledger.claim(tid("x"), "alice", later()), ledger.release(tid("x"), "alice")):
            with pytest.raises(LedgerUnavailable, match="closed"):
                await call

    asyncio.run(main())


def test_sqlite_unreachable_fails_closed(tmp_path: Path) -> None:
    blocker = tmp_path / "not-a-directory"
    blocker.write_text("")

    async def main() -> None:
        async with SqliteLedger(blocker / "ledger.sqlite3") as ledger:
            with pytest.raises(LedgerUnavailable, match="not-a-directory"):
                await ledger.ping()
            with pytest.raises(LedgerUnavailable):
                await ledger.claim(tid("x"), "alice", later())

    asyncio.run(main())


@pytest.mark.process
def test_redis_unreachable_fails_closed() -> None:
    async def main() -> None:
        async with ledger_from_url(f"redis://:hunter2@127.0.0.1:{free_port()}/0") as ledger:
            started = time.monotonic()
            with pytest.raises(LedgerUnavailable, match="Redis ledger at") as info:
                await ledger.claim(tid("x"), "alice", later())
            assert time.monotonic() - started < 5
            assert "hunter2" not in str(info.value)

    asyncio.run(main())


@pytest.mark.redis
def test_redis_outage_fails_closed_then_recovers(tmp_path: Path) -> None:
    server = RedisServer(tmp_path)
    server.start()
    try:

        async def main() -> None:
            async with ledger_from_url(server.url) as ledger:
                t = tid("before")
                assert (await ledger.claim(t, "alice", later())).status is FRESH
                server.stop()
                with pytest.raises(LedgerUnavailable):
                    await ledger.claim(tid("during"), "alice", later())
                with pytest.raises(LedgerUnavailable):
                    await ledger.record(t, "alice", b"result", later())
                with pytest.raises(LedgerUnavailable):
                    await ledger.ping()
                server.start()  # same port, same ledger object
                await ledger.ping()
                after = tid("after")
                assert (await ledger.claim(after, "alice", later())).status is FRESH
                await ledger.record(after, "alice", b"ok", later())
                assert (await ledger.claim(after, "alice", later())).status is DONE

        asyncio.run(main())
    finally:
        server.stop()


def test_ledger_from_url(tmp_path: Path) -> None:
    async def main() -> None:
        for url, kind in [
            ("memory:", MemoryLedger),
            (f"sqlite://{tmp_path}/a.sqlite3", SqliteLedger),
            ("sqlite:", SqliteLedger),
        ]:
            async with ledger_from_url(url) as ledger:
                assert isinstance(ledger, kind)
                await ledger.ping()
        default = ledger_from_url("sqlite:")
        assert isinstance(default, SqliteLedger)
        assert default.path == data_dir() / DEFAULT_FILE_NAME
        await default.close()

    asyncio.run(main())
    assert (tmp_path / "a.sqlite3").exists()
    for bad in ["ledger.db", "postgres://db/x", "memory://somewhere", "sqlite:relative.db"]:
        with pytest.raises(ValueError, match="ledger URL"):
            ledger_from_url(bad)


def test_token_ids_are_fixed_length() -> None:
    assert len(token_id("b1.k1.abc")) == 32
    assert token_id("b1.k1.abc") != token_id("b1.k1.abd")

    async def main() -> None:
        async with MemoryLedger() as ledger:
            with pytest.raises(ValueError, match="32 bytes"):
                await ledger.claim(b"short", "alice", later())

    asyncio.run(main())


if __name__ == "__main__":
    arg_url, arg_prefix = sys.argv[1], sys.argv[2]
    print(json.dumps(asyncio.run(worker(arg_url, "" if arg_prefix == "-" else arg_prefix))))


class _NoRedis(importlib.abc.MetaPathFinder):
    """Makes `import redis` fail as it does where the package is not installed."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> None:
        if fullname == "redis" or fullname.startswith("redis."):
            raise ModuleNotFoundError(f"No module named {fullname!r}", name=fullname)


def test_a_redis_ledger_url_without_the_package_names_the_fix_and_hides_the_password(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in [m for m in sys.modules if m == "redis" or m.startswith(("redis.", "baton.state.ledger_redis"))]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setattr(sys, "meta_path", [_NoRedis(), *sys.meta_path])
    with pytest.raises(ValueError, match="needs the redis package") as caught:
        ledger_from_url("redis://:hunter2@127.0.0.1:6379/0")
    assert "hunter2" not in str(caught.value) and "***" in str(caught.value)


def test_a_redis_ledger_url_with_a_database_that_is_not_a_number_is_refused() -> None:
    with pytest.raises(ValueError, match="the database is a number") as caught:
        ledger_from_url("redis://:hunter2@127.0.0.1:6379/not-a-number")
    assert "hunter2" not in str(caught.value)
