"""Read what `BATON_TEST_CPU=DIR ./dev test` wrote (tests/support/cpu_ledger.py): where the suite's CPU goes.

    .venv/bin/python tools/suite_cpu.py DIR                 # files by CPU, and the commands started most
    .venv/bin/python tools/suite_cpu.py DIR --write-slow    # also rewrite tests/slow_tests.txt

tests/slow_tests.txt lists the test modules whose tests took at least SLOW_S seconds in all, longest first. An
xdist worker runs a module whole (tests/support/scheduling.py), and tests/conftest.py hands out the longest first,
so that no long module starts last and leaves the other workers idle at the end.
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

SLOW_S = 8.0
SLOW_FILE = Path(__file__).resolve().parents[1] / "tests" / "slow_tests.txt"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--top", type=int, default=30)
    parser.add_argument("--write-slow", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for path in sorted(args.folder.glob("*.jsonl")) for line in path.open()]
    if not rows:
        print(f"suite_cpu: no *.jsonl lines in {args.folder}", file=sys.stderr)
        return 2
    own, children = sum(r["self"] for r in rows), sum(r["children"] for r in rows)
    print(f"{len(rows)} tests: {own + children:.0f} s of CPU ({own:.0f} in pytest's workers, {children:.0f} started)")
    files: dict[str, list[float]] = collections.defaultdict(lambda: [0.0, 0.0, 0.0])
    commands: collections.Counter[str] = collections.Counter()
    for row in rows:
        entry = files[row["test"].split("::")[0]]
        entry[0] += row["self"] + row["children"]
        entry[1] += 1
        entry[2] += len(row["started"])
        commands.update(" ".join(command.split()[:2]) for command in row["started"])
    print("\n  CPU s  tests  started  file")
    for name, (cpu, count, started) in sorted(files.items(), key=lambda item: -item[1][0])[: args.top]:
        print(f"{cpu:7.1f} {count:6.0f} {started:8.0f}  {name}")
    print(f"\n{sum(commands.values())} processes started; the most started:")
    for command, count in commands.most_common(args.top // 2):
        print(f"{count:5d}  {command}")
    if args.write_slow:
        walls: collections.Counter[str] = collections.Counter()
        for row in rows:
            walls[row["test"].partition("::")[0]] += row["wall"]
        lines = [f"{wall:.0f} {module}" for module, wall in walls.most_common() if wall >= SLOW_S]
        SLOW_FILE.write_text(
            f"# Test modules whose tests took at least {SLOW_S:g} s in all, longest first (tools/suite_cpu.py "
            "--write-slow): run first.\n" + "\n".join(lines) + "\n"
        )
        print(f"\nwrote {len(lines)} modules to {SLOW_FILE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
