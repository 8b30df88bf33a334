"""bench/dev_page.py runs and prints every figure the `baton dev` closing note reports."""

from __future__ import annotations

import sys

import orjson
import pytest
from support import processes
from support.paths import ROOT


@pytest.mark.process
def test_the_dev_page_bench_prints_its_figures() -> None:
    done = processes.run(
        [sys.executable, "bench/dev_page.py", "--runs", "1", "--json"],
        cwd=ROOT,
        capture_output=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    figures = orjson.loads(done.stdout.splitlines()[-1])
    for key in ("printed_s", "listed_s", "flow_page_s", "flow_cli_s"):
        assert 0 < figures[key] < 60, key
    assert 5_000 < figures["page_static_bytes"] < 200_000
    assert figures["events_bytes_to_list"] > 1_000
