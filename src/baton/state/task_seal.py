"""Task records sealed at rest (protocol.md P207): a store dump shows no answer, result or argument.

A record is sealed with AES-GCM under the server's key ring (the sealing key of `requestState`), with the
task id and the principal's tag as associated data, so a record opens only as the record of that task and
principal: moved to another id, or under another tag, it does not open. The stored form is a one-byte
key-id length, the key id, the 12-byte nonce, then the ciphertext; a record sealed under a key since
dropped from the ring does not open (the task is then gone, as an expired one).
"""

from __future__ import annotations

from collections.abc import Callable

from cryptography.exceptions import InvalidTag

from .entropy import random_bytes
from .keys import KeyRing

_AAD = b"baton task record\0"
_NONCE = 12


class TaskSeal:
    """Seals and opens task records under one server's key ring (read when first needed)."""

    def __init__(self, ring: Callable[[], KeyRing]) -> None:
        self._ring = ring

    def seal(self, task_id: str, tag: bytes, record: bytes) -> bytes:
        kid, cipher = self._ring().sealing()
        nonce = random_bytes(_NONCE)
        head = bytes([len(kid)]) + kid.encode()
        return head + nonce + cipher.encrypt(nonce, record, _AAD + tag + task_id.encode())

    def open(self, task_id: str, tag: bytes, sealed: bytes) -> bytes | None:
        """The record, or None when it does not open (another task's or principal's, or its key is gone)."""
        if not sealed:
            return None
        end = 1 + sealed[0]
        cipher = self._ring().cipher(sealed[1:end].decode("ascii", "replace"))
        if cipher is None:
            return None
        try:
            return cipher.decrypt(sealed[end : end + _NONCE], sealed[end + _NONCE :], _AAD + tag + task_id.encode())
        except (InvalidTag, ValueError):
            return None
