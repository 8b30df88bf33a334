"""Where the client keeps what a login produced: tokens per server, client registrations per authorization server.

A store maps string keys to JSON objects. `MemoryStore` forgets everything with the process;
`FileStore` keeps one JSON file readable and writable only by the user (mode 0600, in a directory of
mode 0700), rewritten whole through a temporary file and `os.replace`, so a reader never sees half a
file. Its default place is `<data dir>/client/oauth.json` (`BATON_DATA_DIR`, else
`$XDG_DATA_HOME/baton`, else `~/.local/share/baton`). A file that others can read is refused rather
than used. Two processes writing at once: the last write wins (a login may have to be done again).
Nothing here logs a value (protocol.md PAC11).
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
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


class FileStore:
    """A JSON file only the user can read (0600); `FileStore()` uses `default_path()`."""

    def __init__(self, path: str | os.PathLike[str] | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"FileStore({str(self.path)!r})"

    def _read(self) -> dict[str, Any]:
        try:
            fd = os.open(self.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except FileNotFoundError:
            return {}
        except OSError as exc:
            raise AuthError(f"cannot read the token store {self.path}: {exc.strerror}") from None
        with os.fdopen(fd, "rb") as fh:
            info = os.fstat(fh.fileno())
            if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO) or info.st_uid != os.getuid():
                raise AuthError(
                    f"the token store {self.path} may be read by other users (mode {stat.filemode(info.st_mode)}): "
                    "refusing to use it; make it mode 0600 or remove it"
                )
            raw = fh.read()
        try:
            data = json.loads(raw) if raw.strip() else {}
        except ValueError:
            raise AuthError(f"the token store {self.path} is not JSON; remove it to log in again") from None
        return data if isinstance(data, dict) else {}

    def _write(self, data: dict[str, Any]) -> None:
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        tmp = folder / f".{self.path.name}.{os.getpid()}.tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(data, fh)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, self.path)
        finally:
            tmp.unlink(missing_ok=True)

    async def get(self, key: str) -> dict[str, Any] | None:
        async with self._lock:
            value = (await asyncio.to_thread(self._read)).get(key)
        return value if isinstance(value, dict) else None

    async def set(self, key: str, value: dict[str, Any]) -> None:
        async with self._lock:
            data = await asyncio.to_thread(self._read)
            data[key] = value
            await asyncio.to_thread(self._write, data)

    async def delete(self, key: str) -> None:
        async with self._lock:
            data = await asyncio.to_thread(self._read)
            if data.pop(key, None) is not None:
                await asyncio.to_thread(self._write, data)
