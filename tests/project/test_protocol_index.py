"""docs/protocol.md stays usable as the decisions grow: its index lists every entry, its own and those of
docs/measurements.md (made by tools/protocol_index.py), every entry has the anchor code and docs link to, no
number is used twice across the two pages, and every `Pn` cited in `src/` names an entry that exists."""

from __future__ import annotations

import re
import sys

import pytest
from support import processes
from support.paths import ROOT

PAGE = ROOT / "docs" / "protocol.md"
TEXT = PAGE.read_text(encoding="utf-8")
MEASURED = (ROOT / "docs" / "measurements.md").read_text(encoding="utf-8")  # the figures, numbered with the rest
DECIDED = {int(n) for n in re.findall(r"^## P(\d+)\. ", TEXT, flags=re.M)}
ENTRIES = DECIDED | {int(n) for n in re.findall(r"^## P(\d+)\. ", MEASURED, flags=re.M)}


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
    assert listed == DECIDED
    linked = {int(n) for n in re.findall(r"^\| \[P(\d+)\]\(measurements\.md#p\1\) \|", TEXT, flags=re.M)}
    assert linked == ENTRIES - DECIDED


@pytest.mark.parametrize("text", [TEXT, MEASURED], ids=["protocol", "measurements"])
def test_each_entry_has_one_number_and_its_anchor(text: str) -> None:
    numbers = re.findall(r"^## P(\d+)\. ", text, flags=re.M)
    assert len(numbers) == len(set(numbers)), "a number used twice"
    anchored = re.findall(r'^<a id="p(\d+)"></a>\n## P(\d+)\. ', text, flags=re.M)
    assert [int(a) for a, b in anchored if a == b] == [int(n) for n in numbers]


def test_no_number_is_both_a_decision_and_a_measurement() -> None:
    measured = re.findall(r"^## P(\d+)\. ", MEASURED, flags=re.M)
    assert measured, "docs/measurements.md holds no entry"
    assert not DECIDED & {int(n) for n in measured}


def test_every_decision_cited_from_src_exists() -> None:
    missing: dict[int, list[str]] = {}
    for path in sorted((ROOT / "src").rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        for match in re.finditer(r"\bP(\d{1,3})\b", text):
            if int(match.group(1)) not in ENTRIES:
                line = text.count("\n", 0, match.start()) + 1
                missing.setdefault(int(match.group(1)), []).append(f"{path.relative_to(ROOT)}:{line}")
    assert not missing, f"cited in src but in neither docs/protocol.md nor docs/measurements.md: {missing}"
