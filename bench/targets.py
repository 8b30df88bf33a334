"""Baton's targets and their checks: each a PASS, a FAIL, or n/a when a side of it was not measured.

At c=1 and c=16, server CPU per round trip at most 1.6x the floor's and at most 1/8 of mcp 2.3.0's; flows/s at
c=16 at least 10x mcp 2.3.0's; import time at most 1/4 of mcp 2.3.0's; and the one-question flow's
``requestState`` under 120 bytes. ``target_check`` is shared with bench/client_compare's client target.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from typing import Any

from lineup import LABELS

CPU_CHECK_LEVELS = (1, 16)  # the concurrency levels at which the two server CPU targets are checked
MAX_FLOOR_RATIO = 1.6  # Baton's server CPU per round trip must be at most this many times the floor's
MIN_MCP_DIVISOR = 8.0  # ... and at most 1/this of mcp 2.3.0's
FLOWS_CHECK_LEVEL = 16  # the concurrency at which ...
MIN_MCP_FLOWS_RATIO = 10.0  # ... Baton's flows/s must be at least this many times mcp 2.3.0's
MIN_IMPORT_DIVISOR = 4.0  # Baton's import time must be at most 1/this of mcp 2.3.0's
MAX_STATE_BYTES = 120  # the requestState of a one-question flow must be shorter than this


def target_check(
    concurrency: int | None,
    target: str,
    baton: dict[str, Any],
    ref: str,
    other: dict[str, Any],
    metric: str,
    label: str,
    limit_of: Callable[[float], float],
    ratio: bool = False,
    *,
    at_least: bool = False,
    unit: str = "ms/flow",
    spec: str = ".3f",
) -> dict[str, Any]:
    """Baton's ``metric`` against ``limit_of(ref's metric)``: at most (``at_least``: at least) that limit for a
    PASS; FAIL otherwise or when Baton had failed flows; n/a when either was not measured."""
    mine, theirs = baton.get(metric), other.get(metric)
    check: dict[str, Any] = {"concurrency": concurrency, "target": target, "baton": mine, ref: theirs}
    if mine is None or theirs is None:
        check.update(status="n/a", detail=f"{'Baton' if mine is None else label} not measured")
        return check
    limit = limit_of(theirs)
    slack = abs(limit) * 1e-9  # a figure exactly at the limit passes, whatever the float rounding
    ok = (mine >= limit - slack if at_least else mine <= limit + slack) and not baton.get("flows_failed")
    also = f"; ratio {mine / theirs:.2f}" if ratio and theirs else ""
    detail = f"{mine:{spec}} vs limit {limit:{spec}} {unit} ({label} {theirs:{spec}}{also})"
    if baton.get("flows_failed"):
        detail += f"; Baton had {baton['flows_failed']} failed flows"
    check.update(status="PASS" if ok else "FAIL", limit=limit, detail=detail)
    return check


def state_check(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Baton's requestState for the one-question flow: every one seen under MAX_STATE_BYTES."""
    sizes = [r for r in rows if r["server"] == "baton" and r.get("request_state_max") is not None]
    check: dict[str, Any] = {
        "concurrency": None,
        "target": f"requestState of the one-question flow < {MAX_STATE_BYTES} bytes",
    }
    if not sizes:
        return {**check, "status": "n/a", "detail": "Baton not measured"}
    largest = max(r["request_state_max"] for r in sizes)
    median = statistics.median(r["request_state_bytes"] for r in sizes)
    status = "PASS" if largest < MAX_STATE_BYTES else "FAIL"
    detail = f"largest seen {largest} bytes, median {median:g}"
    return {**check, "status": status, "baton": largest, "limit": MAX_STATE_BYTES, "detail": detail}


def target_checks(
    rows: list[dict[str, Any]],
    levels: list[int],
    imports: dict[str, dict[str, Any]],
    paired: dict[int, dict[str, Any]] | None = None,
) -> list[dict[str, Any]]:
    """Baton's server targets: CPU per round trip at each of CPU_CHECK_LEVELS, flows/s at FLOWS_CHECK_LEVEL,
    the import time and the requestState size (checks of what was not measured are n/a). The floor checks use
    the pooled figures of ``paired`` at the levels where it has them."""
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    limits: tuple[tuple[str, Callable[[float], float], str], ...] = (
        ("floor", lambda theirs: theirs * MAX_FLOOR_RATIO, f"<= {MAX_FLOOR_RATIO:g}x floor"),
        ("mcp", lambda theirs: theirs * (1 / MIN_MCP_DIVISOR), f"<= 1/{MIN_MCP_DIVISOR:g} of mcp 2.3.0"),
    )
    checks = []
    for c in levels:
        if c not in CPU_CHECK_LEVELS:
            continue
        for ref, limit_of, text in limits:
            baton, other = by_key.get(("baton", c), {}), by_key.get((ref, c), {})
            label, spec = LABELS[ref], ".3f"
            pair = (paired or {}).get(c, {})
            if ref == "floor" and "ratio" in pair:
                failed = baton.get("flows_failed", 0) + pair["baton_flows_failed"]
                baton = {"server_cpu_ms_per_rt": pair["baton_cpu_ms_per_rt"], "flows_failed": failed}
                other = {"server_cpu_ms_per_rt": pair["floor_cpu_ms_per_rt"]}
                label, spec = f"floor, pooled over {pair['pairs_used']} pairs", ".4f"
            checks.append(
                target_check(
                    c,
                    f"server CPU per round trip {text}",
                    baton,
                    ref,
                    other,
                    "server_cpu_ms_per_rt",
                    label,
                    limit_of,
                    ratio=True,
                    unit="ms/round trip",
                    spec=spec,
                )
            )
    if FLOWS_CHECK_LEVEL in levels:
        checks.append(
            target_check(
                FLOWS_CHECK_LEVEL,
                f"flows/s >= {MIN_MCP_FLOWS_RATIO:g}x mcp 2.3.0",
                by_key.get(("baton", FLOWS_CHECK_LEVEL), {}),
                "mcp",
                by_key.get(("mcp", FLOWS_CHECK_LEVEL), {}),
                "flows_per_s",
                LABELS["mcp"],
                lambda theirs: theirs * MIN_MCP_FLOWS_RATIO,
                ratio=True,
                at_least=True,
                unit="flows/s",
                spec=".0f",
            )
        )
    if imports:
        checks.append(
            target_check(
                None,
                f"import time <= 1/{MIN_IMPORT_DIVISOR:g} of mcp 2.3.0's",
                imports.get("baton", {}),
                "mcp",
                imports.get("mcp", {}),
                "import_ms",
                LABELS["mcp"],
                lambda theirs: theirs / MIN_IMPORT_DIVISOR,
                ratio=True,
                unit="ms",
                spec=".1f",
            )
        )
    checks.append(state_check(rows))
    return checks
