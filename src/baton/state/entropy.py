"""Random bytes for nonces and flow ids, drawn from the OS in blocks: one `getrandom` call per 4 KiB.

Two fresh values per MRTR round (a flow id, an AES-GCM nonce) cost a system call each with
`os.urandom`; a block of OS randomness handed out in slices is the same randomness for a fraction of
the CPU. A forked child starts with an empty block, so parent and child never hand out the same bytes.
"""

from __future__ import annotations

import os

BLOCK = 4096


class _Pool:
    __slots__ = ("at", "block")

    def __init__(self) -> None:
        self.block = b""
        self.at = 0

    def take(self, n: int) -> bytes:
        at = self.at
        end = at + n
        if end > len(self.block):
            self.block, at, end = os.urandom(max(BLOCK, n)), 0, n
        self.at = end
        return self.block[at:end]

    def forget(self) -> None:
        self.block, self.at = b"", 0


_POOL = _Pool()
os.register_at_fork(after_in_child=_POOL.forget)

random_bytes = _POOL.take
"""`random_bytes(n)`: `n` bytes from the OS's CSPRNG (as `os.urandom(n)`), never handed out twice."""
