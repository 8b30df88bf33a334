"""Scale-out: three independent instances behind a real nginx (spread, no affinity), sharing only a key file and Redis.

Soak: 64 concurrent flows for BATON_SOAK_S seconds (60 by default): no errors, every flow executed
exactly once, rounds of one flow served by different instances, each instance's RSS flat after warm-up.
Faults, each under load of its own: an instance SIGKILLed between rounds, Redis restarted, the key
rotated. Every process is started by tests/scaleout.py on loopback and stopped at teardown.
"""

from __future__ import annotations

import asyncio
import collections
import os
import time
from collections.abc import Callable
from typing import Any

import pytest
from loaddriver import LEDGER_DOWN, Driver, Flow
from scaleout import Cluster, fixtures, run

pytestmark = pytest.mark.scaleout

SOAK_S = float(os.environ.get("BATON_SOAK_S", "60"))
WARMUP_S = min(15.0, SOAK_S / 4)
RSS_GROWTH_MAX = 0.05
CONCURRENCY = 64
NAMES = {"a", "b", "c"}


cluster, report = fixtures("scaleout")


def failures(flows: list[Flow]) -> list[str]:
    return [f"{f.flow_id}: {f.error} via {f.instances}" for f in flows if not f.complete]


def assert_each_ran_once(cluster: Cluster, flows: list[Flow]) -> None:
    """Completed flows ran exactly once and got the reply of that run; no flow ran twice; none ran unknown."""
    runs = cluster.executions()
    doubled = {flow: n for flow, n in runs.items() if n > 1}
    assert not doubled, f"flows executed more than once: {doubled}"
    ids = {f.flow_id for f in flows}
    assert set(runs) <= ids, f"executions of unknown flows: {sorted(set(runs) - ids)[:5]}"
    lost = [f.flow_id for f in flows if f.complete and runs[f.flow_id] != 1]
    assert not lost, f"flows completed without their execution on record: {lost[:5]}"
    ran_on = cluster.executed_on()
    for f in flows:
        if f.complete:
            assert f.text == f"done {f.flow_id} on {ran_on[f.flow_id]}: note {f.flow_id}", f.text


def replayed(cluster: Cluster, flows: list[Flow]) -> int:
    """Completed flows whose result came from another instance than the one that ran them: a recorded reply."""
    ran_on = cluster.executed_on()
    return sum(f.complete and f.instances[-1] != ran_on[f.flow_id] for f in flows)


def crossed(flows: list[Flow]) -> int:
    """Flows whose rounds were served by more than one instance."""
    return sum(len(set(f.instances)) > 1 for f in flows)


# -- soak ------------------------------------------------------------------------------------------------


def test_soak_64_flows_through_nginx(cluster: Cluster, report: Callable[[str], None]) -> None:
    rss: dict[str, list[int]] = {i.name: [] for i in cluster.instances}
    at_warm: dict[str, int] = {}

    async def main() -> list[Flow]:
        driver = Driver(cluster.url)
        load = asyncio.ensure_future(driver.load(concurrency=CONCURRENCY, duration_s=SOAK_S, prefix="soak"))
        started = time.monotonic()
        while not load.done():
            await asyncio.wait([load], timeout=1.0)
            for instance in cluster.instances:
                rss[instance.name].append(instance.rss_kib())
            if not at_warm and time.monotonic() - started >= WARMUP_S:
                at_warm.update({name: samples[-1] for name, samples in rss.items()})
        await driver.close()
        return load.result()

    started = time.monotonic()
    flows = run(main)
    elapsed = time.monotonic() - started
    assert not failures(flows), f"{len(failures(flows))} failed flows: {failures(flows)[:5]}\n{cluster.logs()}"
    assert_each_ran_once(cluster, flows)
    assert all(len(f.rounds) == 3 and len(f.legs) == 3 for f in flows), "a flow needed a retry"
    assert replayed(cluster, flows) == 0
    served = collections.Counter(name for f in flows for name in f.instances)
    assert set(served) == NAMES, served
    assert cluster.nginx is not None and cluster.nginx.logged_instances() == served  # nginx logs them too
    assert crossed(flows) >= len(flows) // 2, f"only {crossed(flows)} of {len(flows)} flows crossed instances"
    report(
        f"soak {SOAK_S:.0f} s, {CONCURRENCY} concurrent: {len(flows)} flows in {elapsed:.1f} s = "
        f"{len(flows) / elapsed:.0f} flows/s ({3 * len(flows) / elapsed:.0f} rounds/s), 0 errors, "
        f"each executed once; {crossed(flows)} flows ({100 * crossed(flows) / len(flows):.0f} %) crossed "
        f"instances; rounds per instance {dict(sorted(served.items()))}"
    )
    growth = {}
    for name, samples in rss.items():
        end = samples[-1]
        growth[name] = (end - at_warm[name]) / at_warm[name]
        report(
            f"RSS {name}: {at_warm[name] / 1024:.1f} MiB after {WARMUP_S:.0f} s warm-up, {end / 1024:.1f} MiB at "
            f"the end ({100 * growth[name]:+.2f} %), max {max(samples[len(samples) // 4 :]) / 1024:.1f} MiB"
        )
    assert all(g < RSS_GROWTH_MAX for g in growth.values()), growth


# -- an instance killed between rounds -----------------------------------------------------------------


def test_instance_killed_between_rounds(cluster: Cluster, report: Callable[[str], None]) -> None:
    victim = cluster.instance("b")

    async def main() -> tuple[list[Flow], list[Flow]]:
        driver = Driver(cluster.url)
        begun = await asyncio.gather(*(driver.start(f"kill-{i}") for i in range(CONCURRENCY)))
        assert all(params for _, params in begun), [f.error for f, params in begun if not params]
        await asyncio.to_thread(victim.kill)  # every flow is suspended at its first question
        await asyncio.sleep(0.2)

        async def finish(flow: Flow, params: dict[str, Any]) -> Flow:
            while params:
                params = await driver.advance(flow, params)
            return flow

        in_flight = await asyncio.gather(*(finish(flow, params) for flow, params in begun))
        after = await asyncio.gather(*(driver.run(f"after-kill-{i}") for i in range(CONCURRENCY)))
        await driver.close()
        return list(in_flight), list(after)

    in_flight, after = run(main)
    assert not failures(in_flight + after), f"{failures(in_flight + after)[:5]}\n{cluster.logs()}"
    assert_each_ran_once(cluster, in_flight + after)
    on_victim = [f for f in in_flight if f.instances[0] == "b"]
    assert on_victim, "no flow had its first round on the killed instance"
    assert all(set(f.instances[1:]) <= {"a", "c"} for f in in_flight), "a round after the kill reached b"
    assert all(set(f.instances) <= {"a", "c"} for f in after)
    retried = cluster.nginx.retried_requests() if cluster.nginx else 0
    assert retried >= 1, "nginx never passed a request on from the dead instance"
    report(
        f"instance b SIGKILLed with {CONCURRENCY} flows suspended ({len(on_victim)} begun on b): all "
        f"{len(in_flight)} completed on a and c, each once; {len(after)} new flows after the kill completed too; "
        f"nginx passed {retried} request(s) on after a refused connection"
    )


# -- Redis restarted under load ------------------------------------------------------------------------


def test_redis_restart_under_load(cluster: Cluster, report: Callable[[str], None]) -> None:
    events: dict[str, float] = {}

    async def outage() -> None:
        await asyncio.sleep(3)
        events["down"] = time.monotonic()
        await asyncio.to_thread(cluster.redis.stop)
        await asyncio.sleep(2)
        await asyncio.to_thread(cluster.redis.start)
        events["up"] = time.monotonic()

    async def main() -> tuple[list[Flow], list[Flow]]:
        driver = Driver(cluster.url, retry_s=8.0)  # a client that follows "try again later", for a while
        during, _ = await asyncio.gather(driver.load(concurrency=CONCURRENCY, duration_s=9, prefix="redis"), outage())
        plain = Driver(cluster.url)  # and once Redis is back, flows complete without any retry
        after = await asyncio.gather(*(plain.run(f"after-redis-{i}") for i in range(CONCURRENCY)))
        await driver.close()
        await plain.close()
        return during, list(after)

    during, after = run(main)
    assert_each_ran_once(cluster, during + after)
    hit = [f for f in during if any(leg.outcome == "error" for leg in f.legs)]
    assert hit, "no flow met the outage: the test proved nothing"
    unclear = [f"{f.flow_id}: {f.error}" for f in during if not f.complete and not _fails_closed(f)]
    assert not unclear, f"flows that failed without a clear fail-closed error: {unclear[:5]}"
    assert not failures(after), f"after the restart: {failures(after)[:5]}\n{cluster.logs()}"
    failed = [f for f in during if not f.complete]
    runs = cluster.executions()
    stuck = [f for f in failed if "stayed in progress" in (f.error or "")]
    report(
        f"Redis down {events['up'] - events['down']:.1f} s under {CONCURRENCY} concurrent flows: {len(during)} flows, "
        f"{len(hit)} met the -32603 ledger error; {len(during) - len(failed)} completed (once each; "
        f"{replayed(cluster, during)} of them got the recorded reply of a run on another instance); {len(failed)} "
        f"failed closed: {len(failed) - len(stuck)} still refused at the client's deadline, {len(stuck)} left in "
        f"progress by a claim whose reply could not be recorded ({sum(runs[f.flow_id] for f in stuck)} of these had "
        f"run their transfer, once); none ran twice; all {len(after)} flows after the restart completed"
    )


def _fails_closed(flow: Flow) -> bool:
    error = flow.error or ""
    return LEDGER_DOWN in error or "stayed in progress" in error


# -- the key rotated under load ------------------------------------------------------------------------


def test_key_rotation_under_load(cluster: Cluster, report: Callable[[str], None]) -> None:
    rotation: dict[str, Any] = {}

    async def rotate() -> None:
        await asyncio.sleep(3)
        rotation["kid"] = await asyncio.to_thread(cluster.rotate_keys)
        rotation["at"] = time.monotonic()

    async def main() -> list[Flow]:
        driver = Driver(cluster.url)
        # New flows go on starting for 3 s after the rotation, however long `baton keys rotate` took on a busy
        # machine, so there are always flows begun 1.5 s after it.
        settled = lambda: "at" in rotation and time.monotonic() > rotation["at"] + 3  # noqa: E731
        load = driver.load(concurrency=CONCURRENCY, duration_s=8, prefix="rotate", until=settled)
        flows, _ = await asyncio.gather(load, rotate())
        await driver.close()
        return flows

    flows = run(main)
    assert not failures(flows), f"{failures(flows)[:5]}\n{cluster.logs()}"
    assert_each_ran_once(cluster, flows)
    new, at = rotation["kid"], rotation["at"]
    assert new != "k0"
    old = [f for f in flows if f.first_kid == "k0"]
    straddling = [f for f in old if new in f.kids]
    late = [f for f in flows if f.started > at + 1.5]  # instances look at the key file about once a second
    assert old and late, (len(old), len(late))
    assert all(f.kids == {new} for f in late), [f.kids for f in late if f.kids != {new}][:5]
    sealed_new = {leg.instance for f in late for leg in f.rounds if leg.kid == new}
    opened_new = {leg.instance for f in late for leg in f.rounds[1:]}
    assert sealed_new == NAMES and opened_new == NAMES, (sealed_new, opened_new)
    report(
        f"key rotated k0 -> {new} under {CONCURRENCY} concurrent flows: {len(old)} flows begun under k0 all completed "
        f"({len(straddling)} of them continued under {new}); {len(late)} flows begun 1.5 s after the rotation were "
        f"sealed only with {new}, by and on all three instances"
    )
