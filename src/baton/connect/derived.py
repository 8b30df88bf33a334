"""Keys for the connect kit, derived (HKDF-SHA256) from the server's key ring, one label per use."""

from __future__ import annotations

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from ..state.keys import KeyRing


def derive(secret: bytes, label: str) -> bytes:
    """A 32-byte key for `label` ("baton connect session", "baton connect vault", ...) from one ring key."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=label.encode()).derive(secret)


def derived_ring(ring: KeyRing, label: str) -> list[tuple[str, bytes]]:
    """(key id, derived key) for every key of the ring, the sealing key first."""
    return [(key.kid, derive(key.secret, label)) for key in ring.keys]
