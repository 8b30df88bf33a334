"""bench/granian_compare.py runs each system on granian and on uvicorn and prints every figure bench/README.md
reports (a tiny run: the figures' sizes are not judged here, only that both servers served every flow)."""

from __future__ import annotations

import sys

import orjson
import pytest
from support import processes
from support.paths import ROOT


@pytest.mark.process
def test_the_granian_bench_prints_its_figures() -> None:
    done = processes.run(
        [sys.executable, "bench/granian_compare.py", "--pairs", "1", "--pair-n", "200", "--levels", "1", "--json"],
        cwd=ROOT,
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-3000:]
    report = orjson.loads(done.stdout.splitlines()[-1])
    assert set(report["systems"]) == {"floor", "baton", "session"}
    for system, levels in report["systems"].items():
        row = levels["1"]
        assert row["failed_flows"] == 0, (system, row)
        assert row["uvicorn_us_per_rt"] > 0 and row["granian_us_per_rt"] > 0, (system, row)
