"""The stdio transport with a real subprocess: framing, concurrency, cancellation, bad input, EOF."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from support import processes
from support.paths import BATON, ROOT, SERVERS
from support.stdio import StdioPeer

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)


@pytest.fixture
def peer(tmp_path: Path) -> Iterator[StdioPeer]:
    p = StdioPeer(str(SERVERS / "guarded.py"), {"BATON_TEST_RUNLOG": str(tmp_path / "runs.log")})
    with p.process:
        yield p


def test_flow_over_stdio(peer: StdioPeer) -> None:
    peer.request(1, "tools/call", {"name": "delete_project", "arguments": {"project": "x"}})
    r1 = peer.read()
    assert r1["id"] == 1 and r1["result"]["resultType"] == "input_required"
    peer.request(
        2,
        "tools/call",
        {
            "name": "delete_project",
            "arguments": {"project": "x"},
            "inputResponses": {"q1": {"action": "accept", "content": {"confirm": True}}},
            "requestState": r1["result"]["requestState"],
        },
    )
    r2 = peer.read()
    assert r2["result"]["content"][0]["text"] == "deleted x"
    assert peer.close() == 0


def test_requests_run_concurrently_and_cancel(peer: StdioPeer, tmp_path: Path) -> None:
    peer.request("slow", "tools/call", {"name": "slow", "arguments": {"seconds": 5}})
    peer.request("fast", "tools/list")
    first = peer.read()
    assert first["id"] == "fast"  # the slow request does not block the fast one
    peer.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "slow"}})
    peer.request("after", "server/discover")
    assert peer.read()["id"] == "after"
    with pytest.raises(TimeoutError):
        peer.read(timeout=0.5)  # nothing more is sent for the cancelled request
    assert "slow:end" not in (tmp_path / "runs.log").read_text()


def test_bad_lines_get_errors_and_the_server_keeps_serving(peer: StdioPeer) -> None:
    peer.send(b"this is not json\n")
    error = peer.read()
    assert error["id"] is None and error["error"]["code"] == -32700
    peer.send({"jsonrpc": "2.0", "id": 7, "method": "server/discover", "params": {}})
    assert peer.read()["error"]["code"] == -32602
    peer.send(b"[1, 2]\n")
    assert peer.read()["error"]["code"] == -32600
    peer.request(8, "ping")
    assert peer.read()["error"]["code"] == -32601
    peer.request(9, "server/discover")
    assert peer.read()["result"]["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert peer.close() == 0


def test_log_notifications_over_stdio_only_when_asked() -> None:
    p = StdioPeer("examples/everything.py")
    try:
        p.request(1, "tools/call", {"name": "test_logging_tool", "arguments": {}})
        assert p.read()["result"]["content"][0]["text"] == "Logging test completed"
        p.request(
            2,
            "tools/call",
            {"name": "test_logging_tool", "arguments": {}},
            **{"io.modelcontextprotocol/logLevel": "info"},
        )
        kinds = [p.read().get("method", "response") for _ in range(4)]
        assert kinds == ["notifications/message"] * 3 + ["response"]
        assert p.close() == 0
    finally:
        p.process.stop()


@pytest.mark.parametrize("source", ["file", "devnull"])
def test_stdin_that_is_not_a_pipe_is_served_to_its_end(source: str, tmp_path: Path) -> None:
    """A file or /dev/null as stdin (`baton serve x --stdio < requests.jsonl`): the event loop cannot
    watch those, so a thread reads them; the server answers every line and exits 0 at EOF."""
    path = tmp_path / "requests.jsonl"
    path.write_text(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "ping"}) + "\n")
    with open(path if source == "file" else os.devnull, "rb") as stdin:
        done = processes.run(
            [BATON, "serve", "examples/projects.py", "--stdio"],
            check=False,
            cwd=ROOT,
            stdin=stdin,
            capture_output=True,
            timeout=60,
            env={**os.environ, "BATON_DATA_DIR": str(tmp_path)},
        )
    assert done.returncode == 0, done.stderr.decode()
    expected = [{"jsonrpc": "2.0", "id": 1, "result": {}}] if source == "file" else []
    assert [json.loads(line) for line in done.stdout.splitlines()] == expected
