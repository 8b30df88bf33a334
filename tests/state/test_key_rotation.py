"""Key rotation: a file-backed ring follows its file, `baton keys`, and flows that span a rotation.

Also the `baton-instance` header that names the process behind each HTTP response of a named instance.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import subprocess
import time
from pathlib import Path

import httpx
import pytest
from support import processes
from support.paths import BATON
from wire import accept, call

from baton.connect.cookie import Sessions
from baton.connect.derived import DerivedKeys
from baton.connect.vault import MemoryVaultStore, Vault
from baton.state import keys as keys_module
from baton.state.keys import Key, KeyRing, write_key_file


@pytest.fixture
def key_file(tmp_path: Path) -> Path:
    path = tmp_path / "ring" / "state-keys"
    write_key_file(path, [Key.generate("old")])
    return path


@pytest.fixture(autouse=True)
def _fast_recheck(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys_module, "RECHECK_S", 0.05)


def keys(*args: str, key_file: Path) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [BATON, "keys", "--key-file", str(key_file), *args], check=False, capture_output=True, text=True, timeout=30
    )


def kids(path: Path) -> list[str]:
    return [line.split(":", 1)[0] for line in path.read_text().split()]


@pytest.mark.process
def test_ring_follows_its_file(key_file: Path) -> None:
    ring = KeyRing.from_file(key_file)
    assert ring.current.kid == "old" and ring.version == 0
    write_key_file(key_file, [Key.generate("new"), *ring.keys])
    assert ring.current.kid == "old"  # not looked at again within RECHECK_S
    time.sleep(0.06)
    assert ring.current.kid == "new"
    assert [k.kid for k in ring.keys] == ["new", "old"]
    assert ring.version == 1


def test_an_unknown_kid_makes_the_ring_look_at_once(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys_module, "RECHECK_S", 3600)
    ring = KeyRing.from_file(key_file)
    write_key_file(key_file, [Key.generate("new"), Key.decode(key_file.read_text().strip())])
    assert ring.cipher("new") is not None
    assert ring.current.kid == "new"


@pytest.mark.process
def test_a_key_added_just_after_the_ring_looked_opens_at_once(key_file: Path) -> None:
    # The race the scale-out rotation test met: instance A looks at the file, the key is rotated, and
    # instance B (which looked after the rotation) seals a token that reaches A a moment later.
    ring_a, ring_b = KeyRing.from_file(key_file), KeyRing.from_file(key_file)
    _ = ring_a.current
    ring_a._looked = time.monotonic()  # A has just looked
    write_key_file(key_file, [Key.generate("new"), *ring_b.keys])
    ring_b._looked = 0.0  # B looks now and seals with the new key
    assert ring_b.sealing()[0] == "new"
    assert ring_a.cipher("new") is not None  # no wait: A finds it at once


def test_unknown_kids_cannot_make_the_ring_read_its_file(key_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys_module, "RECHECK_S", 3600)
    ring = KeyRing.from_file(key_file)
    reads = 0
    real = keys_module._read_keys

    def counting(path: Path) -> list[Key]:
        nonlocal reads
        reads += 1
        return real(path)

    monkeypatch.setattr(keys_module, "_read_keys", counting)
    for i in range(1000):
        assert ring.cipher(f"bogus{i}") is None
    assert reads == 0  # each bogus key id costs a stat of the unchanged file, never a read


def test_a_broken_file_keeps_the_keys_in_use(key_file: Path, caplog: pytest.LogCaptureFixture) -> None:
    ring = KeyRing.from_file(key_file)
    key_file.write_text("this is not a key\n")
    time.sleep(0.06)
    with caplog.at_level(logging.ERROR, logger="baton.keys"):
        assert ring.current.kid == "old"
    assert "could not be re-read, keeping the current keys" in caplog.text
    assert ring.cipher("old") is not None


def test_write_key_file_is_private_and_validates(tmp_path: Path) -> None:
    path = tmp_path / "k"
    write_key_file(path, [Key.generate("a"), Key.generate("b")])
    assert os.stat(path).st_mode & 0o777 == 0o600
    assert kids(path) == ["a", "b"]
    with pytest.raises(ValueError, match="unique"):
        write_key_file(path, [Key.generate("a"), Key.generate("a")])
    assert kids(path) == ["a", "b"]
    assert [p.name for p in tmp_path.iterdir()] == ["k"]  # no temporary file left behind


@pytest.mark.process
def test_derived_keys_follow_a_rotation(key_file: Path) -> None:
    ring = KeyRing.from_file(key_file)
    derived = DerivedKeys(ring, "test label")
    old_kid, old_key = derived.current
    write_key_file(key_file, [Key.generate("new"), *ring.keys])
    time.sleep(0.06)
    new_kid, new_key = derived.current
    assert (old_kid, new_kid) == ("old", "new") and old_key != new_key
    assert derived.get("old") == old_key
    assert derived.all() == [new_key, old_key]


@pytest.mark.process
def test_vault_records_and_sessions_open_across_a_rotation(key_file: Path) -> None:
    asyncio.run(_vault_and_sessions_across_a_rotation(key_file))


async def _vault_and_sessions_across_a_rotation(key_file: Path) -> None:
    # Instance A rotates first; instance B, which has not looked at the file yet, must still open A's records.
    ring_a, ring_b = KeyRing.from_file(key_file), KeyRing.from_file(key_file)
    store = MemoryVaultStore()
    vault_a, vault_b = Vault(ring_a, store), Vault(ring_b, store)
    sessions_a, sessions_b = Sessions(ring_a), Sessions(ring_b)
    await vault_a.put("alice", "github", "token-before")
    write_key_file(key_file, [Key.generate("new"), *ring_a.keys])
    await asyncio.sleep(0.06)
    _ = ring_a.current  # A looks at the file now
    ring_b._looked = time.monotonic()  # B would not look on its own for a while ...
    await vault_a.put("alice", "gitlab", "token-after")
    assert store.records["alice", "gitlab"][1:4] == b"new"
    await asyncio.sleep(0.006)  # ... but an unknown kid makes it look (at most ten times a second)
    assert await vault_b.reveal("alice", "gitlab") == "token-after"
    assert await vault_b.reveal("alice", "github") == "token-before"
    session, cookie = sessions_a.issue("alice")
    value = cookie.split(";", 1)[0].split("=", 1)[1]
    assert value.split(".")[1] == "new"
    assert sessions_b.read(value) == session
    assert sessions_b.check_csrf(session, "t1", sessions_a.csrf(session, "t1"))


@pytest.mark.process
def test_cli_rotate_add_promote_retire(key_file: Path) -> None:
    assert keys("list", key_file=key_file).stdout == "old\tseals and opens\n"
    r = keys("rotate", key_file=key_file)
    assert r.returncode == 0 and "which seals from now on" in r.stderr
    new = kids(key_file)[0]
    assert kids(key_file) == [new, "old"]
    r = keys("add", key_file=key_file)
    added = kids(key_file)[2]
    assert r.returncode == 0 and f"added key {added} (opens only)" in r.stderr
    assert keys("promote", added, key_file=key_file).returncode == 0
    assert kids(key_file) == [added, new, "old"]
    r = keys("retire", added, key_file=key_file)
    assert r.returncode == 1 and "is the sealing key" in r.stderr
    assert keys("retire", "old", key_file=key_file).returncode == 0
    assert kids(key_file) == [added, new]
    r = keys("retire", "nope", key_file=key_file)
    assert r.returncode == 1 and "no key 'nope'" in r.stderr
    listed = keys("list", key_file=key_file).stdout
    assert listed == f"{added}\tseals and opens\n{new}\topens\n"
    assert key_file.read_text().split(":")[1][:8] not in listed  # never prints secrets


@pytest.mark.process
def test_cli_errors(tmp_path: Path) -> None:
    r = keys("list", key_file=tmp_path / "absent")
    assert r.returncode == 1 and "no key file at" in r.stderr
    bad = tmp_path / "bad"
    bad.write_text("x:y\n")
    r = keys("rotate", key_file=bad)
    assert r.returncode == 1 and "key 'x'" in r.stderr
    generated = processes.run([BATON, "keys", "generate"], check=True, capture_output=True, text=True, timeout=30)
    entry = generated.stdout.strip()
    assert Key.decode(entry).kid == entry.split(":")[0]


def test_a_flow_spans_a_rotation_of_a_running_server(serve, key_file: Path) -> None:  # type: ignore[no-untyped-def]
    server = serve("examples/everything.py", env={"BATON_KEY_FILE": str(key_file), "BATON_INSTANCE": "solo"})
    before = call(server.url, "perform", {"action": "a"})
    assert before.headers["baton-instance"] == "solo"
    state = before.json()["result"]["requestState"]
    assert state.split(".")[1] == "old"
    assert keys("rotate", key_file=key_file).returncode == 0
    new = kids(key_file)[0]
    deadline = time.monotonic() + 10
    while True:  # the server looks at its key file about once a second
        fresh = call(server.url, "perform", {"action": "b"}).json()["result"]["requestState"]
        if fresh.split(".")[1] == new or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert fresh.split(".")[1] == new
    done = call(server.url, "perform", {"action": "a"}, responses={"q1": accept(confirm=True)}, state=state)
    assert done.json()["result"]["content"][0]["text"] == "done: a"
    assert done.headers["baton-instance"] == "solo"


def test_an_unnamed_instance_sends_no_instance_header(serve, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """protocol.md P229: without `$BATON_INSTANCE` no response names the instance (its default name is host:pid),
    a refusal and a request outside the endpoint neither; the start-up lines still name it, for its operator."""
    monkeypatch.delenv("BATON_INSTANCE", raising=False)
    server = serve("examples/everything.py")
    responses = [
        call(server.url, "perform", {"action": "a"}),
        call(server.url, "no-such-tool", {}),
        httpx.get(server.url, timeout=10),  # 405
        httpx.get(server.url.replace("/mcp", "/elsewhere"), timeout=10),  # 404
    ]
    assert [r.status_code for r in responses] == [200, 400, 405, 404]
    assert not [r.headers["baton-instance"] for r in responses if "baton-instance" in r.headers]
    assert f"instance: {socket.gethostname()}:{server.proc.pid} (unnamed" in server.log.read_text()
