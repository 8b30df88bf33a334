"""The guard against creep (bench/guard.py): Baton's cost per flow over the floor's, held against bench/baseline.json.

Each measurement runs once more before a test says it crept: a spell of contention on two shared cores must not
fail a build, a real regression fails it twice. The instruction count needs valgrind and a C compiler, which
`./dev test` installs; without them that test fails and says what to install.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from support import processes
from support.bench import FIGURES, bench
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import guard

# Short pairs at both checked levels; the servers table at its smallest (its figures are not guarded).
CPU_RUN = ["-c", "1,16", "-n", "100", "--repeat", "1", "--warmup", "20", "--no-client", "--import-runs", "0"]
CPU_PAIRS = ["--pairs", "6", "--pair-n", "400", "--time-limit", "120"]


def twice(measure: Callable[[], dict[str, float]], baseline: dict[str, object]) -> list[str]:
    """What crept over the baseline, measured again once before it counts."""
    lines = guard.crept(measure(), baseline)
    return guard.crept(measure(), baseline) if lines else lines


def test_crept_names_only_what_is_over_its_tolerance() -> None:
    baseline = {"tolerance": 0.15, "ratios": {"ratio_floor_c1": 1.4, "ratio_floor_c16": 1.5}}
    assert guard.crept({"ratio_floor_c1": 1.6, "ratio_floor_c16": 1.2}, baseline) == []
    [line] = guard.crept({"ratio_floor_c1": 1.62, "ratio_floor_c16": 1.5}, baseline)
    assert line.startswith("ratio_floor_c1 is 1.620, over the baseline 1.400 by more than 15%")
    assert guard.crept({}, baseline) == []  # a level not measured is not a regression
    document = {"pairs": {"summary": [{"concurrency": 1, "ratio": 1.41234}, {"concurrency": 16, "pairs_used": 0}]}}
    assert guard.keys(document) == {"ratio_floor_c1": 1.4123}


@pytest.mark.process
def test_instructions_per_flow_over_the_floor_have_not_crept() -> None:
    baseline = guard.load()["instructions"]

    def measure() -> dict[str, float]:
        argv = [sys.executable, str(ROOT / "bench" / "callgrind_flows.py"), "--json"]
        done = processes.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode == 2:
            pytest.fail(done.stderr.strip())
        assert done.returncode == 0, done.stderr
        return {"ratio": json.loads(done.stdout)["ratio"]}

    lines = twice(measure, baseline)
    assert not lines, "; ".join(lines) + " (bench/callgrind_flows.py: instructions per flow; see bench/README.md)"


@pytest.mark.process
def test_cpu_per_round_trip_over_the_floor_has_not_crept(tmp_path: Path) -> None:
    baseline = guard.load()["cpu"]

    def measure() -> dict[str, float]:
        done = bench("compare.py", tmp_path, "--only", "baton,floor", *CPU_RUN, *CPU_PAIRS, out=False, timeout=400)
        assert done.returncode in (0, 1), done.stderr  # 1: a target missed, still a whole document
        figures = json.loads((tmp_path / FIGURES).read_text())
        assert set(figures["guard"]) == {"ratio_floor_c1", "ratio_floor_c16"}, done.stderr
        return dict(figures["guard"])

    lines = twice(measure, baseline)
    assert not lines, "; ".join(lines) + " (bench/compare, pooled pairs; see bench/README.md)"


@pytest.mark.process
def test_cache_sim_counts_the_misses_of_a_flow_beside_its_instructions() -> None:
    """`callgrind_flows.py --cache-sim`: every event callgrind's cache simulation counts, per flow, the first of them
    the same instructions per flow; a miss is rarer than a read, a last-level miss than a first-level one."""
    argv = [sys.executable, str(ROOT / "bench" / "callgrind_flows.py"), "--server", "floor"]
    argv += ["--flows", "20", "--warmup", "5", "--cache-sim", "--json"]
    done = processes.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    floor = json.loads(done.stdout)["floor"]
    events = floor["per_flow"]
    assert {"Ir", "Dr", "Dw", "I1mr", "D1mr", "D1mw", "ILmr", "DLmr", "DLmw"} <= set(events), events
    assert events["Ir"] == floor["ir_per_flow"]
    assert 0 < events["DLmr"] <= events["D1mr"] < events["Dr"] < events["Ir"], events
