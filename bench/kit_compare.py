"""Compare the CPU per MRTR flow of Baton's in-memory test client with the mcp 2.3.0 SDK's, in one run.

The same tool on both sides: ``perform(action)`` asks one boolean confirmation, then returns
``done: <action>``. Baton's is ``examples/everything.py``'s, driven through ``baton.testing.memory_client``
with a ``ScriptedUser``; mcp's is ``peers/mcp_server.py``'s, driven through mcp's own in-memory
``Client(server, elicitation_callback=...)`` in its peer venv (``.cache/bench/mcp``, made on first use
like bench/compare does). A flow is the whole call: the question, the answer, the result (two rounds
for Baton, one elicitation round trip for mcp).

Each measurement is a process of its own (this script with ``--worker``): it runs ``--warmup`` flows,
then ``-n`` flows, and reports its CPU time (user + system) over those ``n``, checking every result. The
two run in pairs, back to back, who goes first alternating; a side's figure is its CPU summed over all
its pairs over its flows summed likewise (bench/pairs.py says why pooled pairs). The target: Baton's
CPU per flow at most 1/4 of mcp 2.3.0's. ``--only baton`` measures Baton alone (no peer venv, no check).

Run it through ``bench/kit_compare``, which uses the project's ``.venv/bin/python``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from processes import ROOT, Skip
from venvs import ensure_venv

NAMES = ("baton", "mcp")
LABELS = {"baton": "Baton in-memory client", "mcp": "mcp 2.3.0 in-memory Client"}
TARGET = 0.25  # Baton's CPU per flow over mcp 2.3.0's


def say(text: str) -> None:
    print(f"kit_compare: {text}", file=sys.stderr, flush=True)


# -- one measured process (--worker) ------------------------------------------------------------------


async def _baton_flows(n: int, warmup: int) -> tuple[float, int]:
    sys.path.insert(0, str(ROOT / "examples"))
    from everything import server

    from baton.testing import ScriptedUser, memory_client

    user = ScriptedUser({"q1": {"confirm": True}})
    async with memory_client(server, user) as client:

        async def flow(i: int) -> None:
            result = await client.call_tool("perform", {"action": f"deploy-{i}"})
            if result.text != f"done: deploy-{i}":
                raise RuntimeError(f"flow {i}: {result.raw!r}")

        for i in range(warmup):
            await flow(i)
        user.forget()
        began = time.process_time()
        for i in range(n):
            await flow(i)
        cpu = time.process_time() - began
    return cpu, len(user.asked)


async def _mcp_flows(n: int, warmup: int) -> tuple[float, int]:
    sys.path.insert(0, str(ROOT / "peers"))
    from mcp import Client, types
    from mcp_server import mcp as server

    asked = [0]

    async def answer(context: Any, params: Any) -> Any:
        asked[0] += 1
        return types.ElicitResult(action="accept", content={"confirm": True})

    async with Client(server, elicitation_callback=answer) as client:

        async def flow(i: int) -> None:
            result = await client.call_tool("perform", {"action": f"deploy-{i}"})
            text = result.content[0].text if result.content else None
            if text != f"done: deploy-{i}":
                raise RuntimeError(f"flow {i}: {result!r}")

        for i in range(warmup):
            await flow(i)
        asked[0] = 0
        began = time.process_time()
        for i in range(n):
            await flow(i)
        cpu = time.process_time() - began
    return cpu, asked[0]


def worker(name: str, n: int, warmup: int) -> dict[str, Any]:
    import asyncio

    cpu, asked = asyncio.run((_baton_flows if name == "baton" else _mcp_flows)(n, warmup))
    return {"name": name, "flows": n, "cpu_ms": cpu * 1000, "elicitations": asked}


# -- the driver --------------------------------------------------------------------------------------


def measure_one(name: str, python: Path, n: int, warmup: int, timeout_s: float) -> dict[str, Any]:
    """One worker process; its report, or one with ``fatal`` saying why it could not measure."""
    env = {k: v for k, v in os.environ.items() if k not in {"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME"}}
    if name == "baton":  # this checkout's Baton, whatever the venv has installed
        env["PYTHONPATH"] = str(ROOT / "src")
    argv = [str(python), str(Path(__file__).resolve()), "--worker", name, "-n", str(n), "--warmup", str(warmup)]
    with tempfile.TemporaryDirectory(prefix="kit-compare-") as data:
        env["BATON_DATA_DIR"] = data  # a key file of its own
        try:
            done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=timeout_s, check=False)
        except subprocess.TimeoutExpired:
            return {"name": name, "fatal": f"no report within {timeout_s:g} s"}
    if done.returncode != 0:
        return {"name": name, "fatal": (done.stderr.strip().splitlines() or ["no output"])[-1]}
    report: dict[str, Any] = json.loads(done.stdout)
    if report["elicitations"] != n:
        report["fatal"] = f"{report['elicitations']} elicitations answered for {n} flows"
    return report


def measure(pythons: dict[str, Path], pairs: int, n: int, warmup: int, timeout_s: float) -> list[dict[str, Any]]:
    """``pairs`` rounds of one run per side, back to back, who goes first alternating."""
    runs: list[dict[str, Any]] = []
    names = [name for name in NAMES if name in pythons]
    for pair in range(1, pairs + 1):
        for name in names if pair % 2 else names[::-1]:
            report = measure_one(name, pythons[name], n, warmup, timeout_s)
            report["pair"] = pair
            runs.append(report)
            figure = report.get("fatal") or f"{report['cpu_ms'] / report['flows']:.4f} ms CPU/flow"
            say(f"[pair {pair}/{pairs}] {name}: {figure}")
    return runs


def summarize(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Each side's pooled CPU per flow over the whole pairs, their ratio, and the spread of the pairs' ratios."""
    by_pair: dict[int, dict[str, dict[str, Any]]] = {}
    for run in runs:
        by_pair.setdefault(run["pair"], {})[run["name"]] = run
    names = sorted({r["name"] for r in runs}, key=NAMES.index)
    whole = [p for p in by_pair.values() if all(name in p and "fatal" not in p[name] for name in names)]
    summary: dict[str, Any] = {"pairs": len(by_pair), "pairs_used": len(whole), "failed_runs": 0}
    summary["failed_runs"] = sum(1 for r in runs if "fatal" in r)
    for name in names:
        mine = [p[name] for p in whole]
        flows = sum(r["flows"] for r in mine)
        summary[f"{name}_cpu_ms_per_flow"] = sum(r["cpu_ms"] for r in mine) / flows if flows else None
    baton, mcp = summary.get("baton_cpu_ms_per_flow"), summary.get("mcp_cpu_ms_per_flow")
    if baton and mcp:
        summary["ratio"] = baton / mcp
        own = sorted(
            (p["baton"]["cpu_ms"] / p["baton"]["flows"]) / (p["mcp"]["cpu_ms"] / p["mcp"]["flows"]) for p in whole
        )
        summary["pair_ratios"] = {"min": own[0], "median": statistics.median(own), "max": own[-1]}
    return summary


def check(summary: dict[str, Any]) -> dict[str, Any]:
    """PASS when the pooled ratio is at most the target and no run failed; n/a without both sides."""
    target = f"Baton in-memory CPU per flow <= {TARGET:g} x mcp 2.3.0 in-memory"
    if "ratio" not in summary:
        return {"target": target, "status": "n/a", "detail": "not both sides measured"}
    detail = f"ratio {summary['ratio']:.3f} over {summary['pairs_used']} pooled pairs"
    if summary["failed_runs"]:
        return {"target": target, "status": "FAIL", "detail": f"{detail}; {summary['failed_runs']} runs failed"}
    return {"target": target, "status": "PASS" if summary["ratio"] <= TARGET else "FAIL", "detail": detail}


def report(summary: dict[str, Any], verdict: dict[str, Any], n: int, warmup: int) -> str:
    lines = [
        "# In-memory MRTR flow: Baton's test client vs mcp 2.3.0's",
        "",
        f"Each run: {warmup} warmup flows, then {n} measured flows, in a process of its own; pairs alternate.",
        "",
        "| client | CPU ms per flow (pooled) |",
        "|---|---|",
    ]
    for name in NAMES:
        value = summary.get(f"{name}_cpu_ms_per_flow")
        if value is not None:
            lines.append(f"| {LABELS[name]} | {value:.4f} |")
    if "ratio" in summary:
        spread = summary["pair_ratios"]
        lines += [
            "",
            f"Baton / mcp: **{summary['ratio']:.3f}** (pairs used {summary['pairs_used']} of {summary['pairs']}; "
            f"the pairs' own ratios {spread['min']:.3f} / {spread['median']:.3f} / {spread['max']:.3f}, "
            "min / median / max)",
        ]
    lines += ["", f"- {verdict['target']}: **{verdict['status']}** ({verdict['detail']})"]
    return "\n".join(lines)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bench/kit_compare", description=__doc__.partition("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=20, help="pairs of runs (default 20)")
    parser.add_argument("-n", type=int, default=1000, help="measured flows per run (default 1000)")
    parser.add_argument("--warmup", type=int, default=100, help="unmeasured flows first, per run (default 100)")
    parser.add_argument("--only", choices=NAMES, help="measure one side only (no target check)")
    parser.add_argument("--python", type=Path, default=None, help="Python for Baton (default .venv/bin/python)")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "bench", help="where the mcp venv is")
    parser.add_argument("--mcp-python", type=Path, help="Python of a venv with mcp==2.3.0 (instead of --cache's)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per run (default 600)")
    parser.add_argument("--json", type=Path, help="also write the runs, summary and check here")
    parser.add_argument("--worker", choices=NAMES, help=argparse.SUPPRESS)
    opts = parser.parse_args(argv)
    if opts.pairs < 1 or opts.n < 1 or opts.warmup < 0:
        parser.error("--pairs and -n must be >= 1, --warmup >= 0")
    return opts


def main(argv: list[str] | None = None) -> int:
    opts = parse_args(argv)
    if opts.worker:
        print(json.dumps(worker(opts.worker, opts.n, opts.warmup)))
        return 0
    names = [opts.only] if opts.only else list(NAMES)
    pythons: dict[str, Path] = {}
    try:
        for name in names:
            if name == "baton":
                default = ROOT / ".venv" / "bin" / "python"
                pythons[name] = opts.python or (default if default.exists() else Path(sys.executable))
            else:
                pythons[name] = opts.mcp_python or ensure_venv(opts.cache, "mcp")
    except Skip as exc:
        say(f"mcp: {exc}")
        return 2
    runs = measure(pythons, opts.pairs, opts.n, opts.warmup, opts.timeout)
    summary = summarize(runs)
    verdict = check(summary)
    print(report(summary, verdict, opts.n, opts.warmup))
    command = "bench/kit_compare " + " ".join(argv if argv is not None else sys.argv[1:])
    if opts.json:
        document = {"command": command.strip(), "summary": summary, "check": verdict, "runs": runs}
        opts.json.write_text(json.dumps(document, indent=1) + "\n")
        say(f"wrote {opts.json}")
    if not summary["pairs_used"]:
        return 2
    return 1 if verdict["status"] == "FAIL" or summary["failed_runs"] else 0


if __name__ == "__main__":
    sys.exit(main())
