"""bench/tree_ab.py serves this tree and a git ref's tree side by side over HTTP and pools their server CPU."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support import processes
from support.paths import ROOT

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

TREE_AB = str(ROOT / "bench" / "tree_ab.py")


@pytest.mark.parametrize("traced", [[], ["--trace-ratio", "1"]], ids=["off", "traced"])
def test_this_tree_against_its_own_head_measures_both_over_http(tmp_path: Path, traced: list[str]) -> None:
    out = tmp_path / "ab.json"
    small = ["-c", "2", "--pairs", "2", "--pair-n", "200", "--json", str(out)]
    run = processes.run(
        [sys.executable, TREE_AB, "--ref", "HEAD", *small, *traced],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "c=2:" in run.stdout and "ratio" in run.stdout
    figures = json.loads(out.read_text())
    level = figures["levels"]["2"]
    assert level["pairs_used"] == 2
    assert level["this_us_per_round_trip"] > 0 and level["ref_us_per_round_trip"] > 0
    assert "Traceback" not in run.stderr
    if traced:  # each tree's server exported every span to its own receiver: 2 sets of 200 flows and more
        assert figures["trace_ratio"] == 1.0 and "traced, head sampling at 1" in run.stdout
        assert set(figures["spans"]) == {"this tree", "ref"} and min(figures["spans"].values()) >= 800
    else:
        assert figures["trace_ratio"] is None and figures["spans"] == {}


def test_an_unknown_ref_or_a_bad_level_is_one_line_and_exit_2() -> None:
    for args, said in (
        (["--ref", "no-such-ref-anywhere"], "git cannot archive 'no-such-ref-anywhere'"),
        (["--ref", "HEAD", "-c", "x"], "--concurrency"),
    ):
        run = processes.run(
            [sys.executable, TREE_AB, *args], cwd=ROOT, check=False, capture_output=True, text=True, timeout=60
        )
        assert run.returncode == 2, run.stderr
        assert said in run.stderr and "Traceback" not in run.stderr


def test_ctrl_c_stops_both_servers_and_exits_130_without_a_traceback() -> None:
    """SIGINT while the pairs run: both servers (started in sessions of their own) are stopped, exit 130."""
    proc = processes.popen(
        [sys.executable, TREE_AB, "--ref", "HEAD", "-c", "2", "--pairs", "50", "--pair-n", "300"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stderr is not None
    said = []
    for line in proc.stderr:  # until the pairs have begun
        said.append(line)
        if "[pairs 1/" in line:
            break
    proc.send_signal(signal.SIGINT)
    _, after = proc.communicate(timeout=60)
    text = "".join(said) + after
    assert proc.returncode == 130, text
    assert "Traceback" not in text
    pids = [int(m) for m in re.findall(r": pid (\d+) on http", text)]
    assert len(pids) == 2, text
    time.sleep(0.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
