"""Module names: a basename says one idea. A basename found in two packages must be in the list of
docs/architecture.md ("Module names that repeat"), which says why it is the same idea there; the list
names nothing that no longer repeats."""

from __future__ import annotations

import re
from collections import defaultdict

from support.paths import ROOT

SRC = ROOT / "src" / "baton"
SECTION = "## Module names that repeat"


def _repeated() -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(SRC.rglob("*.py")):
        if path.stem != "__init__":
            where[path.stem].append(path.relative_to(SRC).as_posix())
    return {name: paths for name, paths in where.items() if len(paths) > 1}


def _justified() -> set[str]:
    text = (ROOT / "docs" / "architecture.md").read_text()
    assert SECTION in text, f"docs/architecture.md lost its section {SECTION!r}"
    section = text.split(SECTION, 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^- `(\w+)`: \S", section, flags=re.MULTILINE))


def test_every_repeated_module_basename_is_justified() -> None:
    unexplained = {name: paths for name, paths in _repeated().items() if name not in _justified()}
    assert not unexplained, (
        f"module basenames in two packages: {unexplained}; rename one, or say in docs/architecture.md "
        f"({SECTION!r}) why it is the same idea in both"
    )


def test_the_justified_list_names_only_repeated_basenames() -> None:
    stale = _justified() - set(_repeated())
    assert not stale, f"docs/architecture.md justifies basenames that no longer repeat: {sorted(stale)}"
