"""`baton serve`: loading targets, clear refusals, and --workers sharing the key file."""

from __future__ import annotations

import re
import subprocess
import time

import pytest
from support import processes
from support.paths import BATON, ROOT, SERVERS
from wire import accept, call, post, request

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

INSTANCE_HEADER = "baton-instance"  # src/baton/serve/http.py: a worker of a named instance sends $BATON_INSTANCE:pid


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return processes.run([BATON, *args], cwd=ROOT, capture_output=True, text=True, timeout=30, check=False)


def test_missing_target_is_a_clear_error() -> None:
    done = run_cli("serve", "no/such/file.py")
    assert done.returncode == 2
    assert "no such file: no/such/file.py" in done.stderr


def test_ambiguous_target_names_the_fix() -> None:
    done = run_cli("serve", str(SERVERS / "two_servers.py"))
    assert done.returncode == 2 and "2 Servers" in done.stderr and ":ATTRIBUTE" in done.stderr
    done = run_cli("serve", f"{SERVERS / 'two_servers.py'}:third")
    assert done.returncode == 2 and "no attribute 'third'" in done.stderr


def test_workers_with_a_per_process_key_refuse_to_start() -> None:
    done = run_cli("serve", str(SERVERS / "ephemeral.py"), "--workers", "2", "--http", "127.0.0.1:1")
    assert done.returncode == 2
    assert "per-process key" in done.stderr


def test_bad_http_address() -> None:
    done = run_cli("serve", "examples/everything.py", "--http", "nowhere")
    assert done.returncode == 2 and "HOST:PORT" in done.stderr


def test_workers_share_the_key_file(serve) -> None:  # type: ignore[no-untyped-def]
    """Every flow completes whichever worker answers each round; a named instance's workers each send their own
    `baton-instance`, `$BATON_INSTANCE:pid` (protocol.md P229), by which the test sees both answer."""
    server = serve("examples/everything.py", "--workers", "2", env={"BATON_INSTANCE": "w"})
    instances: set[str] = set()
    for i in range(20):  # rounds land on either worker; every flow must complete
        args = {"action": f"deploy-{i}"}
        first = call(server.url, "perform", args)
        r1 = first.json()["result"]
        second = call(server.url, "perform", args, responses={"q1": accept(confirm=True)}, state=r1["requestState"])
        r2 = second.json()["result"]
        assert r2["content"][0]["text"] == f"done: deploy-{i}"
        instances |= {first.headers[INSTANCE_HEADER], second.headers[INSTANCE_HEADER]}
    # Both workers answered. Each request is its own connection (wire.post opens one per call) and the
    # kernel hands each connection to either worker; one may still have been starting, so ask more until
    # both have answered: at most 200 requests or 60 s.
    deadline = time.monotonic() + 60
    for _ in range(200):
        if len(instances) == 2 or time.monotonic() > deadline:
            break
        resp = post(server.url, request("server/discover"))
        assert resp.status_code == 200, resp.text
        instances.add(resp.headers[INSTANCE_HEADER])
    assert len(instances) == 2, f"only {sorted(instances)} answered: --workers 2 should answer from two processes"
    assert all(re.fullmatch(r"w:\d+", name) for name in instances), instances
