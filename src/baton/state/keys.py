"""The key ring that seals `requestState`: keys with ids, from configuration, the environment or a key file.

The first key seals; every key opens. `BATON_STATE_KEYS` holds `kid:base64key` entries separated by
commas; else the key file `$BATON_KEY_FILE`; the embedded default is a key file created once in the
data directory (`BATON_DATA_DIR`, or `$XDG_DATA_HOME/baton`, or `~/.local/share/baton`), so restarts
and several workers on one host agree. A ring read from a file follows it: it re-reads the file when
the file changes (looked at about once a second) and at once when a token names a key id it lacks, so
`baton keys rotate` reaches running instances without a restart, and a token sealed under the new key by
one instance opens on every other at once.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import logging
import os
import re
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_BYTES = 32
KID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,16}\Z")
_B64KEY = re.compile(r"[A-Za-z0-9_+/-]*={0,2}\Z")
ENV_KEYS = "BATON_STATE_KEYS"
ENV_KEY_FILE = "BATON_KEY_FILE"
ENV_DATA_DIR = "BATON_DATA_DIR"
KEY_FILE_NAME = "state-keys"
RECHECK_S = 1.0  # how often a file-backed ring looks for a changed file

log = logging.getLogger("baton.keys")


class KeyRingError(ValueError):
    """A key ring that cannot be used: a malformed key, a bad id, no key at all."""


@dataclass(frozen=True)
class Key:
    """One AES-256-GCM key and the id that tokens sealed with it carry."""

    kid: str
    secret: bytes = field(repr=False)

    def __post_init__(self) -> None:
        if not KID_PATTERN.match(self.kid):
            raise KeyRingError(f"key id {self.kid!r} must be 1-16 characters of A-Z a-z 0-9 _ -")
        if len(self.secret) != KEY_BYTES:
            raise KeyRingError(f"key {self.kid!r} must be {KEY_BYTES} bytes, not {len(self.secret)}")

    @classmethod
    def generate(cls, kid: str | None = None) -> Key:
        return cls(kid or secrets.token_hex(3), os.urandom(KEY_BYTES))

    def encode(self) -> str:
        """The `kid:base64key` text form used by the environment and the key file."""
        return f"{self.kid}:{base64.urlsafe_b64encode(self.secret).decode()}"

    @classmethod
    def decode(cls, text: str) -> Key:
        kid, sep, b64 = text.strip().partition(":")
        if not sep:
            raise KeyRingError("a key is written kid:base64key")
        if not _B64KEY.match(b64):
            raise KeyRingError(f"key {kid!r} is not valid base64")
        try:
            secret = base64.urlsafe_b64decode(b64 + "=" * (-len(b64) % 4))
        except (binascii.Error, ValueError):
            raise KeyRingError(f"key {kid!r} is not valid base64") from None
        return cls(kid, secret)


class KeyRing:
    """Keys by id; the first one seals new tokens, all of them open old ones (for rotation)."""

    def __init__(
        self, keys: list[Key], *, ephemeral: bool = False, source: str = "configuration", path: Path | None = None
    ) -> None:
        self.ephemeral = ephemeral
        self.source = source
        self.path = path  # the key file this ring follows, if any
        self.version = -1  # moves on every change of keys: users of derived keys rebuild them then
        self._set(keys)
        self._stamp = _stamp(path) if path else None
        self._looked = time.monotonic()

    def _set(self, keys: list[Key]) -> None:
        if not keys:
            raise KeyRingError("a key ring needs at least one key")
        kids = [k.kid for k in keys]
        if len(set(kids)) != len(kids):
            raise KeyRingError("key ids in a ring must be unique")
        # The cipher loads with the first ring, not with this module: `baton`'s parser reads its names.
        from cryptography.hazmat.primitives.ciphers.aead import AESGCM  # noqa: PLC0415

        self._keys = list(keys)
        self._ciphers = {k.kid: AESGCM(k.secret) for k in keys}
        self._sealing = (keys[0].kid, self._ciphers[keys[0].kid])
        self.version += 1

    @property
    def keys(self) -> list[Key]:
        self._follow()
        return self._keys

    @property
    def current(self) -> Key:
        """The key that seals new tokens: the first of the ring."""
        self._follow()
        return self._keys[0]

    def sealing(self) -> tuple[str, AESGCM]:
        """The sealing key's id and cipher, in one call (the hot path of every `input_required`)."""
        if self.path is not None and time.monotonic() - self._looked >= RECHECK_S:  # `_follow`, written out
            self._reload()
        return self._sealing

    def cipher(self, kid: str) -> AESGCM | None:
        cipher = self._ciphers.get(kid)
        if cipher is None and self.path is not None:
            # A key id we lack may have been added to the file by a rotation that another instance has
            # already seen: look now (a stat; the file is read again only if it changed, so a flood of
            # bogus key ids costs a stat each, never a read).
            self._reload()
            cipher = self._ciphers.get(kid)
        return cipher

    def _follow(self) -> None:
        if self.path is not None and time.monotonic() - self._looked >= RECHECK_S:
            self._reload()

    def _reload(self) -> None:
        assert self.path is not None
        self._looked = time.monotonic()
        stamp = _stamp(self.path)
        if stamp == self._stamp:
            return
        try:
            keys = _read_keys(self.path)
            self._set(keys)
        except (OSError, KeyRingError) as exc:
            # Keep serving with the keys we have: a broken file must not stop every flow.
            log.error("key file %s could not be re-read, keeping the current keys: %s", self.path, exc)
            return
        self._stamp = stamp
        log.info("key file %s re-read: sealing with %r, %d key(s)", self.path, keys[0].kid, len(keys))

    @classmethod
    def ephemeral_key(cls) -> KeyRing:
        """A ring with one fresh key that lives only in this process (tests, one-off scripts)."""
        return cls([Key.generate()], ephemeral=True, source="a key generated for this process")

    @classmethod
    def from_text(cls, text: str, source: str) -> KeyRing:
        return cls(_parse(text, source), source=source)

    @classmethod
    def from_environment(cls) -> KeyRing | None:
        text = os.environ.get(ENV_KEYS)
        return cls.from_text(text, f"${ENV_KEYS}") if text else None

    @classmethod
    def from_file(cls, path: Path, *, create: bool = True) -> KeyRing:
        """Read the key file, creating it (mode 0600, atomically) with one new key if it is absent."""
        if create and not path.exists():
            # Linked into place: the link fails if another worker won the race, and its key is the one
            # everybody reads.
            with contextlib.suppress(FileExistsError):
                _place_private_file(path, [Key.generate()], os.link)
        return cls(_read_keys(path), source=f"key file {path}", path=path)

    @classmethod
    def default(cls) -> KeyRing:
        """`BATON_STATE_KEYS` if set, else `$BATON_KEY_FILE`, else the data directory's key file (made on first use)."""
        return cls.from_environment() or cls.from_file(default_key_file())


def shared_by_instances(ring: KeyRing | None) -> bool:
    """Whether instances started alike on many machines seal with the same keys: a ring given in
    configuration (not generated for this process, not the data directory's key file), or, with none
    given, `$BATON_STATE_KEYS` or `$BATON_KEY_FILE`; not the key file each machine makes for itself."""
    if ring is None:
        return bool(os.environ.get(ENV_KEYS) or os.environ.get(ENV_KEY_FILE))
    made_here = ring.path == data_dir() / KEY_FILE_NAME and not os.environ.get(ENV_KEY_FILE)
    return not ring.ephemeral and not made_here


def default_key_file() -> Path:
    """`$BATON_KEY_FILE`, else `state-keys` in the data directory."""
    explicit = os.environ.get(ENV_KEY_FILE)
    return Path(explicit) if explicit else data_dir() / KEY_FILE_NAME


def _parse(text: str, source: str) -> list[Key]:
    entries = [e for e in re.split(r"[,\s]+", text.strip()) if e]
    try:
        return [Key.decode(e) for e in entries]
    except KeyRingError as exc:
        raise KeyRingError(f"{source}: {exc}") from None


def _read_keys(path: Path) -> list[Key]:
    text = path.read_text()
    if not text.strip():
        raise KeyRingError(f"key file {path} is empty")
    return _parse(text, f"key file {path}")


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """What tells a changed key file: inode (an atomic rename), modification time and size."""
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return (st.st_ino, st.st_mtime_ns, st.st_size)


def write_key_file(path: Path, keys: list[Key]) -> None:
    """Replace the key file atomically (mode 0600): a private temporary file renamed into place."""
    KeyRing(keys)  # validates: at least one key, unique ids
    _place_private_file(path, keys, os.replace)


def _place_private_file(path: Path, keys: list[Key], place: Callable[[Path, Path], None]) -> None:
    """Write `keys` to a private (0600) temporary file beside `path`, then `place` it there (atomically)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write("".join(k.encode() + "\n" for k in keys))
        place(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def data_dir() -> Path:
    """Where Baton keeps its embedded defaults (key file, later the SQLite ledger)."""
    explicit = os.environ.get(ENV_DATA_DIR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "baton"
