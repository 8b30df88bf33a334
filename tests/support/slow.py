"""The test modules that take longest, from tests/slow_tests.txt (written by `tools/suite_cpu.py --write-slow`).

Eight workers share two cores, each running a module whole: a long module that starts last keeps the suite
running while the other workers idle. `slow_modules()` gives each unit of work (a module, or a group of them:
support.scheduling) the seconds its tests took, for tests/conftest.py to start the heaviest first. A module
renamed or gone from the list costs nothing but its place in the order.
"""

from __future__ import annotations

import collections

from .paths import ROOT
from .scheduling import scope_of

SLOW_FILE = ROOT / "tests" / "slow_tests.txt"


def slow_modules() -> dict[str, float]:
    """Each listed module's unit of work (its path as in a node id, or its group: support.scheduling) and the
    seconds its tests took."""
    weight: dict[str, float] = collections.defaultdict(float)
    for line in SLOW_FILE.read_text().splitlines():
        seconds, _, nodeid = line.partition(" ")
        if seconds and not line.startswith("#"):
            weight[scope_of(nodeid)] += float(seconds)
    return dict(weight)
