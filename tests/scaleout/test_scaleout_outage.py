"""Single-use rounds cut by Redis going away: a restart after the round ran, and a stall during its claim.

The final round of `held_transfer` runs its transfer, then holds its reply until the test opens a
gate; the test stops Redis in between, so the server's `record` fails. The client is told -32603 and,
following "try again later", sends the same round again once Redis is back. What happens then depends
on Redis persistence, which is why docs/deploy.md asks for the append-only file:

- with AOF, the claim survived the restart: the round never runs again, and the server, which kept
  trying to record the reply, has recorded it by the time Redis is back: the retry receives it;
- without persistence, Redis forgot the claim: the retry runs the transfer a second time.

A stall (redis-server SIGSTOPped for longer than the ledger's timeouts, as in a network partition)
during the claim fails the round closed with nothing run; the claim that lands when Redis resumes is
withdrawn by the server, so a retry runs the round (once).
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from loaddriver import LEDGER_DOWN
from scaleout import Cluster
from support.markers import needs
from wire import accept, call

pytestmark = pytest.mark.scaleout

FLOW = "held-1"
RETRY_S = 5.0


@dataclass
class Interrupted:
    refused: dict[str, Any]  # the reply to the round Redis went away under
    retries: list[dict[str, Any]]  # the replies to the same round sent again after the restart
    runs: int  # how many times the transfer ran in all


def final_round(cluster: Cluster, flow: str = FLOW) -> Callable[[], dict[str, Any]]:
    """Run round 1 of `held_transfer`; returns a function that sends its final round (again)."""
    first = call(cluster.url, "held_transfer", {"flow": flow}).json()["result"]

    def final() -> dict[str, Any]:
        answer = {"q1": accept(confirm=True)}
        reply = call(cluster.url, "held_transfer", {"flow": flow}, responses=answer, state=first["requestState"])
        return dict(reply.json())

    return final


def retry_for_a_while(final: Callable[[], dict[str, Any]]) -> list[dict[str, Any]]:
    """A client following "try again later": the same round until it is answered, for RETRY_S at most."""
    retries = []
    deadline = time.monotonic() + RETRY_S
    while time.monotonic() < deadline:
        retries.append(final())
        result = retries[-1].get("result") or {}
        if "error" in retries[-1] or "inputRequests" in result or result.get("resultType") == "complete":
            break
        time.sleep(0.2)  # state only: the round is "still running"
    return retries


def interrupt_final_round(workdir: Path, *, persistent: bool) -> Iterator[Interrupted]:
    gate = workdir / "gate"
    cluster = Cluster(workdir, count=1, persistent_redis=persistent, env={"BATON_TEST_GATE": str(gate)})
    try:
        cluster.start()
        final = final_round(cluster)
        with ThreadPoolExecutor(1) as pool:
            pending = pool.submit(final)
            deadline = time.monotonic() + 20
            while cluster.executions()[FLOW] == 0 and time.monotonic() < deadline:
                time.sleep(0.02)
            assert cluster.executions()[FLOW] == 1, "the final round never ran"
            cluster.redis.stop()  # the round ran; now its reply cannot be recorded
            gate.touch()
            refused = pending.result(timeout=30)
        cluster.redis.start()
        yield Interrupted(refused, retry_for_a_while(final), cluster.executions()[FLOW])
    finally:
        cluster.close()


def stall_during_claim(workdir: Path) -> Iterator[Interrupted]:
    (workdir / "gate").touch()  # the round does not hold its reply here
    cluster = Cluster(workdir, count=1, env={"BATON_TEST_GATE": str(workdir / "gate")})
    try:
        cluster.start()
        warm = final_round(cluster, "warm-up")()  # the ledger now holds an open connection to Redis
        assert warm["result"]["resultType"] == "complete", warm
        final = final_round(cluster)
        assert cluster.redis.proc is not None
        redis_pid = cluster.redis.proc.pid
        cluster.redis.proc.send_signal(signal.SIGSTOP)  # Redis accepts connections but answers nothing
        try:
            refused = final()  # the claim times out (the ledger retries once) and fails closed
        finally:
            cluster.redis.proc.send_signal(signal.SIGCONT)  # the claim sent on the open connection lands now
        assert cluster.redis.proc.pid == redis_pid
        time.sleep(0.5)
        yield Interrupted(refused, retry_for_a_while(final), cluster.executions()[FLOW])
    finally:
        cluster.close()


@pytest.fixture(scope="module")
@needs("nginx", "redis")
def with_aof(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interrupted]:
    yield from interrupt_final_round(tmp_path_factory.mktemp("aof"), persistent=True)


@pytest.fixture(scope="module")
@needs("nginx", "redis")
def without_persistence(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interrupted]:
    yield from interrupt_final_round(tmp_path_factory.mktemp("no-persistence"), persistent=False)


@pytest.fixture(scope="module")
@needs("nginx", "redis")
def stalled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Interrupted]:
    yield from stall_during_claim(tmp_path_factory.mktemp("stall"))


def test_with_aof_the_round_never_runs_twice(with_aof: Interrupted) -> None:
    assert with_aof.refused["error"]["code"] == -32603
    assert LEDGER_DOWN in with_aof.refused["error"]["message"]
    assert with_aof.runs == 1
    for reply in with_aof.retries:  # state-only "still running", or the recorded result
        result = reply["result"]
        assert "inputRequests" not in result, reply
        assert result.get("resultType") == "input_required" or result["content"][0]["text"].startswith("done"), reply


def test_with_aof_the_client_gets_the_reply_once_redis_is_back(with_aof: Interrupted) -> None:
    last = with_aof.retries[-1]
    assert last["result"].get("resultType") == "complete", f"after {RETRY_S} s of retries: {last}"
    assert with_aof.runs == 1


def test_the_error_does_not_say_the_round_was_not_run(with_aof: Interrupted) -> None:
    assert with_aof.runs == 1
    assert "not run" not in with_aof.refused["error"]["message"], with_aof.refused


def test_without_persistence_a_restart_forgets_the_claim(without_persistence: Interrupted) -> None:
    """What docs/deploy.md warns about: the retry after the restart runs the transfer a second time."""
    assert without_persistence.refused["error"]["code"] == -32603
    assert without_persistence.retries[-1]["result"]["resultType"] == "complete"
    assert without_persistence.runs == 2


def test_a_stall_during_the_claim_fails_closed(stalled: Interrupted) -> None:
    assert stalled.refused["error"]["code"] == -32603
    assert LEDGER_DOWN in stalled.refused["error"]["message"]
    assert stalled.runs <= 1
    for reply in stalled.retries:
        assert "error" in reply or "inputRequests" not in reply["result"], reply


def test_after_a_stall_the_round_can_be_retried(stalled: Interrupted) -> None:
    last = stalled.retries[-1]
    assert last.get("result", {}).get("resultType") == "complete", f"after {RETRY_S} s of retries: {last}"
    assert stalled.runs == 1
