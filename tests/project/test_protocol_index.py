"""docs/protocol.md stays usable as the decisions grow: its index lists every entry (made by
tools/protocol_index.py), every entry has the anchor code and docs link to, and every `Pn` cited in `src/`
names an entry that exists."""

from __future__ import annotations

import re
import sys

import pytest
from support import processes
from support.paths import ROOT

PAGE = ROOT / "docs" / "protocol.md"
TEXT = PAGE.read_text(encoding="utf-8")
ENTRIES = {int(n) for n in re.findall(r"^## P(\d+)\. ", TEXT, flags=re.M)}


@pytest.mark.process
def test_the_index_lists_every_entry_as_the_tool_makes_it() -> None:
    done = processes.run(
        [sys.executable, str(ROOT / "tools" / "protocol_index.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    listed = {int(n) for n in re.findall(r"^\| \[P(\d+)\]\(#p\1\) \|", TEXT, flags=re.M)}
    assert listed == ENTRIES


def test_each_entry_has_one_number_and_its_anchor() -> None:
    numbers = re.findall(r"^## P(\d+)\. ", TEXT, flags=re.M)
    assert len(numbers) == len(set(numbers)), "a number used twice"
    anchored = re.findall(r'^<a id="p(\d+)"></a>\n## P(\d+)\. ', TEXT, flags=re.M)
    assert {int(a) for a, b in anchored if a == b} == ENTRIES


def test_every_decision_cited_from_src_exists() -> None:
    missing: dict[int, list[str]] = {}
    for path in sorted((ROOT / "src").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\bP(\d{1,3})\b", text):
            if int(match.group(1)) not in ENTRIES:
                line = text.count("\n", 0, match.start()) + 1
                missing.setdefault(int(match.group(1)), []).append(f"{path.relative_to(ROOT)}:{line}")
    assert not missing, f"cited in src but not in docs/protocol.md: {missing}"
