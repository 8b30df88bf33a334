"""Each library's import time, in its own server's venv, taken before any server starts.

A fresh ``python -E -c "<what the server's module imports>"`` minus a fresh ``python -E -c pass`` run beside it,
so that the interpreter's start-up and the venv's ``.pth`` files cancel out; the median over the runs.
"""

from __future__ import annotations

import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from lineup import IMPORTS
from processes import Skip, say


def wall_ms(argv: list[str], cwd: str) -> float:
    """The wall time of one run of ``argv``, in ms; raise Skip if it fails."""
    t0 = time.perf_counter()
    done = subprocess.run(
        argv,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        timeout=120,
        check=False,
    )
    took = (time.perf_counter() - t0) * 1000
    if done.returncode != 0:
        last = done.stderr.decode(errors="replace").strip().splitlines()[-1:]
        raise Skip(f"exit {done.returncode}: {' '.join(last)}")
    return took


def import_times(pythons: dict[str, Path], runs: int) -> dict[str, dict[str, Any]]:
    """Each library's import time, in its own server's venv (``pythons``): the median over ``runs`` of the wall
    time of a fresh ``python -E -c IMPORTS[name]`` minus that of a fresh ``python -E -c pass`` run beside it.

    One unmeasured run of each comes first, so that bytecode caches are warm. The libraries take turns, and
    the order within each pair alternates, against drift. The current directory is an empty temporary one.
    """
    results: dict[str, dict[str, Any]] = {}
    diffs: dict[str, list[float]] = {name: [] for name in pythons}
    bases: dict[str, list[float]] = {name: [] for name in pythons}
    with tempfile.TemporaryDirectory(prefix="baton-bench-import-") as cwd:
        for rep in range(runs + 1):
            for name, python in pythons.items():
                if "error" in results.get(name, {}):
                    continue
                pair = [[str(python), "-E", "-c", "pass"], [str(python), "-E", "-c", IMPORTS[name]]]
                try:
                    took = [wall_ms(argv, cwd) for argv in (pair if rep % 2 else pair[::-1])]
                except (Skip, OSError, subprocess.SubprocessError) as exc:
                    results[name] = {"statement": IMPORTS[name], "error": str(exc)}
                    say(f"{name}: import time not measured: {exc}")
                    continue
                base, loaded = (took[0], took[1]) if rep % 2 else (took[1], took[0])
                if rep:  # the first pair only warms the caches
                    bases[name].append(base)
                    diffs[name].append(loaded - base)
    for name, python in pythons.items():
        if name in results:
            continue
        results[name] = {
            "statement": IMPORTS[name],
            "python": str(python),
            "runs": runs,
            "import_ms": round(statistics.median(diffs[name]), 2),
            "import_ms_min": round(min(diffs[name]), 2),
            "import_ms_max": round(max(diffs[name]), 2),
            "bare_python_ms": round(statistics.median(bases[name]), 2),
        }
        say(
            f"{name}: import {results[name]['import_ms']:.1f} ms (a bare python: {results[name]['bare_python_ms']:.1f})"
        )
    return results
