"""Keys for the connect kit, derived (HKDF-SHA256) from the server's key ring, one label per use.

`DerivedKeys` follows the ring: when a rotation changes the ring, the derived keys are rebuilt, so
sessions and vault records sealed under a new key on one instance open on every other.
"""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..state.keys import KeyRing


def derive(secret: bytes, label: str) -> bytes:
    """A 32-byte key for `label` ("baton connect session", "baton connect vault", ...) from one ring key."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label.encode()).derive(secret)


class DerivedKeys:
    """(key id, derived key) for every key of the ring; the ring's sealing key gives the current one."""

    def __init__(self, ring: KeyRing, label: str) -> None:
        self.ring = ring
        self.label = label
        self._version = -1
        self._keys: dict[str, bytes] = {}
        self._current = ""

    def _fresh(self) -> dict[str, bytes]:
        keys = self.ring.keys  # a file-backed ring looks at its file here
        if self._version != self.ring.version:
            self._keys = {key.kid: derive(key.secret, self.label) for key in keys}
            self._current = keys[0].kid
            self._version = self.ring.version
        return self._keys

    @property
    def current(self) -> tuple[str, bytes]:
        """The id and derived key that seal (sign) new records."""
        keys = self._fresh()
        return self._current, keys[self._current]

    def get(self, kid: str) -> bytes | None:
        """The derived key for `kid`, or None; an unknown id makes the ring look at its file first."""
        key = self._fresh().get(kid)
        if key is None and self.ring.cipher(kid) is not None:
            key = self._fresh().get(kid)
        return key

    def all(self) -> list[bytes]:
        """Every derived key, the current one first."""
        keys = self._fresh()
        return [keys[self._current], *(key for kid, key in keys.items() if kid != self._current)]
