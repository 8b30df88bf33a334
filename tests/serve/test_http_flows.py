"""Flows over Streamable HTTP: sealed state, capability gating and re-asking through the HTTP app in this process
(support.inprocess: the same ASGI app, no socket); instances sharing keys as `baton serve` processes on loopback."""

from __future__ import annotations

import base64
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.inprocess import InProcessServer, load_server
from support.paths import SERVERS
from wire import accept, call

GUARDED = str(SERVERS / "guarded.py")


@pytest.fixture
def runlog(tmp_path: Path) -> Path:
    return tmp_path / "runs.log"


@pytest.fixture
def guarded(runlog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[InProcessServer]:
    monkeypatch.setenv("BATON_TEST_RUNLOG", str(runlog))
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path))  # its key file, as `baton serve` would make it
    with InProcessServer(load_server(Path(GUARDED)), tmp_path / "server.log") as server:
        yield server


def runs(runlog: Path) -> list[str]:
    return runlog.read_text().splitlines() if runlog.exists() else []


def first_round(url: str, tool: str = "delete_project", args: dict | None = None, who: str = "alice") -> dict:
    resp = call(url, tool, {"project": "p1"} if args is None else args, Authorization=f"Bearer {who}")
    assert resp.status_code == 200, resp.text
    result = resp.json()["result"]
    assert result["resultType"] == "input_required"
    return result


def confirm_deletion(url: str, state: str):  # type: ignore[no-untyped-def]
    """Alice's second round of delete_project p1: the confirmation, with the given state."""
    return call(
        url,
        "delete_project",
        {"project": "p1"},
        responses={"q1": accept(confirm=True)},
        state=state,
        Authorization="Bearer alice",
    )


def assert_rejected(resp, runlog: Path, before: int) -> None:  # type: ignore[no-untyped-def]
    assert resp.status_code == 400
    error = resp.json()["error"]
    assert error["code"] == -32602
    assert error["message"] == "Invalid or expired requestState"
    assert len(runs(runlog)) == before, "user code ran for a rejected requestState"


def test_confirm_flow_completes(guarded: InProcessServer, runlog: Path) -> None:
    r1 = first_round(guarded.url)
    (key,) = r1["inputRequests"]
    resp = call(
        guarded.url,
        "delete_project",
        {"project": "p1"},
        responses={key: accept(confirm=True)},
        state=r1["requestState"],
        Authorization="Bearer alice",
    )
    result = resp.json()["result"]
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "deleted p1"
    assert "deleted:p1 " in runlog.read_text()


@pytest.mark.parametrize("attack", ["tampered", "truncated", "cross_tool", "cross_argument", "cross_principal"])
def test_bad_state_is_rejected_before_user_code(guarded: InProcessServer, runlog: Path, attack: str) -> None:
    r1 = first_round(guarded.url)
    state, (key,) = r1["requestState"], r1["inputRequests"]
    before = len(runs(runlog))
    tool, args, who = "delete_project", {"project": "p1"}, "alice"
    if attack == "tampered":
        prefix, body = state.rsplit(".", 1)
        raw = bytearray(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
        raw[20] ^= 0x01
        state = prefix + "." + base64.urlsafe_b64encode(bytes(raw)).rstrip(b"=").decode()
    elif attack == "truncated":
        state = state[:-5]
    elif attack == "cross_tool":
        tool = "archive_project"  # asks the very same question, so only the binding can tell
    elif attack == "cross_argument":
        args = {"project": "p2"}
    else:
        who = "mallory"
    resp = call(
        guarded.url,
        tool,
        args,
        responses={key: accept(confirm=True)},
        state=state,
        Authorization=f"Bearer {who}",
    )
    assert_rejected(resp, runlog, before)
    assert "rejected requestState" in guarded.log.read_text()


def test_expired_state_is_rejected(runlog: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BATON_TEST_RUNLOG", str(runlog))
    monkeypatch.setenv("BATON_TEST_TTL", "1")
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path))
    with InProcessServer(load_server(Path(GUARDED)), tmp_path / "server.log") as server:
        r1 = first_round(server.url)
        before = len(runs(runlog))
        time.sleep(2.2)
        resp = confirm_deletion(server.url, r1["requestState"])
        assert_rejected(resp, runlog, before)
    assert "expired" in server.log.read_text()


def test_undeclared_capability_never_reaches_the_wire(guarded: InProcessServer, runlog: Path) -> None:
    resp = call(guarded.url, "delete_project", {"project": "p1"}, caps={}, Authorization="Bearer alice")
    # 2026-07-28: -32021, never an ask on the wire; its message says it as a host can pass on (P96).
    assert resp.status_code == 400
    body = resp.json()
    assert "result" not in body
    assert body["error"]["code"] == -32021
    assert body["error"]["data"] == {"requiredCapabilities": {"elicitation": {"form": {}}}}
    assert "fill in a form, and this client cannot show one" in body["error"]["message"]
    # A URL-only client cannot be sent a form either.
    resp = call(guarded.url, "delete_project", {"project": "p1"}, caps={"elicitation": {"url": {}}})
    assert resp.json()["error"]["code"] == -32021


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        ({"age": "forty", "plan": "pro"}, "expected a number"),
        ({"age": 12, "plan": "pro"}, "at least 18"),
        ({"age": 40, "plan": "gold"}, "one of free, pro"),
        ({"plan": "pro"}, "answer is required"),
    ],
)
def test_invalid_answer_is_asked_again(guarded: InProcessServer, content: dict, problem: str) -> None:
    r1 = first_round(guarded.url, "profile", {})
    resp = call(
        guarded.url,
        "profile",
        responses={"profile": {"action": "accept", "content": content}},
        state=r1["requestState"],
        Authorization="Bearer alice",
    )
    r2 = resp.json()["result"]
    assert r2["resultType"] == "input_required"
    assert problem in r2["inputRequests"]["profile"]["params"]["message"]
    # Answered correctly on the next round, the flow completes.
    resp = call(
        guarded.url,
        "profile",
        responses={"profile": accept(age=40, plan="pro")},
        state=r2["requestState"],
        Authorization="Bearer alice",
    )
    assert resp.json()["result"]["content"][0]["text"] == "40/pro/anon"


def test_handler_swallowing_the_suspension_still_asks(guarded: InProcessServer) -> None:
    resp = call(guarded.url, "swallow", Authorization="Bearer alice")
    result = resp.json()["result"]
    assert result["resultType"] == "input_required"
    assert "content" not in result
    resp = call(
        guarded.url,
        "swallow",
        responses={"q1": accept(confirm=True)},
        state=result["requestState"],
        Authorization="Bearer alice",
    )
    assert resp.json()["result"]["content"][0]["text"] == "ok=True"


def test_two_instances_sharing_the_key_file_alternate_rounds(serve, runlog: Path) -> None:  # type: ignore[no-untyped-def]
    env = {"BATON_TEST_RUNLOG": str(runlog)}
    a, b = serve(GUARDED, env=env), serve(GUARDED, env=env)
    assert a.proc.pid != b.proc.pid
    r1 = call(a.url, "two_steps", Authorization="Bearer alice").json()["result"]
    assert list(r1["inputRequests"]) == ["accept"]
    r2 = call(
        b.url,
        "two_steps",
        responses={"accept": accept(confirm=True)},
        state=r1["requestState"],
        Authorization="Bearer alice",
    ).json()["result"]
    assert list(r2["inputRequests"]) == ["really"]
    r3 = call(
        a.url,
        "two_steps",
        responses={"really": accept(confirm=False)},
        state=r2["requestState"],
        Authorization="Bearer alice",
    ).json()["result"]
    text = r3["content"][0]["text"]
    assert text == f"pid={a.proc.pid} quote=42 first=True second=False"
    # ctx.once ran its step once for the whole flow, although the handler ran on both instances.
    assert [line for line in runs(runlog) if line.startswith("quote")] == [f"quote pid={a.proc.pid}"]


def test_instance_with_another_key_refuses_the_state(serve, runlog: Path, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    a = serve(GUARDED, env={"BATON_TEST_RUNLOG": str(runlog)})
    b = serve(GUARDED, env={"BATON_TEST_RUNLOG": str(runlog), "BATON_DATA_DIR": str(tmp_path / "other")})
    r1 = first_round(a.url)
    before = len(runs(runlog))
    resp = confirm_deletion(b.url, r1["requestState"])
    assert_rejected(resp, runlog, before)
