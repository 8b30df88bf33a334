"""Run a script of bench/ as the benchmark smoke tests do: with this venv's Python, its files under a tmp_path."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from support import processes
from support.paths import ROOT

RESULTS = "results"
FIGURES = "figures.json"


def bench(
    script: str, tmp_path: Path, *args: str, out: bool = True, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    """``bench/SCRIPT --python <this Python> ARGS``, its peer venvs (``--cache``) under ``tmp_path`` and its figures
    (``--json``) in ``tmp_path / FIGURES``; with ``out``, its Markdown report (``--out``) in ``tmp_path / RESULTS``."""
    files = ["--cache", str(tmp_path / "cache"), "--json", str(tmp_path / FIGURES)]
    if out:
        files += ["--out", str(tmp_path / RESULTS)]
    argv = [sys.executable, str(ROOT / "bench" / script), "--python", sys.executable, *args, *files]
    return processes.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=timeout, check=False)
