"""Where the client keeps what a login produced: tokens per server, client registrations per authorization server.

A store maps string keys to JSON objects. What the login puts there: `token <server URL>` (the
access token, the refresh token, their expiry and scopes, the issuer and the client they were issued
to), `client <issuer>` (a dynamic registration: the client id and the secret that authorization
server issued) and `pre-registered <client_id>` (the issuer a public pre-registered client was
first used with). A client secret the host gave (`OAuth(client_secret=...)`) is never stored.

`MemoryStore` forgets everything with the process. `FileStore` keeps one JSON file readable and
writable only by the user (mode 0600), rewritten whole through a fresh temporary file in the same
directory (`mkstemp`: exclusive, 0600) and `os.replace`, so a reader never sees half a file. Every
read-modify-write holds a lock: one per resolved path shared by every `FileStore` of the process, and
`flock` on `<file>.lock` between processes. Its default place is `<data dir>/client/oauth.json`
(`BATON_DATA_DIR`, else `$XDG_DATA_HOME/baton`, else `~/.local/share/baton`). A directory it creates
is mode 0700; an existing one that other users may write to, or a file that others may read or that
another user owns, is refused rather than used. Any failure is an `AuthError` naming the file.
Nothing here logs a value (protocol.md P58).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

from ...state.keys import data_dir
from ..errors import AuthError


class TokenStore(Protocol):
    """What the client needs of a store; any object with these three coroutines will do."""

    async def get(self, key: str) -> dict[str, Any] | None: ...

    async def set(self, key: str, value: dict[str, Any]) -> None: ...

    async def delete(self, key: str) -> None: ...


class MemoryStore:
    """A store that lives as long as the object (the default of `OAuth`)."""

    def __init__(self) -> None:
        self._items: dict[str, dict[str, Any]] = {}

    async def get(self, key: str) -> dict[str, Any] | None:
        value = self._items.get(key)
        return json.loads(json.dumps(value)) if value is not None else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        self._items[key] = json.loads(json.dumps(value))

    async def delete(self, key: str) -> None:
        self._items.pop(key, None)

    def __repr__(self) -> str:
        return f"MemoryStore({len(self._items)} entries)"


def default_path() -> Path:
    """The default file of `FileStore`: `<data dir>/client/oauth.json`."""
    return data_dir() / "client" / "oauth.json"


_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


def _process_lock(path: Path) -> threading.Lock:
    """The lock of one resolved path, shared by every `FileStore` of this process."""
    key = os.path.realpath(path)
    with _LOCKS_GUARD:
        return _LOCKS.setdefault(key, threading.Lock())


class FileStore:
    """A JSON file only the user can read (0600); `FileStore()` uses `default_path()`."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()

    def __repr__(self) -> str:
        return f"FileStore({str(self.path)!r})"

    def _failed(self, what: str, exc: OSError) -> AuthError:
        return AuthError(f"cannot {what} the token store {self.path}: {exc.strerror or exc}")

    def _folder(self) -> Path:
        """The file's directory, made 0700 if missing; refused if other users may write to it."""
        folder = self.path.parent
        try:
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
            info = os.stat(folder)
        except OSError as exc:
            raise self._failed("make the directory of", exc) from None
        if info.st_uid != os.getuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise AuthError(
                f"the directory {folder} of the token store may be written by other users "
                f"(mode {stat.filemode(info.st_mode)}): refusing to use it; make it mode 0700"
            )
        return folder

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """This file's process lock, then an exclusive `flock` on `<file>.lock` (other processes)."""
        with _process_lock(self.path):
            folder = self._folder()
            try:
                fd = os.open(
                    folder / f"{self.path.name}.lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600
                )
            except OSError as exc:
                raise self._failed("lock", exc) from None
            try:
                fcntl.flock(fd, fcntl.LOCK_EX)
                yield
            finally:
                os.close(fd)  # releases the flock

    def _read(self) -> dict[str, Any]:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise self._failed("read", exc) from None
        try:
            with os.fdopen(fd, "rb") as fh:
                info = os.fstat(fh.fileno())
                if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or info.st_uid != os.getuid():
                    raise AuthError(
                        f"the token store {self.path} may be read by other users (mode {stat.filemode(info.st_mode)}): "
                        "refusing to use it; make it mode 0600 or remove it"
                    )
                raw = fh.read()
        except OSError as exc:
            raise self._failed("read", exc) from None
        try:
            data = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise AuthError(f"the token store {self.path} is not JSON; remove it to log in again") from None
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        try:
            fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        except OSError as exc:
            raise self._failed("write", exc) from None
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        except OSError as exc:
            raise self._failed("write", exc) from None
        finally:
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _get(self, key: str) -> Any:
        if not self.path.parent.exists():
            return None  # nothing stored yet: nothing made either
        with self._locked():
            return self._read().get(key)

    def _update(self, change: Callable[[dict[str, Any]], bool]) -> None:
        with self._locked():
            data = self._read()
            if change(data):
                self._write(data)

    async def get(self, key: str) -> dict[str, Any] | None:
        value = await asyncio.to_thread(self._get, key)
        return value if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        def change(data: dict[str, Any]) -> bool:
            data[key] = value
            return True

        await asyncio.to_thread(self._update, change)

    async def delete(self, key: str) -> None:
        await asyncio.to_thread(self._update, lambda data: data.pop(key, None) is not None)
