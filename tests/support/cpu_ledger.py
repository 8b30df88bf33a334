"""Where the suite's CPU goes, per test: `BATON_TEST_CPU=DIR ./dev test` writes one JSON line per test.

The suite is CPU-bound on two cores (eight workers, most tests waiting on processes they started), so its
wall time follows the CPU its tests spend, in pytest's process and in the processes they start, not their
wall time. Each line holds the test's id, its wall seconds, the CPU seconds of its worker's own process
(`self`) and of the processes reaped while it ran (`children`: a process is counted when it is reaped, with
every descendant it reaped itself), and the commands it started (support.processes notes them here). Module
fixtures' processes are counted to the test during which they stop. `tools/suite_cpu.py DIR` sums them up.
"""

from __future__ import annotations

import json
import os
import resource
import time
from collections.abc import Generator
from pathlib import Path
from typing import Any

import pytest

_started: list[str] = []


def note_started(argv: Any) -> None:
    """Called by support.processes for every process a test starts: its command, shortened."""
    if os.environ.get("BATON_TEST_CPU"):
        words = [str(word) for word in argv] if isinstance(argv, (list, tuple)) else [str(argv)]  # or a shell line
        _started.append(" ".join([os.path.basename(words[0]), *words[1:4]]))


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


class Ledger:
    """The pytest plugin that writes the lines (registered by tests/conftest.py when BATON_TEST_CPU is set)."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        worker = os.environ.get("PYTEST_XDIST_WORKER", "main")
        self._out = open(folder / f"{worker}.jsonl", "a", encoding="utf-8")  # noqa: SIM115 (closed at the end)

    @pytest.hookimpl(wrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item) -> Generator[None, object, object]:
        _started.clear()
        wall, own, children = time.monotonic(), _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        try:
            return (yield)
        finally:
            entry = {
                "test": item.nodeid,
                "wall": round(time.monotonic() - wall, 3),
                "self": round(_cpu(resource.RUSAGE_SELF) - own, 3),
                "children": round(_cpu(resource.RUSAGE_CHILDREN) - children, 3),
                "started": list(_started),
            }
            self._out.write(json.dumps(entry) + "\n")
            self._out.flush()

    def pytest_unconfigure(self) -> None:
        self._out.close()
