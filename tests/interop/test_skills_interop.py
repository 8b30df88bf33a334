"""Skills between implementations: the MCP Inspector's own skills verifier (`--method skills/list --verify`:
its conformance rules, digests and frontmatter, in JavaScript) passes what Baton's server serves."""

from __future__ import annotations

import json
from pathlib import Path

from support import processes
from support.paths import BATON, ROOT
from support.peer_venvs import ensure_inspector, peer_env


def test_the_inspector_verifies_batons_skills(tmp_path: Path) -> None:
    inspector = ensure_inspector()
    env = {k: v for k, v in peer_env().items() if k != "NODE_OPTIONS"}
    env["MCP_CATALOG_PATH"] = str(tmp_path / "inspector-catalog.json")
    server = ["-e", f"BATON_DATA_DIR={tmp_path / 'data'}", BATON, "serve", str(ROOT / "examples/everything.py")]
    command = inspector.argv("--cli", *server, "--stdio", "--method", "skills/list", "--verify")
    done = processes.run(command, capture_output=True, text=True, timeout=120, env=env, cwd=tmp_path, check=False)
    context = f"exit {done.returncode}\n--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"
    assert done.returncode == 0, context
    (report,) = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert (report["uri"], report["ok"], report["outcome"]) == ("skill://baton-tools/SKILL.md", True, "verified"), (
        context
    )
    assert report["conformance"] == [] and report["frontmatter"] == [], context
    assert sorted(f["uri"] for f in report["files"] if f["status"] == "verified") == [
        "skill://baton-tools/SKILL.md",
        "skill://baton-tools/references/asking.md",
    ], context
    assert "Verified 1 skill and 2 files: no conformance errors." in done.stderr, context
