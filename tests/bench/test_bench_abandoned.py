"""bench/abandoned_asks.py runs, and what it reports holds on a small scale: calls that ask and are never answered
wait, a full session refuses one more with the per-session sentence, and closed clients give their questions back."""

from __future__ import annotations

import sys

import orjson
import pytest
from support import processes
from support.paths import ROOT


@pytest.mark.process
def test_the_abandoned_calls_bench_prints_its_figures() -> None:
    done = processes.run(
        [sys.executable, "bench/abandoned_asks.py", "--calls", "70", "--waves", "1", "--json"],
        cwd=ROOT,
        capture_output=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    report = orjson.loads(done.stdout.splitlines()[-1])
    assert report["calls_waiting"] == 70 and report["waves"][0]["sessions"] == 4  # 32 + 32 + 6, and one more
    assert 0 < report["bytes_per_call"] < 200_000
    assert "this session already has too many questions waiting" in report["refused_in_full_session"]
    assert report["refused_past_instance_cap"] == ""  # 70 is under the instance's cap
    assert report["asks_again_after_close"] is True
