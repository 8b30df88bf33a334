"""The PNG chart of bench/compare: Baton's ratios to the floor, mcp 2.3.0 and FastMCP 4.1.6, with the targets.

Three panels, each bar a ratio taken within the one run, a dashed red line over a bar where a target applies:

1. Baton's server CPU per round trip / the floor's, at each concurrency (lower is better).
2. mcp 2.3.0's and FastMCP 4.1.6's server CPU per round trip / Baton's, and Baton's flows/s / mcp 2.3.0's,
   at each concurrency (higher is better for Baton).
3. mcp 2.3.0's and FastMCP 4.1.6's import time / Baton's, and the mcp 2.3.0 client's CPU per round trip /
   Baton's client's, at each client concurrency (higher is better for Baton).

matplotlib is imported only here, with the Agg backend (no display needed). It is in the ``dev`` extras.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from client_compare import TARGET_DIVISOR
from stats import quotient
from targets import (
    CPU_CHECK_LEVELS,
    FLOWS_CHECK_LEVEL,
    MAX_FLOOR_RATIO,
    MIN_IMPORT_DIVISOR,
    MIN_MCP_DIVISOR,
    MIN_MCP_FLOWS_RATIO,
)

Bar = tuple[str, float | None, float | None]  # label, value, target (None: no target for this bar)
COLORS = ("#4c72b0", "#dd8452", "#55a868", "#8172b3")


def server_bars(rows: list[dict[str, Any]], levels: list[int]) -> tuple[list[list[Bar]], list[list[Bar]]]:
    """Per level: the bars of panel 1 (Baton / floor) and of panel 2 (peers / Baton, flows/s)."""
    by_key = {(r["server"], r["concurrency"]): r for r in rows}
    floor_groups, peer_groups = [], []
    for c in levels:
        baton = by_key.get(("baton", c), {})
        fastmcp = by_key.get(("fastmcp", c), {})
        checked = c in CPU_CHECK_LEVELS
        floor_groups.append([("Baton / floor", baton.get("x_floor"), MAX_FLOOR_RATIO if checked else None)])
        peer_groups.append(
            [
                ("mcp / Baton CPU", baton.get("div_mcp"), MIN_MCP_DIVISOR if checked else None),
                (
                    "FastMCP / Baton CPU",
                    quotient(fastmcp.get("server_cpu_ms_per_rt"), baton.get("server_cpu_ms_per_rt")),
                    None,
                ),
                (
                    "Baton / mcp flows/s",
                    baton.get("flows_x_mcp"),
                    MIN_MCP_FLOWS_RATIO if c == FLOWS_CHECK_LEVEL else None,
                ),
            ]
        )
    return floor_groups, peer_groups


def other_bars(imports: dict[str, dict[str, Any]], client: dict[str, Any] | None) -> tuple[list[str], list[list[Bar]]]:
    """The groups of panel 3: import time, then client CPU per round trip at each client concurrency."""
    baton_ms = imports.get("baton", {}).get("import_ms")
    names = ["import"]
    groups: list[list[Bar]] = [
        [
            ("mcp / Baton", quotient(imports.get("mcp", {}).get("import_ms"), baton_ms), MIN_IMPORT_DIVISOR),
            ("FastMCP / Baton", quotient(imports.get("fastmcp", {}).get("import_ms"), baton_ms), None),
        ]
    ]
    if client is not None and not client["status"]:
        by_key = {(r["client"], r["concurrency"]): r for r in client["rows"]}
        for c, _ in client["levels"]:
            mine = by_key.get(("baton", c), {}).get("client_cpu_ms_per_rt")
            theirs = by_key.get(("mcp", c), {}).get("client_cpu_ms_per_rt")
            names.append(f"client c={c}")
            groups.append([("mcp / Baton", quotient(theirs, mine), TARGET_DIVISOR)])
    return names, groups


def panel(ax: Any, title: str, names: list[str], groups: list[list[Bar]], legend: bool) -> None:
    """Grouped bars, value labels, and a dashed red target line over each bar that has a target."""
    width = 0.8 / max(len(group) for group in groups)
    labels: dict[str, str] = {}
    for g, group in enumerate(groups):
        for b, (label, value, target) in enumerate(group):
            x = g + width * (b + 0.5 - len(group) / 2)  # the group centred on its tick
            color = COLORS[b % len(COLORS)]
            if value is None:
                ax.text(x, 0, "n/a", ha="center", va="bottom", fontsize=7, color="grey")
            else:
                bars = ax.bar(x, value, width * 0.9, color=color, label=None if label in labels else label)
                ax.bar_label(bars, fmt="%.2f", fontsize=7, padding=1)
            labels[label] = color
            if target is not None:
                ax.hlines(target, x - width / 2, x + width / 2, colors="red", linestyles="--", linewidth=1.5)
                ax.text(x + width / 2, target, f" {target:g}", color="red", fontsize=7, ha="left", va="center")
    ax.set_xticks(range(len(names)), names)
    ax.set_xlim(-0.5, len(names) - 0.5)
    ax.set_title(title, fontsize=9)
    ax.margins(y=0.15)
    ax.set_ylim(bottom=0)
    if legend:
        ax.plot([], [], color="red", linestyle="--", label="target")
        ax.legend(fontsize=7, loc="best")


def draw(
    path: Path,
    title: str,
    rows: list[dict[str, Any]],
    levels: list[int],
    imports: dict[str, dict[str, Any]],
    client: dict[str, Any] | None,
) -> str | None:
    """Write the chart to ``path``; None when written, else why not."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:
        return f"matplotlib is not installed ({exc}); ./dev setup installs it"
    floor_groups, peer_groups = server_bars(rows, levels)
    other_names, other_groups = other_bars(imports, client)
    at = [f"c={c}" for c in levels]
    fig, axes = plt.subplots(
        1,
        3,
        figsize=(16, 5.5),
        layout="constrained",
        gridspec_kw={"width_ratios": [len(levels), 2 * len(levels), len(other_names)]},
    )
    panel(axes[0], "Baton's server CPU per round trip / the floor's\n(lower is better)", at, floor_groups, True)
    panel(
        axes[1],
        "server CPU per round trip: peer / Baton, and flows/s: Baton / mcp 2.3.0\n(higher is better for Baton)",
        at,
        peer_groups,
        True,
    )
    panel(
        axes[2],
        "import time, and client CPU per round trip: peer / Baton\n(higher is better for Baton)",
        other_names,
        other_groups,
        True,
    )
    fig.suptitle(title, fontsize=10)
    try:
        fig.savefig(path, dpi=110)
    except OSError as exc:
        return f"could not write {path}: {exc}"
    finally:
        plt.close(fig)
    return None
