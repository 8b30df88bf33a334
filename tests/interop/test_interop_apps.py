"""`mcp==2.3.0`'s client reads Baton's MCP Apps tools and pages as its own Apps extension would
(peers/mcp_apps_client.py), in both eras, from `baton serve` processes of the two examples with an app:
examples/everything.py (a page given inline) and examples/dice_app.py (a page read from a file)."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT
from support.peer_venvs import INSTALL_TIMEOUT_S, as_text, ensure_venv, peer_env
from support.processes import PortOpen, free_port, start

CLIENT_TIMEOUT_S = 60.0
pytestmark = pytest.mark.timeout(2 * INSTALL_TIMEOUT_S)


@pytest.fixture(scope="module")
@needs("process")
def mcp_python() -> Path:
    return ensure_venv("mcp")


SERVED = [
    ("examples/everything.py", "app_greeting"),
    ("examples/dice_app.py", "roll_dice"),
    # Baton's ask app (P213): a tool of the app rung and the app-only answer tool, and the waiting result.
    ("tests/servers/ask_app.py", "choose"),
    ("tests/servers/ask_app.py", "baton_ask_answer"),
]


@pytest.fixture(scope="module", params=SERVED, ids=[f"{Path(t).stem}-{tool}" for t, tool in SERVED])
@needs("process")
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str, Path]]:
    """`baton serve <target>` on a loopback port: its URL, the app tool's name, and its log."""
    target, tool = request.param
    work = tmp_path_factory.mktemp("interop-apps")
    env = {k: v for k, v in os.environ.items() if k != "BATON_STATE_KEYS" and not k.startswith("OTEL_")}
    env["BATON_DATA_DIR"] = str(work / "data")
    port = free_port()
    env.update(BATON_PUBLIC_URL=f"http://127.0.0.1:{port}", BATON_LEDGER="memory:", BATON_CONNECT_STORE="memory:")
    command = [BATON, "serve", target, "--http", f"127.0.0.1:{port}"]
    log = work / "baton.log"
    process = start(command, cwd=ROOT, env=env, log=log, ready=PortOpen(port), timeout=60.0)
    try:
        yield f"http://127.0.0.1:{port}/mcp", tool, log
    finally:
        process.stop()


@pytest.mark.parametrize("era", ["2026-07-28", "2025-11-25"])
def test_the_mcp_client_sees_the_app_as_its_apps_extension_expects(
    mcp_python: Path, served: tuple[str, str, Path], era: str
) -> None:
    url, tool, log = served
    command = [str(mcp_python), str(ROOT / "peers" / "mcp_apps_client.py"), url, tool]
    if era == "2025-11-25":
        command.append("legacy")
    try:
        done = processes.run(
            command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, env=peer_env(), check=False
        )
    except subprocess.TimeoutExpired as exc:
        pytest.fail(f"mcp_apps_client.py did not finish:\n{as_text(exc.stderr)}\n{log.read_text()}")
    report = f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}\n--- Baton ---\n{log.read_text()}"
    assert done.returncode == 0, report
    assert "apps: ok" in done.stdout.splitlines(), report
    assert f"protocol: {era}" in done.stderr.splitlines(), report
    if tool == "choose":  # a client with apps and no elicitation: the question is in the ask app (P213)
        assert re.search(r"^result _meta keys: \[.*'baton/ask'", done.stderr, re.MULTILINE), report
        assert "the form shown with this result asks it" in done.stderr, report
