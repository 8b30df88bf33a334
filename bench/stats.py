"""The statistics of the runs: a row per name and level with the medians, and the ratios between the servers.

``summarize`` is shared with bench/client_compare (its ``figures`` argument adds what is particular to servers
or to clients); the CPU figures are per flow and, divided by each run's requests per flow, per round trip.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any


def summarize(
    key: str,
    names: list[str],
    levels: list[tuple[int, int]],
    runs: list[dict[str, Any]],
    figures: Callable[[list[dict[str, Any]]], dict[str, Any]],
) -> list[dict[str, Any]]:
    """A row per level and ``key`` name that has runs: counts and medians, then ``figures(good runs)``."""
    rows = []
    for concurrency, _ in levels:
        for name in names:
            mine = [r for r in runs if r[key] == name and r["concurrency"] == concurrency]
            if not mine:
                continue
            good = [r for r in mine if "fatal" not in r]
            row: dict[str, Any] = {
                key: name,
                "concurrency": concurrency,
                "runs": len(mine),
                "fatal_runs": len(mine) - len(good),
            }
            if good:
                errors: dict[str, int] = {}
                for r in good:
                    for kind, count in r["errors"].items():
                        errors[kind] = errors.get(kind, 0) + count
                row.update(
                    {
                        "n": good[0]["n"],
                        "flows_ok": sum(r["flows_ok"] for r in good),
                        "flows_failed": sum(r["flows_failed"] for r in good),
                        "errors": errors,
                        "flows_per_s": statistics.median(r["flows_per_s"] for r in good),
                        "p50_ms": statistics.median(r["latency_ms"]["p50"] for r in good),
                        "p99_ms": statistics.median(r["latency_ms"]["p99"] for r in good),
                        **figures(good),
                    }
                )
            rows.append(row)
    return rows


def per_round_trip(good: list[dict[str, Any]], metric: str) -> dict[str, Any]:
    """``metric`` (a CPU per flow) divided by each run's requests per flow: the median, lowest and highest."""
    values = [r[metric] / r["rounds_per_flow"] for r in good if r.get(metric) is not None and r.get("rounds_per_flow")]
    if not values:
        return {"rounds_per_flow": None, "per_rt": None, "per_rt_min": None, "per_rt_max": None}
    return {
        "rounds_per_flow": statistics.median(r["rounds_per_flow"] for r in good if r.get("rounds_per_flow")),
        "per_rt": statistics.median(values),
        "per_rt_min": min(values),
        "per_rt_max": max(values),
    }


def server_figures(good: list[dict[str, Any]]) -> dict[str, Any]:
    cpu = [r["server_cpu_ms_per_flow"] for r in good]
    rt = per_round_trip(good, "server_cpu_ms_per_flow")
    states = [r["request_state_bytes"] for r in good if r.get("request_state_bytes")]
    return {
        "server_cpu_ms_per_flow": statistics.median(cpu),
        "server_cpu_min": min(cpu),
        "server_cpu_max": max(cpu),
        "rounds_per_flow": rt["rounds_per_flow"],
        "server_cpu_ms_per_rt": rt["per_rt"],
        "server_cpu_rt_min": rt["per_rt_min"],
        "server_cpu_rt_max": rt["per_rt_max"],
        "request_state_bytes": statistics.median(s["median"] for s in states) if states else None,
        "request_state_min": min(s["min"] for s in states) if states else None,
        "request_state_max": max(s["max"] for s in states) if states else None,
        "driver_cpu_ms_per_flow": statistics.median(r["driver_cpu_ms_per_flow"] for r in good),
        "rss_mib_before": good[0]["server_rss_mib_before"],
        "rss_mib_after": good[-1]["server_rss_mib_after"],
        "hwm_mib": max(r["server_hwm_mib"] for r in good),
    }


def quotient(top: float | None, bottom: float | None) -> float | None:
    return top / bottom if top and bottom else None


def ratios(rows: list[dict[str, Any]], paired: dict[int, dict[str, Any]] | None = None) -> None:
    """Add, at each concurrency: ``x_floor`` (server CPU per round trip / the floor's; Baton's from ``paired``
    where it has a ratio), ``div_mcp`` (mcp 2.3.0's server CPU per round trip / this row's) and ``flows_x_mcp``
    (flows/s / mcp 2.3.0's)."""
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    for row in rows:
        floor = by_key.get(("floor", row["concurrency"]), {})
        mcp = by_key.get(("mcp", row["concurrency"]), {})
        row["x_floor"] = quotient(row.get("server_cpu_ms_per_rt"), floor.get("server_cpu_ms_per_rt"))
        pair = (paired or {}).get(row["concurrency"], {})
        if row["server"] == "baton" and "ratio" in pair:
            row["x_floor"] = pair["ratio"]
        row["div_mcp"] = quotient(mcp.get("server_cpu_ms_per_rt"), row.get("server_cpu_ms_per_rt"))
        row["flows_x_mcp"] = quotient(row.get("flows_per_s"), mcp.get("flows_per_s"))
