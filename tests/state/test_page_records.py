"""What waits for the server's page, in each ledger backend (protocol.md P147): a record is found only by the
call of its own principal, tool and arguments, written once, and sealed (the backend never holds it in clear)."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path

import pytest
from support.redis_server import RedisServer

from baton.connect.parked import PageRecords
from baton.state.keys import KeyRing
from baton.state.ledger import ClaimStatus
from baton.state.ledger_url import ledger_from_url

BINDING = b"\0\0\0\x0atools/call\0\0\0\x0edelete_project" + b'{"project_id":"apollo"}'


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "memory":
        return "memory:"
    if request.param == "sqlite":
        return f"sqlite://{tmp_path}/ledger.sqlite3"
    server: RedisServer = request.getfixturevalue("redis_server")
    return str(server.url)


def test_a_record_is_its_principals_sealed_and_written_once(url: str) -> None:
    async def main() -> None:
        prefix = f"test:{uuid.uuid4().hex}:" if url.startswith("redis") else None
        ledger = ledger_from_url(url, redis_prefix=prefix)
        records = PageRecords(KeyRing.ephemeral_key(), lambda: ledger)
        alice = records.rid("answer", "alice", BINDING, 0, 0)
        assert alice != records.rid("answer", "bob", BINDING, 0, 0)  # Bob's identical call looks elsewhere
        assert alice != records.rid("answer", "alice", BINDING + b" ", 0, 0)  # other arguments, elsewhere
        answer = {"j": '{"a":{"q1":["AAAAAAAAAAA",{"action":"accept","content":{"confirm":true}}]}}'}
        assert await records.read(alice, "alice") is None  # a miss leaves nothing claimed
        assert await records.write(alice, "alice", answer, 60) == answer
        assert await records.read(alice, "alice") == answer
        assert await records.read(alice, "bob") is None  # even Bob with Alice's id finds nothing
        assert await records.write(alice, "alice", {"j": "{}"}, 60) == answer  # written once: the first stays
        held = await ledger.claim(alice, "alice", 0)
        assert held.status is ClaimStatus.DONE and held.result is not None
        assert b"confirm" not in held.result and b"accept" not in held.result  # sealed at rest
        await ledger.close()

    asyncio.run(main())
