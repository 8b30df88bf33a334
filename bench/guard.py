"""The guard against creep: the figures a test holds against the committed baseline (`bench/baseline.json`).

Two kinds of figure, each with its own tolerance:

- `instructions`: `callgrind_flows.py`'s instructions per two-round flow of the live server process, Baton's and
  the floor's, and their ratio. Deterministic (the same code reads the same to within 1 %), so the tolerance is
  small (5 % on the ratio): a change that adds work to every round shows, whatever the machine is doing.
- `cpu`: `bench/compare --json`'s `guard` keys, the pooled ratio of Baton's server CPU per round trip to the
  floor's from the short runs in pairs (`ratio_floor_c1`, `ratio_floor_c16`). Two shared cores move these by
  several percent between runs, so the tolerance is wide (15 %) and a test runs the measurement again once
  before it says a ratio crept.

`keys(document)` reads the guard keys from a `bench/compare` JSON document; `crept(measured, baseline)` lists
what is over its baseline by more than the tolerance, each as one line (empty: nothing crept).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

BASELINE = Path(__file__).resolve().parent / "baseline.json"


def load(path: Path = BASELINE) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def keys(document: dict[str, Any]) -> dict[str, float]:
    """The guard keys of a `bench/compare` document: the pooled pairs ratio to the floor at each level measured."""
    out: dict[str, float] = {}
    for row in document.get("pairs", {}).get("summary", []):
        if "ratio" in row:
            out[f"ratio_floor_c{row['concurrency']}"] = round(float(row["ratio"]), 4)
    return out


def crept(measured: dict[str, float], baseline: dict[str, Any]) -> list[str]:
    """Each figure of `baseline["ratios"]` that `measured` holds above it by more than `baseline["tolerance"]`."""
    tolerance = float(baseline["tolerance"])
    lines = []
    for key, base in baseline["ratios"].items():
        if key in measured and measured[key] > base * (1 + tolerance):
            lines.append(
                f"{key} is {measured[key]:.3f}, over the baseline {base:.3f} by more than {tolerance:.0%} "
                f"({measured[key] / base - 1:+.1%})"
            )
    return lines
