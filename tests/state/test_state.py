"""Unit tests of sealed `requestState`: keys, key rings, key files, sealing, opening and every rejection.

Rules: design.md §4 (AEAD under a key ring, first key seals and all open, authenticated version prefix,
binding to principal, request and audience, expiry, size cap, the state never logged) and digest §4.3
(requestState is attacker-controlled input) and A5.
"""

from __future__ import annotations

import base64
import multiprocessing
import os
import re
import stat
import string
import time
from pathlib import Path
from typing import Any

import pytest

from baton.state import InvalidState, Journal, Key, KeyRing, KeyRingError, Sealer, StateTooLarge, data_dir
from baton.state.keys import ENV_KEYS, KEY_BYTES, KEY_FILE_NAME
from baton.state.seal import _HEADS_MAX, DEFAULT_MAX_BYTES, DEFAULT_TTL_S, FlowState

DIGEST = bytes(range(16))
OTHER_DIGEST = bytes([DIGEST[0] ^ 1]) + DIGEST[1:]
TOKEN_RE = re.compile(r"b1\.([A-Za-z0-9_-]{1,16})\.([A-Za-z0-9_-]+)\Z")
B64URL = string.ascii_letters + string.digits + "-_"


def ring(*kids: str) -> KeyRing:
    return KeyRing([Key.generate(k) for k in kids])


def state(**journal: Any) -> FlowState:
    return FlowState(journal=Journal(**journal))


def body_bytes(token: str) -> bytes:
    body = token.split(".", 2)[2]
    return base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))


def with_body(token: str, sealed: bytes) -> str:
    version, kid, _ = token.split(".", 2)
    return f"{version}.{kid}.{base64.urlsafe_b64encode(sealed).rstrip(b'=').decode()}"


def refused(sealer: Sealer, token: Any, principal: str = "alice", digest: bytes = DIGEST) -> InvalidState:
    with pytest.raises(InvalidState) as info:
        sealer.open(token, principal, digest)
    exc = info.value
    assert str(exc) == exc.reason
    if isinstance(token, str) and len(token) >= 8:
        assert token not in exc.reason
        body = token.split(".", 2)[-1]
        if len(body) >= 8:
            assert body not in exc.reason
    return exc


@pytest.fixture
def sealer() -> Sealer:
    return Sealer(ring("k1"), "https://api.example/mcp")


# --------------------------------------------------------------------------------------------------
# Key
# --------------------------------------------------------------------------------------------------


def test_generate() -> None:
    k = Key.generate()
    assert re.fullmatch(r"[0-9a-f]{6}", k.kid)
    assert len(k.secret) == KEY_BYTES == 32
    assert Key.generate().secret != k.secret
    assert Key.generate("mine").kid == "mine"


def test_encode_decode_round_trip() -> None:
    k = Key.generate("k-1_A")
    text = k.encode()
    kid, _, b64 = text.partition(":")
    assert kid == "k-1_A"
    assert base64.urlsafe_b64decode(b64) == k.secret
    assert Key.decode(text) == k
    # surrounding whitespace and missing padding are fine
    assert Key.decode("  " + text.rstrip("=") + "\n") == k


def test_repr_hides_the_secret() -> None:
    k = Key.generate("k1")
    assert "k1" in repr(k)
    assert k.encode().partition(":")[2] not in repr(k)
    assert repr(k.secret) not in repr(k)


@pytest.mark.parametrize("kid", ["", "a" * 17, "a.b", "a:b", "a b", "a/b", "é", "a\n", "k+1", "k=1"])
def test_bad_kid(kid: str) -> None:
    with pytest.raises(KeyRingError, match="key id"):
        Key(kid, os.urandom(32))


def test_longest_kid() -> None:
    assert Key("a" * 16, os.urandom(32)).kid == "a" * 16


@pytest.mark.parametrize("size", [0, 1, 16, 24, 31, 33, 64])
def test_wrong_length(size: int) -> None:
    with pytest.raises(KeyRingError, match="32 bytes"):
        Key("k1", os.urandom(size))
    encoded = "k1:" + base64.urlsafe_b64encode(os.urandom(size)).decode()
    with pytest.raises(KeyRingError, match="32 bytes"):
        Key.decode(encoded)


@pytest.mark.parametrize(
    "text",
    [
        "k1",  # no separator
        "",
        "k1:abcde",  # 5 characters cannot be base64
        "k1:" + "A" * 43 + "AA",  # 45 characters
        # empty kid; named, as xdist's workers must collect the same test ids
        pytest.param(":" + base64.urlsafe_b64encode(os.urandom(32)).decode(), id="empty-kid"),
        "k1:",
    ],
)
def test_bad_key_text(text: str) -> None:
    with pytest.raises(KeyRingError):
        Key.decode(text)


@pytest.mark.parametrize("junk", ["!!!!", "$$$$", "...."])
def test_key_text_with_non_alphabet_characters(junk: str) -> None:
    text = Key.generate("k1").encode()
    with pytest.raises(KeyRingError):
        Key.decode(text[:10] + junk + text[10:])


# --------------------------------------------------------------------------------------------------
# KeyRing
# --------------------------------------------------------------------------------------------------


def test_ring_basics() -> None:
    a, b = Key.generate("a"), Key.generate("b")
    r = KeyRing([a, b])
    assert r.current is a
    assert r.keys == [a, b]
    assert r.cipher("a") is not None
    assert r.cipher("b") is not None
    assert r.cipher("c") is None
    assert r.ephemeral is False


def test_ring_needs_a_key() -> None:
    with pytest.raises(KeyRingError, match="at least one"):
        KeyRing([])


def test_ring_refuses_duplicate_ids() -> None:
    with pytest.raises(KeyRingError, match="unique"):
        KeyRing([Key.generate("a"), Key.generate("b"), Key.generate("a")])


def test_ephemeral_ring() -> None:
    r = KeyRing.ephemeral_key()
    assert r.ephemeral is True
    assert len(r.keys) == 1
    assert KeyRing.ephemeral_key().current.secret != r.current.secret


def test_first_key_seals_all_open() -> None:
    a, b = Key.generate("a"), Key.generate("b")
    token_a = Sealer(KeyRing([a, b]), "aud").seal(state(), "p", DIGEST)
    assert TOKEN_RE.match(token_a).group(1) == "a"  # type: ignore[union-attr]
    token_b = Sealer(KeyRing([b, a]), "aud").seal(state(), "p", DIGEST)
    assert TOKEN_RE.match(token_b).group(1) == "b"  # type: ignore[union-attr]
    for opener in (KeyRing([a, b]), KeyRing([b, a])):
        Sealer(opener, "aud").open(token_a, "p", DIGEST)
        Sealer(opener, "aud").open(token_b, "p", DIGEST)


def test_from_text_separators() -> None:
    a, b, c = Key.generate("a"), Key.generate("b"), Key.generate("c")
    for text in (
        f"{a.encode()},{b.encode()},{c.encode()}",
        f"  {a.encode()} , {b.encode()}\n{c.encode()}  ",
        f"{a.encode()}\n\n{b.encode()},,\t{c.encode()},",
        f"{a.encode()} {b.encode()} {c.encode()}",
    ):
        r = KeyRing.from_text(text, "test")
        assert [k.kid for k in r.keys] == ["a", "b", "c"]
        assert [k.secret for k in r.keys] == [a.secret, b.secret, c.secret]
        assert r.current == a
        assert r.source == "test"


def test_from_text_errors_name_the_source_not_the_secret() -> None:
    good = Key.generate("a").encode()
    short = "b:" + base64.urlsafe_b64encode(b"x" * 20).decode()
    with pytest.raises(KeyRingError) as info:
        KeyRing.from_text(f"{good},{short}", "$SOMEWHERE")
    msg = str(info.value)
    assert msg.startswith("$SOMEWHERE: ")
    assert good.partition(":")[2] not in msg
    assert short.partition(":")[2] not in msg
    with pytest.raises(KeyRingError, match="at least one"):
        KeyRing.from_text(" , \n", "empty")
    with pytest.raises(KeyRingError, match="unique"):
        KeyRing.from_text(f"{good},{good}", "dup")


def test_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    a, b = Key.generate("env1"), Key.generate("env2")
    monkeypatch.setenv(ENV_KEYS, f"{a.encode()}, {b.encode()}")
    r = KeyRing.from_environment()
    assert r is not None
    assert [k.kid for k in r.keys] == ["env1", "env2"]
    assert r.current.secret == a.secret
    assert ENV_KEYS in r.source
    # the environment wins over the key file, and no key file is created
    d = KeyRing.default()
    assert d.current.secret == a.secret
    assert not (data_dir() / KEY_FILE_NAME).exists()


@pytest.mark.parametrize("value", [None, ""])
def test_environment_unset_or_empty(monkeypatch: pytest.MonkeyPatch, value: str | None) -> None:
    if value is None:
        monkeypatch.delenv(ENV_KEYS, raising=False)
    else:
        monkeypatch.setenv(ENV_KEYS, value)
    assert KeyRing.from_environment() is None


def test_environment_malformed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_KEYS, "k1:tooshort")
    with pytest.raises(KeyRingError, match=re.escape(f"${ENV_KEYS}")):
        KeyRing.from_environment()
    with pytest.raises(KeyRingError):
        KeyRing.default()


def test_data_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path / "explicit"))
    assert data_dir() == tmp_path / "explicit"
    monkeypatch.delenv("BATON_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "baton"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert data_dir() == tmp_path / "home" / ".local" / "share" / "baton"


def test_from_file_creates_private_file_and_reuses_it(tmp_path: Path) -> None:
    path = tmp_path / "new-dir" / "sub" / "keys"
    r1 = KeyRing.from_file(path)
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) & 0o077 == 0  # the new directory is private too
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    assert Key.decode(lines[0]) == r1.current
    assert str(path) in r1.source
    # no temporary files are left next to it
    assert sorted(p.name for p in path.parent.iterdir()) == ["keys"]
    r2 = KeyRing.from_file(path)
    assert r2.current == r1.current
    assert path.read_text().splitlines() == lines
    # tokens survive a "restart"
    token = Sealer(r1, "aud").seal(state(pending={"q": "d"}), "p", DIGEST)
    assert Sealer(r2, "aud").open(token, "p", DIGEST).journal.pending == {"q": "d"}


def test_from_file_reads_a_rotation_list(tmp_path: Path) -> None:
    new, old = Key.generate("new"), Key.generate("old")
    path = tmp_path / "keys"
    path.write_text(f"{new.encode()}\n{old.encode()}\n")
    r = KeyRing.from_file(path)
    assert [k.kid for k in r.keys] == ["new", "old"]
    assert path.read_text() == f"{new.encode()}\n{old.encode()}\n"  # an existing file is not rewritten


def test_from_file_without_create(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        KeyRing.from_file(tmp_path / "absent", create=False)
    assert not (tmp_path / "absent").exists()


def test_from_file_empty(tmp_path: Path) -> None:
    path = tmp_path / "keys"
    path.write_text("  \n")
    with pytest.raises(KeyRingError, match="empty"):
        KeyRing.from_file(path)


def test_default_uses_the_data_dir_key_file() -> None:
    # conftest points BATON_DATA_DIR at a fresh directory and clears BATON_STATE_KEYS
    r1 = KeyRing.default()
    path = data_dir() / KEY_FILE_NAME
    assert path.exists()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert KeyRing.default().current == r1.current


def _race_worker(path: str, barrier: Any, out: Any) -> None:
    barrier.wait()
    out.put(KeyRing.from_file(Path(path)).current.encode())


@pytest.mark.process
@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="needs fork")
def test_processes_racing_to_create_the_key_file_agree(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("fork")
    workers = 16
    for attempt in range(10):
        path = tmp_path / f"race{attempt}" / "keys"
        barrier = ctx.Barrier(workers)
        out = ctx.Queue()
        procs = [ctx.Process(target=_race_worker, args=(str(path), barrier, out)) for _ in range(workers)]
        for p in procs:
            p.start()
        results = [out.get(timeout=60) for _ in procs]
        for p in procs:
            p.join(timeout=60)
            assert p.exitcode == 0
        assert len(set(results)) == 1, f"attempt {attempt}: workers disagree on the key"
        lines = path.read_text().splitlines()
        assert lines == [results[0]]
        assert sorted(p.name for p in path.parent.iterdir()) == ["keys"]
        assert stat.S_IMODE(path.stat().st_mode) == 0o600


# --------------------------------------------------------------------------------------------------
# Journal
# --------------------------------------------------------------------------------------------------


def test_journal_round_trip() -> None:
    j = Journal(
        answers={"q1": ("dig1", {"action": "accept", "content": {"n": "Zoë"}}), "q2": ("dig2", True)},
        pending={"q3": "dig3"},
        once={"quote": {"price": 12.5, "items": [1, 2, None]}, "n": 0},
    )
    back = Journal.loads(j.dumps())
    assert back == j
    assert isinstance(back.answers["q1"], tuple)


def test_empty_journal_is_small() -> None:
    assert Journal().dumps() == b"{}"
    assert Journal.loads(b"{}") == Journal()


# --------------------------------------------------------------------------------------------------
# Sealer: round trip and format
# --------------------------------------------------------------------------------------------------


def test_round_trip(sealer: Sealer) -> None:
    journal = Journal(
        answers={"confirm": ("abcdefghijk", True), "form": ("zyxwvutsrqp", {"name": "Ann", "tags": ["a"]})},
        pending={"q3": "00000000000"},
        once={"quote": {"total": 12.5}},
    )
    original = FlowState(flow_id=os.urandom(16), round=3, journal=journal)
    before = int(time.time())
    token = sealer.seal(original, "alice", DIGEST)
    back = sealer.open(token, "alice", DIGEST)
    assert back.flow_id == original.flow_id
    assert back.round == 3
    assert back.journal == journal
    assert before + DEFAULT_TTL_S <= back.expires <= int(time.time()) + DEFAULT_TTL_S


def test_fresh_flow_state() -> None:
    a, b = FlowState(), FlowState()
    assert len(a.flow_id) == 16
    assert a.flow_id != b.flow_id
    assert (a.round, a.journal, a.expires) == (0, Journal(), 0)


def test_token_format(sealer: Sealer) -> None:
    st = state(pending={"q1": "abcdefghijk"})
    token = sealer.seal(st, "alice", DIGEST)
    m = TOKEN_RE.match(token)
    assert m is not None, token
    assert m.group(1) == "k1"
    assert "=" not in token
    # nonce (12) + header (16 + 2 + 4) + journal + tag (16)
    assert len(body_bytes(token)) == 12 + 22 + len(st.journal.dumps()) + 16
    # a fresh nonce every time
    assert sealer.seal(st, "alice", DIGEST) != token


def test_binding_is_not_carried_in_the_token() -> None:
    # principal, audience and request digest are associated data: the token length does not depend on them
    r = ring("k1")
    lengths = {
        len(Sealer(r, aud).seal(state(), principal, digest))
        for aud in ("a", "a" * 500)
        for principal in ("p", "p" * 500)
        for digest in (b"d", b"d" * 64)
    }
    assert len(lengths) == 1


def test_one_question_journal_is_small() -> None:
    token = Sealer(KeyRing.ephemeral_key(), "https://api.example/mcp").seal(
        state(pending={"q1": "abcdefghijk"}), "user-123", DIGEST
    )
    assert len(token) < 120, (len(token), token)


def test_round_is_kept(sealer: Sealer) -> None:
    for n in (0, 1, 2, 255, 65535):
        st = FlowState(round=n)
        assert sealer.open(sealer.seal(st, "alice", DIGEST), "alice", DIGEST).round == n


# --------------------------------------------------------------------------------------------------
# Sealer: rejections
# --------------------------------------------------------------------------------------------------


def test_every_byte_flip_is_rejected(sealer: Sealer) -> None:
    token = sealer.seal(state(pending={"q1": "abcdefghijk"}, once={"k": [1, 2]}), "alice", DIGEST)
    sealed = body_bytes(token)
    tried = 0
    for i in range(len(sealed)):
        for bit in range(8):
            forged = bytearray(sealed)
            forged[i] ^= 1 << bit
            refused(sealer, with_body(token, bytes(forged)))
            tried += 1
    assert tried == 8 * len(sealed)
    sealer.open(token, "alice", DIGEST)  # the original still opens


def test_every_character_substitution_that_changes_the_bytes_is_rejected(sealer: Sealer) -> None:
    token = sealer.seal(state(pending={"q1": "abcdefghijk"}), "alice", DIGEST)
    prefix = token.rsplit(".", 1)[0] + "."
    body = token[len(prefix) :]
    original = body_bytes(token)
    for i, ch in enumerate(body):
        for other in ("A", "z", "-", "_", "5"):
            if other == ch:
                continue
            forged = prefix + body[:i] + other + body[i + 1 :]
            if body_bytes(forged) == original:
                continue  # only unused low bits of the last character changed (the next test covers those)
            refused(sealer, forged)


@pytest.mark.parametrize("variant", ["last-char-bits", "std-alphabet", "junk-inserted"])
def test_only_the_canonical_token_string_opens(sealer: Sealer, variant: str) -> None:
    st = state(pending={"q1": "abcdefghijk"})  # 76 sealed bytes: the last character carries 4 unused bits
    token = sealer.seal(st, "alice", DIGEST)
    if variant == "std-alphabet":
        while "-" not in token and "_" not in token:
            token = sealer.seal(st, "alice", DIGEST)
    prefix = token.rsplit(".", 1)[0] + "."
    body = token[len(prefix) :]
    if variant == "last-char-bits":
        value = B64URL.index(body[-1])
        forged = prefix + body[:-1] + B64URL[value ^ 1]
        assert body_bytes(forged) == body_bytes(token)
    elif variant == "std-alphabet":
        forged = prefix + body.replace("-", "+").replace("_", "/")
    else:
        forged = prefix + body[:8] + "!!!!" + body[8:]
    assert forged != token
    refused(sealer, forged)


def test_truncation_is_rejected(sealer: Sealer) -> None:
    token = sealer.seal(state(pending={"q1": "abcdefghijk"}), "alice", DIGEST)
    for n in range(len(token)):
        with pytest.raises(InvalidState):
            sealer.open(token[:n], "alice", DIGEST)
    # dropping bytes of the sealed body, from either end
    sealed = body_bytes(token)
    for n in (1, 2, 15, 16, 17, len(sealed) - 12):
        refused(sealer, with_body(token, sealed[:-n]))
        refused(sealer, with_body(token, sealed[n:]))
    assert "truncated" in refused(sealer, with_body(token, sealed[:20])).reason


@pytest.mark.parametrize("extra", ["A", "AA", "AAA", "AAAA", "AAAAAAAA", "QUJD", "-_-_"])
def test_extension_is_rejected(sealer: Sealer, extra: str) -> None:
    token = sealer.seal(state(pending={"q1": "abcdefghijk"}), "alice", DIGEST)
    refused(sealer, token + extra)


def test_appended_bytes_are_rejected(sealer: Sealer) -> None:
    token = sealer.seal(state(), "alice", DIGEST)
    sealed = body_bytes(token)
    for extra in (b"\0", b"\0" * 16, os.urandom(5)):
        refused(sealer, with_body(token, sealed + extra))


def test_unknown_kid(sealer: Sealer) -> None:
    token = sealer.seal(state(), "alice", DIGEST)
    forged = token.replace("b1.k1.", "b1.k2.", 1)
    exc = refused(sealer, forged)
    assert "k2" in exc.reason
    assert "key ring" in exc.reason
    # a token made under a different key that happens to have the same id fails authentication
    stranger = Sealer(ring("k1"), "https://api.example/mcp").seal(state(), "alice", DIGEST)
    assert "authentication" in refused(sealer, stranger).reason


def test_kid_is_authenticated() -> None:
    # a ring holding the same secret under two ids: moving a token to the other id must fail
    secret = os.urandom(32)
    both = KeyRing([Key("a", secret), Key("b", secret)])
    s = Sealer(both, "aud")
    token = s.seal(state(), "p", DIGEST)
    s.open(token, "p", DIGEST)
    refused(s, token.replace("b1.a.", "b1.b.", 1), "p")


@pytest.mark.parametrize(
    "make",
    [
        lambda t: "b2" + t[2:],
        lambda t: "B1" + t[2:],
        lambda t: "v1" + t[2:],
        lambda t: t[3:],
        lambda t: "b1" + t,
        lambda t: "b1." + t.split(".", 2)[2],
        lambda t: t.replace(".", ":"),
        lambda t: "",
        lambda t: "b1..",
        lambda t: "b1.k1.",
        lambda t: "b1",
    ],
)
def test_wrong_version_prefix_or_shape(sealer: Sealer, make: Any) -> None:
    token = sealer.seal(state(), "alice", DIGEST)
    refused(sealer, make(token))


@pytest.mark.parametrize("token", [None, 5, 1.5, b"b1.k1.AAAA", ["b1.k1.AAAA"], {"t": "x"}, True])
def test_non_string_token(sealer: Sealer, token: Any) -> None:
    assert "not a string" in refused(sealer, token).reason


def test_other_audience() -> None:
    r = ring("k1")
    token = Sealer(r, "https://a.example/mcp").seal(state(), "alice", DIGEST)
    Sealer(r, "https://a.example/mcp").open(token, "alice", DIGEST)
    for aud in ("https://b.example/mcp", "https://a.example/mcp/", "", "HTTPS://A.EXAMPLE/MCP"):
        refused(Sealer(r, aud), token)


def test_bindings_outlive_the_sealers_memory_of_them() -> None:
    """A sealer remembers a bounded number of (key id, principal) bindings; a forgotten one still opens."""
    r = ring("k1")
    sealer, other = Sealer(r, "https://a.example/mcp"), Sealer(r, "https://b.example/mcp")
    first = sealer.seal(state(), "principal-0", DIGEST)
    for i in range(_HEADS_MAX + 10):
        sealer.seal(state(), f"principal-{i}", DIGEST)
    assert sealer._aad_head.cache_info().currsize == _HEADS_MAX
    assert sealer.open(first, "principal-0", DIGEST).round == 0
    refused(other, first, principal="principal-0")  # remembered per sealer: each its own audience


@pytest.mark.parametrize("principal", ["bob", "Alice", "alice ", "", "alice\0"])
def test_other_principal(sealer: Sealer, principal: str) -> None:
    token = sealer.seal(state(), "alice", DIGEST)
    refused(sealer, token, principal=principal)


@pytest.mark.parametrize("digest", [OTHER_DIGEST, DIGEST[:-1], DIGEST + b"\0", b"", bytes(16)])
def test_other_request_digest(sealer: Sealer, digest: bytes) -> None:
    token = sealer.seal(state(), "alice", DIGEST)
    refused(sealer, token, digest=digest)


def test_expired_negative_ttl() -> None:
    r = ring("k1")
    token = Sealer(r, "aud", ttl_s=-1).seal(state(), "alice", DIGEST)
    assert "expired" in refused(Sealer(r, "aud", ttl_s=-1), token).reason
    # the expiry travels inside the token: a sealer with a long ttl refuses it too
    assert "expired" in refused(Sealer(r, "aud", ttl_s=3600), token).reason


def test_expiry_with_real_time() -> None:
    r = ring("k1")
    token = Sealer(r, "aud", ttl_s=1).seal(state(), "alice", DIGEST)
    opener = Sealer(r, "aud", ttl_s=-1)  # the opener's own ttl does not matter
    assert opener.open(token, "alice", DIGEST).expires >= int(time.time())
    time.sleep(2.05)
    assert "expired" in refused(opener, token).reason


def test_size_cap_when_sealing() -> None:
    r = ring("k1")
    big = state(once={"blob": "x" * 5000})
    length = len(Sealer(r, "aud").seal(big, "alice", DIGEST))
    Sealer(r, "aud", max_bytes=length).seal(big, "alice", DIGEST)  # exactly at the cap is fine
    with pytest.raises(StateTooLarge, match=f"cap of {length - 1}"):
        Sealer(r, "aud", max_bytes=length - 1).seal(big, "alice", DIGEST)
    with pytest.raises(StateTooLarge):
        Sealer(r, "aud").seal(state(once={"blob": "x" * DEFAULT_MAX_BYTES}), "alice", DIGEST)


def test_size_cap_when_opening() -> None:
    r = ring("k1")
    token = Sealer(r, "aud").seal(state(once={"blob": "x" * 500}), "alice", DIGEST)
    Sealer(r, "aud", max_bytes=len(token)).open(token, "alice", DIGEST)
    exc = refused(Sealer(r, "aud", max_bytes=len(token) - 1), token)
    assert "cap" in exc.reason
    huge = "b1.k1." + "A" * (DEFAULT_MAX_BYTES + 10)
    assert "cap" in refused(Sealer(r, "aud"), huge).reason


def test_key_rotation() -> None:
    old, new = Key.generate("old"), Key.generate("new")
    token = Sealer(KeyRing([old]), "aud").seal(state(pending={"q": "d"}), "alice", DIGEST)
    rotated = Sealer(KeyRing([new, old]), "aud")
    assert rotated.open(token, "alice", DIGEST).journal.pending == {"q": "d"}
    # new tokens use the new key
    fresh = rotated.seal(state(), "alice", DIGEST)
    assert fresh.startswith("b1.new.")
    assert Sealer(KeyRing([new]), "aud").open(fresh, "alice", DIGEST).round == 0
    # once the old key is retired its tokens are refused
    exc = refused(Sealer(KeyRing([new]), "aud"), token)
    assert "old" in exc.reason
    # a ring that reuses the old id with another secret refuses too
    refused(Sealer(KeyRing([new, Key.generate("old")]), "aud"), token)


def test_reasons_never_contain_the_token(sealer: Sealer) -> None:
    token = sealer.seal(state(pending={"q1": "abcdefghijk"}), "alice", DIGEST)
    sealed = body_bytes(token)
    cases = [
        token + "A",
        token[:-5],
        token.replace("b1.", "b2.", 1),
        token.replace(".k1.", ".zz.", 1),
        with_body(token, bytes([sealed[0] ^ 1]) + sealed[1:]),
        with_body(token, sealed[:20]),
        "b1.k1.a",
    ]
    for bad in cases:
        refused(sealer, bad)
    for other_principal in ("bob", "alice"):
        refused(Sealer(sealer.ring, "other-aud"), token, principal=other_principal)
    refused(Sealer(sealer.ring, "https://api.example/mcp", max_bytes=20), token)


def test_reason_does_not_echo_long_token_parts(sealer: Sealer) -> None:
    token = sealer.seal(state(pending={"q1": "abcdefghijk"}), "alice", DIGEST)
    body = token.split(".", 2)[2]
    moved = f"b1.{body}.x"
    exc = refused(sealer, moved)
    assert body not in exc.reason
    assert len(exc.reason) < 120
