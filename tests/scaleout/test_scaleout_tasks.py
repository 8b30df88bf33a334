"""A task survives the instance that ran it (protocol.md P174): two `baton serve` instances behind the shipped
nginx configuration, sharing Redis. A task of `ctx.once` steps starts on one instance; that instance is
SIGKILLed in the middle of a step; polling `tasks/get` through nginx reaches the other, which takes the task
over once its lease runs out and finishes it, replaying over the journal: the steps that had ended do not run
again; with nobody polling, the other instance's sweep finds the orphaned round and finishes it (P206). Every
process is started by tests/scaleout.py on loopback and stopped at teardown."""

from __future__ import annotations

import collections
import itertools
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from scaleout import Cluster, running_cluster
from support.markers import needs
from support.paths import SERVERS

pytestmark = pytest.mark.scaleout

STEPS, PAUSE_S = 6, 0.5
_ids = itertools.count(1)
META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
}


@pytest.fixture
@needs("nginx", "redis")
def cluster(tmp_path: Path) -> Iterator[Cluster]:
    target = str(SERVERS / "tasks_server.py")
    yield from running_cluster(tmp_path, count=2, target=target, env={"BATON_TEST_TASK_LEASE_MS": "1000"})


def send(http: httpx.Client, url: str, method: str, params: dict[str, Any], name: str) -> tuple[dict[str, Any], str]:
    """One 2026-07-28 request through nginx: its result, and the instance that answered."""
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": method,
        "Mcp-Name": name,
    }
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": {**params, "_meta": META}}
    response = http.post(url, json=body, headers=headers)
    reply = response.json()
    assert "result" in reply, reply
    return reply["result"], response.headers.get("baton-instance", "?")


def runs(cluster: Cluster) -> list[tuple[str, str]]:
    log = cluster.runlog
    return [(w[0], w[1]) for w in (line.split() for line in log.read_text().splitlines())] if log.exists() else []


def start_then_kill(http: httpx.Client, cluster: Cluster) -> tuple[str, str, list[tuple[str, str]]]:
    """Start the task, kill its instance in the middle of its third step: (task id, killed instance, the steps
    logged before the kill)."""
    arguments = {"n": STEPS, "pause": PAUSE_S}
    created, first = send(http, cluster.url, "tools/call", {"name": "steps", "arguments": arguments}, "steps")
    assert created["resultType"] == "task", created
    deadline = time.monotonic() + 20
    while len(runs(cluster)) < 2 and time.monotonic() < deadline:
        time.sleep(0.02)
    time.sleep(PAUSE_S / 2)  # in the middle of the third step
    cluster.instance(first).kill()
    return created["taskId"], first, runs(cluster)


def test_a_task_survives_the_death_of_its_instance(cluster: Cluster) -> None:
    with httpx.Client(timeout=10) as http:
        task_id, first, before_kill = start_then_kill(http, cluster)
        killed_at = time.monotonic()
        deadline = killed_at + 20

        status, seen = "working", set()
        while status not in ("completed", "failed", "cancelled") and time.monotonic() < deadline + 20:
            task, by = send(http, cluster.url, "tasks/get", {"taskId": task_id}, task_id)
            status = task["status"]
            seen.add(by)
            time.sleep(0.1)
        taken_after = time.monotonic() - killed_at

    assert status == "completed", cluster.logs()
    assert task["result"]["content"][0]["text"] == f"{STEPS} steps done"
    done = runs(cluster)
    counts = collections.Counter(step for step, _ in done)
    assert set(counts) == {f"step{i}" for i in range(STEPS)}, done
    # A step that another step followed before the kill had its result written (the next one starts only after
    # that write): it never runs again. The last one logged may have been cut off before its result was written
    # (on a loaded machine that write can outlast the pause before the kill), and may run once more.
    journaled = [step for step, _ in before_kill[:-1]]
    assert journaled and all(counts[step] == 1 for step in journaled), (before_kill, done)
    assert sum(counts.values()) <= STEPS + 1, done  # at most the step cut off mid-way ran twice
    survivor = next(i.name for i in cluster.instances if i.name != first)
    assert {instance for step, instance in done if step == f"step{STEPS - 1}"} == {survivor}
    assert taken_after < 15, f"took {taken_after:.1f} s after the kill"


def test_an_orphaned_task_is_finished_with_nobody_polling_it(cluster: Cluster) -> None:
    """protocol.md P206: after the kill nobody asks about the task; the surviving instance's sweep finds the
    round whose lease ran out and finishes it."""
    with httpx.Client(timeout=10) as http:
        task_id, first, _ = start_then_kill(http, cluster)
        deadline = time.monotonic() + 30
        while len({step for step, _ in runs(cluster)}) < STEPS and time.monotonic() < deadline:
            time.sleep(0.1)
        done = runs(cluster)
        assert {step for step, _ in done} == {f"step{i}" for i in range(STEPS)}, (done, cluster.logs())
        survivor = next(i.name for i in cluster.instances if i.name != first)
        assert {instance for step, instance in done if step == f"step{STEPS - 1}"} == {survivor}
        time.sleep(0.5)  # the last step's result, then the task's end, are written after its log line
        task, _ = send(http, cluster.url, "tasks/get", {"taskId": task_id}, task_id)
    assert task["status"] == "completed", task
