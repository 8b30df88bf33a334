#!/usr/bin/env python3
"""Write the index of docs/protocol.md from its entries and docs/measurements.md's: one row per `## Pn. Title`,
in number order (the two pages share one sequence of numbers; a row of measurements.md links there).

Usage: `.venv/bin/python tools/protocol_index.py` rewrites the table at the top of the page;
`--check` writes nothing and exits 1 if the table is not what the entries say (tests/project/test_protocol_index.py
runs it). The table sits between the line `| | Entry |` and the first line `---` after it.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

PAGE = Path(__file__).resolve().parent.parent / "docs" / "protocol.md"
MEASUREMENTS = PAGE.with_name("measurements.md")  # the figures behind some decisions, numbered with them
ENTRY = re.compile(r"^## P(\d+)\. (.+)$", re.M)
TABLE = re.compile(r"^\| \| Entry \|.*?(?=^---$)", re.M | re.S)


def entries(text: str) -> dict[int, str]:
    """Every entry of the page: its number and title."""
    return {int(number): title.strip() for number, title in ENTRY.findall(text)}


def table(text: str, measured: str) -> str:
    links = {n: (f"#p{n}", title) for n, title in entries(text).items()}
    twice = sorted(set(links) & set(entries(measured)))
    if twice:
        raise SystemExit(f"numbers used in both {PAGE.name} and {MEASUREMENTS.name}: {twice}")
    links |= {n: (f"{MEASUREMENTS.name}#p{n}", f"{title} (measurement)") for n, title in entries(measured).items()}
    rows = [f"| [P{n}]({link}) | {title} |" for n, (link, title) in sorted(links.items())]
    return "\n".join(["| | Entry |", "| --- | --- |", *rows]) + "\n\n"


def indexed(text: str, measured: str) -> str:
    """`text` with its index made from its entries and those of `measured` (measurements.md)."""
    if not TABLE.search(text):
        raise SystemExit(f"{PAGE}: no index table (a line '| | Entry |' before a line '---')")
    return TABLE.sub(lambda _: table(text, measured), text, count=1)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the index is out of date; write nothing")
    args = parser.parse_args()
    text = PAGE.read_text(encoding="utf-8")
    wanted = indexed(text, MEASUREMENTS.read_text(encoding="utf-8"))
    if args.check:
        if wanted != text:
            print(f"{PAGE}: the index is out of date: run tools/protocol_index.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
