"""Credentials per principal, encrypted at rest with AES-256-GCM under keys derived from the key ring.

A record is `kid | nonce | ciphertext+tag`; the principal and the credential's name are bound as
associated data, so a record moved to another row does not open. Handlers get a `CredentialHandle`
and call `await handle.reveal()` on the server; the secret itself is never logged, never sent.
Stores: `MemoryVaultStore` (tests) and `SqliteVaultStore` (one host); both hold only ciphertext.
"""

from __future__ import annotations

import abc
import os
import sqlite3
from dataclasses import dataclass, field

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

from ..state.keys import KeyRing
from ..state.sqlite_file import SqliteFile
from .derived import DerivedKeys

LABEL = "baton connect vault"
MAX_SECRET_BYTES = 8 * 1024


class VaultError(Exception):
    """A credential that is missing or cannot be opened (the message never holds the secret)."""


class VaultStore(abc.ABC):
    """Encrypted records by (principal, name)."""

    @abc.abstractmethod
    async def read(self, principal: str, name: str) -> bytes | None: ...

    @abc.abstractmethod
    async def write(self, principal: str, name: str, record: bytes) -> None: ...

    @abc.abstractmethod
    async def delete(self, principal: str, name: str) -> None: ...

    async def close(self) -> None:
        return None


class MemoryVaultStore(VaultStore):
    def __init__(self) -> None:
        self.records: dict[tuple[str, str], bytes] = {}

    async def read(self, principal: str, name: str) -> bytes | None:
        return self.records.get((principal, name))

    async def write(self, principal: str, name: str, record: bytes) -> None:
        self.records[principal, name] = record

    async def delete(self, principal: str, name: str) -> None:
        self.records.pop((principal, name), None)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS baton_vault (
    principal TEXT NOT NULL,
    name TEXT NOT NULL,
    record BLOB NOT NULL,
    PRIMARY KEY (principal, name)
) WITHOUT ROWID;
"""


class SqliteVaultStore(VaultStore):
    """Records in a SQLite file shared by the worker processes of one host; its errors raise `StoreUnavailable`."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self._file = SqliteFile(path, _SCHEMA, what="vault store")

    async def read(self, principal: str, name: str) -> bytes | None:
        def op(db: sqlite3.Connection) -> bytes | None:
            row = db.execute(
                "SELECT record FROM baton_vault WHERE principal = ? AND name = ?", (principal, name)
            ).fetchone()
            return None if row is None else bytes(row[0])

        return await self._file.run(op)

    async def write(self, principal: str, name: str, record: bytes) -> None:
        await self._file.run(
            lambda db: db.execute("INSERT OR REPLACE INTO baton_vault VALUES (?, ?, ?)", (principal, name, record))
        )

    async def delete(self, principal: str, name: str) -> None:
        await self._file.run(
            lambda db: db.execute("DELETE FROM baton_vault WHERE principal = ? AND name = ?", (principal, name))
        )

    async def close(self) -> None:
        await self._file.close()


def _aad(principal: str, name: str) -> bytes:
    p, n = principal.encode(), name.encode()
    return len(p).to_bytes(4, "big") + p + len(n).to_bytes(4, "big") + n


class Vault:
    """Encrypts on write, decrypts on reveal; the sealing key is the ring's first, any ring key opens."""

    def __init__(self, ring: KeyRing, store: VaultStore) -> None:
        self.store = store
        self._keys = DerivedKeys(ring, LABEL)

    async def put(self, principal: str, name: str, secret: str) -> None:
        raw = secret.encode()
        if not raw or len(raw) > MAX_SECRET_BYTES:
            raise VaultError(f"a credential must be 1 to {MAX_SECRET_BYTES} bytes")
        kid, key = self._keys.current
        nonce = os.urandom(12)
        sealed = AESGCM(key).encrypt(nonce, raw, _aad(principal, name))
        await self.store.write(principal, name, bytes([len(kid)]) + kid.encode() + nonce + sealed)

    async def has(self, principal: str, name: str) -> bool:
        return await self.store.read(principal, name) is not None

    async def reveal(self, principal: str, name: str) -> str:
        record = await self.store.read(principal, name)
        if record is None:
            raise VaultError(f"no credential {name!r} is stored for this principal")
        kid = record[1 : 1 + record[0]].decode()
        body = record[1 + record[0] :]
        key = self._keys.get(kid)
        if key is None:
            raise VaultError(f"credential {name!r} was sealed with key {kid!r}, which is not in the key ring")
        try:
            return AESGCM(key).decrypt(body[:12], body[12:], _aad(principal, name)).decode()
        except InvalidTag:
            raise VaultError(f"credential {name!r} failed authentication") from None

    def handle(self, principal: str, name: str) -> CredentialHandle:
        return CredentialHandle(name, principal, self)

    async def close(self) -> None:
        await self.store.close()


@dataclass(frozen=True)
class CredentialHandle:
    """A stored credential, by name, for one principal; `await handle.reveal()` reads it on the server."""

    name: str
    principal: str
    _vault: Vault = field(repr=False, compare=False)

    async def reveal(self) -> str:
        """The secret, for server-side use only: never return it from a tool, never log it."""
        return await self._vault.reveal(self.principal, self.name)

    async def forget(self) -> None:
        """Delete the credential (for example when the third party rejects it), so it is asked again."""
        await self._vault.store.delete(self.principal, self.name)
