"""bench/processes.py: the environment a server under test starts with, and a script that starts its own."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from support.paths import ROOT

sys.path.insert(0, str(ROOT / "bench"))
import processes as bench_processes  # bench/processes.py (tests/support's is `support.processes`)


def test_a_server_under_test_gets_no_instance_name_and_a_data_directory_of_the_bench(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shell's `$BATON_INSTANCE` would add a header to every response (protocol.md P229), and without a data
    directory Baton keeps its key file and ledger under the home directory."""
    monkeypatch.setenv("BATON_INSTANCE", "mine")
    monkeypatch.delenv("BATON_DATA_DIR", raising=False)
    monkeypatch.setenv("BATON_LEDGER", "memory:")
    env = bench_processes.server_environment(tmp_path)
    assert "BATON_INSTANCE" not in env
    assert env["BATON_DATA_DIR"] == str(tmp_path / "baton-data")
    assert env["BATON_LEDGER"] == "memory:"  # every other setting passes
    monkeypatch.setenv("BATON_DATA_DIR", "/elsewhere")
    assert bench_processes.server_environment(tmp_path)["BATON_DATA_DIR"] == "/elsewhere"  # one set is kept


def test_a_script_that_starts_servers_itself_runs_in_that_environment_then_gets_its_own_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BATON_INSTANCE", "mine")
    monkeypatch.delenv("BATON_DATA_DIR", raising=False)
    before = dict(os.environ)
    with bench_processes.servers_environment():
        scratch = Path(os.environ["BATON_DATA_DIR"]).parent
        assert "BATON_INSTANCE" not in os.environ and scratch.is_dir()
    assert dict(os.environ) == before and not scratch.exists()
