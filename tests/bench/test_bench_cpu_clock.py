"""bench/load.py reads a server's CPU time in nanoseconds, from its CPU-time clock, not in 10 ms ticks."""

from __future__ import annotations

import subprocess
import sys

import pytest
from support import processes
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import load

pytestmark = pytest.mark.process  # starts a process (support.markers)

BURN = """
import sys, time
start = time.process_time()
while time.process_time() - start < 0.0537:
    pass
print(time.process_time(), flush=True)
sys.stdin.read()
"""


def test_cpu_seconds_reads_another_process_to_well_under_a_tick() -> None:
    """A child burns CPU and says how much it used (its own `process_time`): `cpu_seconds` reads the same to a
    millisecond, where `/proc`'s ticks were off by up to 10 ms; once the child is gone it reads nothing."""
    child = processes.popen(
        [sys.executable, "-c", BURN], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT
    )
    with child:  # closes the pipes (the child then ends) and waits
        assert child.stdout is not None
        said = float(child.stdout.readline())
        read = load.cpu_seconds([child.pid])
    assert abs(read - said) < 0.001, (read, said)
    assert load.cpu_seconds([child.pid]) == 0.0
