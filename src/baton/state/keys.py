"""The key ring that seals `requestState`: keys with ids, from configuration, the environment or a key file.

The first key seals; every key opens. `BATON_STATE_KEYS` holds `kid:base64key` entries separated by
commas; the embedded default is a key file created once in the data directory (`BATON_DATA_DIR`, or
`$XDG_DATA_HOME/baton`, or `~/.local/share/baton`), so restarts and several workers on one host agree.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path

from cryptography.hazmat.primitives.ciphers.aead import AESGCM

KEY_BYTES = 32
KID_PATTERN = re.compile(r"[A-Za-z0-9_-]{1,16}\Z")
_B64KEY = re.compile(r"[A-Za-z0-9_+/-]*={0,2}\Z")
ENV_KEYS = "BATON_STATE_KEYS"
ENV_DATA_DIR = "BATON_DATA_DIR"
KEY_FILE_NAME = "state-keys"


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

    def __init__(self, keys: list[Key], *, ephemeral: bool = False, source: str = "configuration") -> None:
        if not keys:
            raise KeyRingError("a key ring needs at least one key")
        kids = [k.kid for k in keys]
        if len(set(kids)) != len(kids):
            raise KeyRingError("key ids in a ring must be unique")
        self.keys = list(keys)
        self.ephemeral = ephemeral
        self.source = source
        self.current = keys[0]
        self._ciphers = {k.kid: AESGCM(k.secret) for k in keys}

    def cipher(self, kid: str) -> AESGCM | None:
        return self._ciphers.get(kid)

    @classmethod
    def ephemeral_key(cls) -> KeyRing:
        """A ring with one fresh key that lives only in this process (tests, one-off scripts)."""
        return cls([Key.generate()], ephemeral=True, source="a key generated for this process")

    @classmethod
    def from_text(cls, text: str, source: str) -> KeyRing:
        entries = [e for e in re.split(r"[,\s]+", text.strip()) if e]
        try:
            return cls([Key.decode(e) for e in entries], source=source)
        except KeyRingError as exc:
            raise KeyRingError(f"{source}: {exc}") from None

    @classmethod
    def from_environment(cls) -> KeyRing | None:
        text = os.environ.get(ENV_KEYS)
        return cls.from_text(text, f"${ENV_KEYS}") if text else None

    @classmethod
    def from_file(cls, path: Path, *, create: bool = True) -> KeyRing:
        """Read the key file, creating it (mode 0600, atomically) with one new key if it is absent."""
        if create and not path.exists():
            path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            # Write a private temporary file, then link it into place: the link is atomic and fails
            # if another worker won the race, in which case its key is the one everybody reads.
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "w") as fh:
                fh.write(Key.generate().encode() + "\n")
            try:
                os.link(tmp, path)
            except FileExistsError:
                pass
            finally:
                tmp.unlink()
        text = path.read_text()
        if not text.strip():
            raise KeyRingError(f"key file {path} is empty")
        return cls.from_text(text, f"key file {path}")

    @classmethod
    def default(cls) -> KeyRing:
        """`BATON_STATE_KEYS` if set, else the key file in the data directory (created on first use)."""
        return cls.from_environment() or cls.from_file(data_dir() / KEY_FILE_NAME)


def data_dir() -> Path:
    """Where Baton keeps its embedded defaults (key file, later the SQLite ledger)."""
    explicit = os.environ.get(ENV_DATA_DIR)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(base) / "baton"
