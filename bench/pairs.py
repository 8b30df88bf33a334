"""Baton's server CPU over the floor's from many short runs in pairs: the figure bench/compare's floor checks use.

Why pairs: on a shared machine the same work does not take the same CPU time from one second to the next. On
the 2-core VM this was written on, a fixed loop of pure Python work, timed again and again, took between 1x and
2x its best time within seconds, with nothing else running. Three long runs per server then give a ratio that
moves by about 0.2 from one ``bench/compare`` to the next. Short runs of Baton and of the floor, each right
beside its partner (who goes first alternates), with the CPU pooled over all of them, see the same spells of
slow and fast CPU and give the ratio to within a few hundredths.

The pooled figure of a server is the sum of its server CPU over the sum of its requests (round trips) in all
its paired runs. A pair in which either run could not measure is left out whole.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

PAIRS = 30  # pairs per checked level (default of --pairs)
PAIR_N = 1000  # measured flows per paired run (default of --pair-n)
PAIR_WARMUP = 50  # unmeasured flows before each paired run: the connections are new
NAMES = ("baton", "floor")


def measure(
    levels: list[int],
    pairs: int,
    n: int,
    drive_one: Callable[[str, int, int, int], dict[str, Any]],
    say: Callable[[str], None],
    names: tuple[str, ...] = NAMES,
    warmup: int = PAIR_WARMUP,
) -> list[dict[str, Any]]:
    """``pairs`` runs of Baton and of the floor (or of each of ``names``: a set of three is run in order, then
    reversed) at each of ``levels``, back to back, who goes first alternating.

    ``drive_one(name, n, concurrency, warmup)`` is one driver run (a bench/load.py report), after ``warmup``
    unmeasured flows."""
    runs: list[dict[str, Any]] = []
    total = len(levels) * pairs * len(names)
    for concurrency in levels:
        for pair in range(1, pairs + 1):
            for name in names if pair % 2 else names[::-1]:
                report = drive_one(name, n, concurrency, warmup)
                report.update({"server": name, "pair": pair, "concurrency": concurrency})
                runs.append(report)
                if "fatal" in report:
                    figures = f"driver failed: {report['fatal']}"
                else:
                    figures = f"server {report['server_cpu_ms_per_flow']:.3f} ms/flow"
                say(f"[pairs {len(runs)}/{total}] {name} c={concurrency}: {figures}")
    return runs


def _cpu_ms(run: dict[str, Any]) -> float:
    return float(run["server_cpu_ms_per_flow"]) * (run["flows_ok"] + run["flows_failed"])


def summarize(runs: list[dict[str, Any]], names: tuple[str, str] = NAMES) -> dict[int, dict[str, Any]]:
    """Per level: each server's pooled CPU per round trip (and per flow), their ratio (the first of ``names`` over
    the second), and the spread of the pairs' own ratios."""
    top, bottom = names
    summary: dict[int, dict[str, Any]] = {}
    for concurrency in sorted({r["concurrency"] for r in runs}):
        by_pair: dict[int, dict[str, dict[str, Any]]] = {}
        for r in runs:
            if r["concurrency"] == concurrency:
                by_pair.setdefault(r["pair"], {})[r["server"]] = r
        whole = [
            p
            for p in by_pair.values()
            if all(name in p and "fatal" not in p[name] and p[name].get("requests") for name in names)
        ]
        row: dict[str, Any] = {"concurrency": concurrency, "pairs": len(by_pair), "pairs_used": len(whole)}
        summary[concurrency] = row
        floor_ms = sum(_cpu_ms(p[bottom]) for p in whole)
        if not floor_ms:  # no whole pair, or runs too short for one clock tick of the floor's CPU
            continue
        for name in names:
            mine = [p[name] for p in whole]
            row[f"{name}_cpu_ms_per_rt"] = sum(map(_cpu_ms, mine)) / sum(r["requests"] for r in mine)
            row[f"{name}_cpu_ms_per_flow"] = sum(map(_cpu_ms, mine)) / sum(
                r["flows_ok"] + r["flows_failed"] for r in mine
            )
            row[f"{name}_flows_failed"] = sum(r["flows_failed"] for r in mine)
        row["ratio"] = row[f"{top}_cpu_ms_per_rt"] / row[f"{bottom}_cpu_ms_per_rt"]
        own = sorted(
            (_cpu_ms(p[top]) / p[top]["requests"]) / (_cpu_ms(p[bottom]) / p[bottom]["requests"])
            for p in whole
            if _cpu_ms(p[bottom])
        )
        row["pair_ratio_quartiles"] = statistics.quantiles(own, n=4, method="inclusive") if len(own) > 1 else own * 3
        row["pair_ratio_min"], row["pair_ratio_max"] = own[0], own[-1]
    return summary


def markdown(summary: dict[int, dict[str, Any]], n: int) -> str:
    """The table of the paired runs, and how to read it."""
    lines = [
        "| c | pairs used | Baton CPU ms/round trip | floor CPU ms/round trip | Baton / floor | the pairs' own ratios: "
        "min, quartiles, max | failed flows |",
        "|---|---|---|---|---|---|---|",
    ]
    for c, row in summary.items():
        if "ratio" not in row:
            lines.append(f"| {c} | {row['pairs_used']} of {row['pairs']} |" + " \u2013 |" * 5)
            continue
        q1, q2, q3 = row["pair_ratio_quartiles"]
        spread = f"{row['pair_ratio_min']:.2f}, {q1:.2f} / {q2:.2f} / {q3:.2f}, {row['pair_ratio_max']:.2f}"
        failed = row["baton_flows_failed"] + row["floor_flows_failed"]
        lines.append(
            f"| {c} | {row['pairs_used']} of {row['pairs']} | {row['baton_cpu_ms_per_rt']:.4f} | "
            f"{row['floor_cpu_ms_per_rt']:.4f} | **{row['ratio']:.3f}** | {spread} | {failed} |"
        )
    lines += [
        "",
        f"Each pair is a run of Baton and a run of the floor ({n} measured flows each), back to back, who goes first "
        "alternating. A server's CPU per round trip here is its server CPU summed over all its paired runs, over "
        "its requests summed likewise. The floor checks below use this ratio, and so does the servers table's "
        f"{chr(0xD7)} floor column for Baton at these levels (a level with no ratio here falls back to the medians "
        "above): see bench/pairs.py for why.",
    ]
    return "\n".join(lines)
