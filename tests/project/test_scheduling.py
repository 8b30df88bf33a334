"""How the xdist workers share the suite (tests/support/scheduling.py): a module at a time, whole, and the two
groups that span modules, each on one worker."""

from __future__ import annotations

import collections
import os
import re
import sys

import pytest
from support import processes
from support.paths import ROOT
from support.scheduling import scope_of


def test_a_test_belongs_to_its_module_or_its_group() -> None:
    assert scope_of("tests/forms/test_forms.py::test_x[a-b]") == "tests/forms/test_forms.py"
    assert scope_of("tests/bench/test_bench_guard.py::t") == scope_of("tests/bench/test_bench_otel.py::t") == "bench"
    assert scope_of("tests/test_web.py::t") == scope_of("tests/project/test_structure.py::t") == "source-scans"
    assert scope_of("tests/test_webby.py::t") == "tests/test_webby.py"  # a file, not a prefix of one


@pytest.mark.process
def test_each_module_and_group_runs_on_one_worker() -> None:
    """Under `--dist loadgroup`, pytest-xdist 3.8 with pytest 9 spread a group's tests over every worker."""
    modules = ["tests/project/test_fuzz_corpus.py", "tests/test_oauth_http.py", "tests/project/test_structure_cli.py"]
    argv = [sys.executable, "-m", "pytest", "-n", "2", "-v", "-p", "no:cacheprovider", "-m", "unit", *modules]
    env = {k: v for k, v in os.environ.items() if not k.startswith("BATON_TEST_")}  # not into this run's ledger
    done = processes.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:]
    workers: dict[str, set[str]] = collections.defaultdict(set)
    for worker, nodeid in re.findall(r"^\[(gw\d+)\] .*?PASSED (\S+)", done.stdout, re.MULTILINE):
        workers[scope_of(nodeid)].add(worker)
    assert set(workers) == {"tests/project/test_fuzz_corpus.py", "source-scans"}, done.stdout[-3000:]
    assert all(len(ran_on) == 1 for ran_on in workers.values()), dict(workers)
