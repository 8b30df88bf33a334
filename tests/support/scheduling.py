"""How `./dev test` hands the tests to its pytest-xdist workers: a test module at a time, whole.

A module's tests run on one worker, one after the other, in the order tests/conftest.py sorts them (the modules
whose tests took longest first: support.slow), and each idle worker takes the next module. So a module fixture
starts once in the run, not once on each worker that drew one of its tests: Chromium, redis-server, a
module's shared `baton serve`, a structure scan's parse of src/baton. Two groups span several modules:

- `bench`: every test of tests/bench/, on one worker one after the other: each drives servers flat out for
  seconds (several at once would starve the others' timing-sensitive tests), and they share .cache/bench;
- `source-scans`: the tests that parse every file of a tree (support.source_tree), so that one worker parses
  each file once.

Why not `--dist loadgroup` and `xdist_group` marks: pytest-xdist 3.8 groups by renaming each test's node id
in the worker, which pytest 9 ignores (a node id is computed from the node), so those marks group nothing.
This scheduler sees only node ids, hence groups named by path.
"""

from __future__ import annotations

from typing import Any

from xdist.scheduler import LoadScopeScheduling

GROUPS: dict[str, str] = {
    "tests/bench/": "bench",
    "tests/project/test_structure.py": "source-scans",
    "tests/project/test_structure_cli.py": "source-scans",
    "tests/project/test_tests_layout.py": "source-scans",
    "tests/test_web.py": "source-scans",
    "tests/test_oauth_http.py": "source-scans",
}
"""Node id prefixes whose tests share one worker across modules, and the group's name."""


def scope_of(nodeid: str) -> str:
    """The unit of work `nodeid` belongs to: its group, else its module's path."""
    path = nodeid.partition("::")[0]
    return next((group for prefix, group in GROUPS.items() if path.startswith(prefix)), path)


class ModuleScheduling(LoadScopeScheduling):  # type: ignore[misc]  # xdist has no type information
    """pytest-xdist's scope scheduling with `scope_of` as the scope, in the collection's order."""

    def __init__(self, config: Any, log: Any = None) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False  # keep tests/conftest.py's order: the slowest modules first

    def _split_scope(self, nodeid: str) -> str:
        return scope_of(nodeid)
