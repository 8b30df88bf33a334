"""Properties of sealed `requestState` and of the single-use ledger, checked by hypothesis (issue 25):

- seal then open gives back the same flow state, for any journal and through any key-ring rotation in
  which the sealing key stays in the ring; once it is gone, the token no longer opens;
- a token opens only for the same request (tool, arguments), principal and audience;
- under concurrent claims of one round token a ledger has exactly one winner, on memory, SQLite and a real
  redis-server (several ledger instances on one store, as several workers would be).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from support.redis_server import RedisServer

from baton.server.replay import request_binding
from baton.state import InvalidState, Journal, Key, KeyRing, Sealer
from baton.state.ledger import ClaimStatus, token_id
from baton.state.ledger_url import ledger_from_url
from baton.state.seal import FlowState

SLOW = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
"""For the ledgers on a real store: each example runs its own event loop and connections."""

# JSON values as the wire parser produces them (orjson: 64-bit integers, finite floats).
json_values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
keys = st.text(min_size=1, max_size=12)
journals = st.builds(
    Journal,
    answers=st.dictionaries(keys, st.tuples(st.text(max_size=16), json_values), max_size=4),
    pending=st.dictionaries(keys, st.text(max_size=16), max_size=4),
    once=st.dictionaries(keys, json_values, max_size=4),
    trace=st.text(max_size=40),
)
states = st.builds(
    FlowState, flow_id=st.binary(min_size=16, max_size=16), round=st.integers(0, 0xFFFF), journal=journals
)
kids = st.from_regex(r"[A-Za-z0-9_-]{1,16}", fullmatch=True)
principals = st.text(max_size=40)
arguments = st.dictionaries(st.text(max_size=10), json_values, max_size=4)


def sealer(ring: KeyRing, audience: str = "https://mcp.example/mcp") -> Sealer:
    return Sealer(ring, audience, max_bytes=1 << 20)


@given(
    state=states,
    principal=principals,
    tool=st.text(max_size=20),
    args=arguments,
    old=kids,
    new=kids,
    others=st.lists(kids, max_size=3),
)
def test_seal_then_open_round_trips_through_any_rotation(
    state: FlowState, principal: str, tool: str, args: dict[str, Any], old: str, new: str, others: list[str]
) -> None:
    request = request_binding("tools/call", tool, args)
    old_key = Key.generate(old)
    token = sealer(KeyRing([old_key])).seal(state, principal, request)
    # Rotation: a new key seals, the old one still opens; other keys may come and go around them.
    extra = [Key.generate(k) for k in dict.fromkeys(others) if k not in (old, new)]
    rotated = [Key.generate(new), *extra, old_key] if new != old else [old_key, *extra]
    for ring in (KeyRing([old_key]), KeyRing(rotated)):
        opened = sealer(ring).open(token, principal, request)
        assert (opened.flow_id, opened.round) == (state.flow_id, state.round)
        assert opened.journal == state.journal
        assert opened.journal.dumps() == state.journal.dumps()
    # The old key retired: the token opens nowhere, not even under a new key of the same id.
    retired = [k for k in rotated if k.kid != old] or [Key.generate("z" if old != "z" else "y")]
    with pytest.raises(InvalidState):
        sealer(KeyRing(retired)).open(token, principal, request)
    with pytest.raises(InvalidState):
        sealer(KeyRing([Key.generate(old)])).open(token, principal, request)


bindings = st.tuples(st.sampled_from(["tools/call", "prompts/get", "resources/read"]), st.text(max_size=12), arguments)


@given(
    state=states,
    sealed_for=st.tuples(bindings, principals, st.text(max_size=20)),
    presented=st.tuples(bindings, principals, st.text(max_size=20)),
)
def test_a_state_opens_only_for_the_same_request_principal_and_audience(
    state: FlowState,
    sealed_for: tuple[tuple[str, str, dict[str, Any]], str, str],
    presented: tuple[tuple[str, str, dict[str, Any]], str, str],
) -> None:
    ring = KeyRing([Key.generate("k1")])
    (method, target, args), principal, audience = sealed_for
    token = sealer(ring, audience).seal(state, principal, request_binding(method, target, args))
    (method2, target2, args2), principal2, audience2 = presented
    same = (
        request_binding(method, target, args) == request_binding(method2, target2, args2)
        and principal == principal2
        and audience == audience2
    )
    other = sealer(ring, audience2)
    if same:
        assert other.open(token, principal2, request_binding(method2, target2, args2)).journal == state.journal
    else:
        with pytest.raises(InvalidState):
            other.open(token, principal2, request_binding(method2, target2, args2))


@given(state=states, args=arguments, change=st.sampled_from(["tool", "argument", "principal", "audience"]))
def test_any_one_difference_in_the_binding_refuses_the_state(
    state: FlowState, args: dict[str, Any], change: str
) -> None:
    """The same property with the presented binding one step away from the sealed one (random pairs above
    are almost always far apart)."""
    ring = KeyRing([Key.generate("k1")])
    token = sealer(ring, "aud").seal(state, "alice", request_binding("tools/call", "t", args))
    tool, presented_args, principal, audience = "t", dict(args), "alice", "aud"
    if change == "tool":
        tool = "t2"
    elif change == "argument":
        presented_args["\x00extra"] = None
    elif change == "principal":
        principal = "alice "
    else:
        audience = "aud/"
    with pytest.raises(InvalidState):
        sealer(ring, audience).open(token, principal, request_binding("tools/call", tool, presented_args))


# -- the ledger ----------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def sqlite_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("ledger")


@pytest.fixture(params=["memory", "sqlite", pytest.param("redis", marks=pytest.mark.redis)])
def store(request: pytest.FixtureRequest, sqlite_dir: Path) -> str:
    if request.param == "memory":
        return "memory:"
    if request.param == "sqlite":
        return f"sqlite://{sqlite_dir}/ledger.sqlite3"
    server: RedisServer = request.getfixturevalue("redis_server")
    return server.url


@SLOW
@given(
    claimants=st.lists(st.sampled_from(["alice", "bob", "carol"]), min_size=2, max_size=24),
    instances=st.integers(1, 3),
    then=st.sampled_from(["record", "release"]),
)
def test_a_claim_succeeds_exactly_once_under_concurrent_claims(
    store: str, claimants: list[str], instances: int, then: str
) -> None:
    if store == "memory:":
        instances = 1  # a memory ledger is one process's: no other instance shares it
    prefix = f"prop:{uuid.uuid4().hex}:"

    async def main() -> None:
        ledgers = [ledger_from_url(store, redis_prefix=prefix) for _ in range(instances)]
        try:
            token = token_id(f"b1.k1.{uuid.uuid4().hex}")
            expires = time.time() + 600

            async def claim_all() -> list[tuple[str, ClaimStatus, bytes | None]]:
                claims = await asyncio.gather(
                    *(ledgers[i % instances].claim(token, who, expires) for i, who in enumerate(claimants))
                )
                return [(who, c.status, c.result) for who, c in zip(claimants, claims, strict=True)]

            first = await claim_all()
            winners = [who for who, status, _ in first if status is ClaimStatus.FRESH]
            assert len(winners) == 1, first
            winner = winners[0]
            for who, status, _ in first:
                if status is not ClaimStatus.FRESH:
                    assert status is (ClaimStatus.IN_PROGRESS if who == winner else ClaimStatus.FOREIGN), first
            if then == "record":
                await ledgers[0].record(token, winner, b"reply", expires)
                for who, status, result in await claim_all():
                    if who == winner:
                        assert (status, result) == (ClaimStatus.DONE, b"reply")
                    else:
                        assert (status, result) == (ClaimStatus.FOREIGN, None)
            else:
                await ledgers[-1].release(token, winner)
                again = await claim_all()
                assert [s for _, s, _ in again].count(ClaimStatus.FRESH) == 1, again
        finally:
            for ledger in ledgers:
                await ledger.close()

    asyncio.run(main())
