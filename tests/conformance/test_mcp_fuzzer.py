"""The public MCP fuzzer, `mcp-fuzzer` 0.7.0 (in its own venv, tests/support/peer_venvs.py), against
examples/everything.py over Streamable HTTP and over stdio: every mode (tools, resources, prompts,
protocol), both phases (tools: `--phase both`; protocol: a realistic and an aggressive run), with
`--security-audit`. The server's ask timeout is 1 s for the run (`baton serve --ask-timeout`): the
fuzzer declares elicitation and never answers, so each call of a tool that asks waits that long.

Held: every run completes and fuzzed something; no crash, hang, internal_error or error_leakage finding;
every other finding is of a category judged in docs/security.md ("mcp-fuzzer"); the HTTP server logged
no traceback. The five runs of a transport go at once (they mostly wait), so each test takes about a minute.
"""

from __future__ import annotations

import json
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from support import processes
from support.paths import BATON, ROOT
from support.peer_venvs import ensure_venv, peer_env
from support.serve import start_server

EVERYTHING = ROOT / "examples" / "everything.py"
ASK_TIMEOUT = "1"
RUN_TIMEOUT_S = 300
RUNS = [  # (name, arguments): every mode, both phases
    ("tools", ["--mode", "tools", "--phase", "both"]),
    ("resources", ["--mode", "resources", "--phase", "both"]),
    ("prompts", ["--mode", "prompts", "--phase", "both"]),
    ("protocol-realistic", ["--mode", "protocol", "--protocol-phase", "realistic"]),
    ("protocol-aggressive", ["--mode", "protocol", "--protocol-phase", "aggressive"]),
]
NEVER = {"crash", "hang", "internal_error", "error_leakage"}
# Judged in docs/security.md, "mcp-fuzzer": not defects of Baton (each with the reason there).
JUDGED = {"accepted_malformed", "injection_reflection"}


def fuzz(fuzzer: Path, name: str, mode: list[str], transport: list[str], out: Path) -> dict[str, Any]:
    """One mcp-fuzzer run; its run summary and findings, or a failure with its output."""
    argv = [
        str(fuzzer),
        *mode,
        *transport,
        "--security-audit",
        "--runs",
        "3",
        "--runs-per-type",
        "3",
        "--timeout",
        "10",
        "--seed",
        "1",
        "--no-network",
        "--fs-root",
        str(out / "fs"),
        "--output-dir",
        str(out / name),
    ]
    try:
        done = processes.run(
            argv, capture_output=True, text=True, timeout=RUN_TIMEOUT_S, env=peer_env(), cwd=out, check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mcp-fuzzer {name} ran over {RUN_TIMEOUT_S} s: {exc.stdout!r:.2000}", pytrace=False)
    shown = f"mcp-fuzzer {name} ({' '.join(argv)}):\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}"
    assert done.returncode == 0, shown
    summary = json.loads((out / name / "run_summary.json").read_text())
    findings = json.loads((out / name / "findings.json").read_text())["findings"]
    assert summary["status"] == "completed", shown
    fuzzed = summary["tools"]["by_name"] if name == "tools" else summary["protocols"]["total_runs"]
    assert fuzzed, f"mcp-fuzzer {name} fuzzed nothing:\n{shown}"
    return {"name": name, "findings": findings, "shown": shown}


def check(runs: list[dict[str, Any]]) -> None:
    for run in runs:
        categories = {f["category"] for f in run["findings"]}
        bad = [f for f in run["findings"] if f["category"] in NEVER]
        assert not bad, f"mcp-fuzzer {run['name']}: {json.dumps(bad, indent=1)[:4000]}"
        unjudged = categories - JUDGED
        assert not unjudged, f"mcp-fuzzer {run['name']}: findings not judged in docs/security.md: {unjudged}"


def fuzz_all(transport: list[str], out: Path) -> list[dict[str, Any]]:
    fuzzer = ensure_venv("mcp-fuzzer").with_name("mcp-fuzzer")
    with ThreadPoolExecutor(len(RUNS)) as pool:
        return list(pool.map(lambda run: fuzz(fuzzer, run[0], run[1], transport, out), RUNS))


def test_mcp_fuzzer_over_streamable_http(tmp_path: Path) -> None:
    ensure_venv("mcp-fuzzer")  # before the server starts: the first run installs it
    with start_server(str(EVERYTHING), "--ask-timeout", ASK_TIMEOUT, log=tmp_path / "server.log") as server:
        runs = fuzz_all(["--protocol", "streamablehttp", "--endpoint", server.url], tmp_path)
    check(runs)
    log = server.log.read_text()
    assert "Traceback" not in log, log[-4000:]


def test_mcp_fuzzer_over_stdio(tmp_path: Path) -> None:
    command = f"{BATON} serve {EVERYTHING} --stdio --ask-timeout {ASK_TIMEOUT}"
    check(fuzz_all(["--protocol", "stdio", "--endpoint", command], tmp_path))
