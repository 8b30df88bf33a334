"""Replacing a host's config file safely: where a symbolic link leads, one writer at a time, a backup and
the new file that never go through a link, and modes that keep a secret private.

- `destination`: the file to write. A config that is a symbolic link is written through to the file it
  points to, deliberately (a dotfiles folder keeps its link), when that is an existing regular file; a
  link to nothing, or to something that is not a regular file, is refused, as is, with `--workspace`, a
  path that leads out of the workspace (an untrusted checkout can plant links): protocol.md P117.
- `locked`: read-merge-write under an exclusive `fcntl.flock` on the sidecar `FILE.lock` (kept, never
  removed, since removing it would let a third writer lock a new file while a second holds the old one),
  so two installs at once keep both entries. POSIX only: on Windows there is no lock (P119).
- `replace`: the old content goes to `FILE.bak` and the new one to `FILE`, each written into a new file
  created exclusively in the same folder (`mkstemp`: `O_CREAT | O_EXCL`, mode 0600) and renamed into
  place, so a link planted at `FILE.bak` or at a temporary name is replaced, never followed. The backup is
  always 0600 (it may hold another entry's secret); the new file is 0600 when `private` (a `--env` value
  is in it), else keeps the old file's mode (P119).

Every file-system error is an `InstallError` of one line naming the path, exit status 1.
"""

from __future__ import annotations

import os
import stat
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from .host_apps import InstallError

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)


def failed(verb: str, path: Path, exc: OSError) -> InstallError:
    """The one line for a file-system error: what was done, to which path, and why."""
    return InstallError(f"cannot {verb} {path}: {exc.strerror or exc}", status=1)


def destination(path: Path, workspace: Path | None) -> Path:
    """The file to write for the config `path` (`path` itself, or the file its link points to), P117."""
    try:
        linked = path.is_symlink()
        real = Path(os.path.realpath(path))
        if workspace is not None and not real.is_relative_to(os.path.realpath(workspace)):
            raise InstallError(
                f"{path} leads out of the workspace (to {real}) through a symbolic link; it was not changed. "
                "Remove the link, or install without --workspace",
                status=1,
            )
        if not linked:
            return path
        if not real.exists():
            raise InstallError(
                f"{path} is a symbolic link to {real}, which does not exist; baton install writes through a "
                "link only to an existing file. Remove the link, or create its target",
                status=1,
            )
        if not real.is_file():
            raise InstallError(f"{path} is a symbolic link to {real}, which is not a regular file", status=1)
    except OSError as exc:
        raise failed("read", path, exc) from None
    return real


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of `path` (creating its folder), for one read-merge-write."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise failed("create the folder", path.parent, exc) from None
    if sys.platform == "win32":  # no flock; P119
        yield
        return
    import fcntl  # noqa: PLC0415 (POSIX only)

    lock = path.with_name(path.name + ".lock")
    try:
        fd = os.open(lock, os.O_RDWR | os.O_CREAT | _NOFOLLOW | _CLOEXEC, 0o600)
    except OSError as exc:
        raise failed("open the lock file", lock, exc) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # releases the lock


def read(path: Path) -> bytes | None:
    """The bytes of `path`, None when it does not exist; never through a link (`destination` resolved it)."""
    try:
        fd = os.open(path, os.O_RDONLY | _NOFOLLOW | _CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise failed("read", path, exc) from None
    try:
        with os.fdopen(fd, "rb") as file:
            if not stat.S_ISREG(os.fstat(file.fileno()).st_mode):
                raise InstallError(f"cannot read {path}: not a regular file", status=1)
            return file.read()
    except OSError as exc:
        raise failed("read", path, exc) from None


def replace(path: Path, text: str, old: bytes | None, *, private: bool) -> Path | None:
    """Write `text` to `path` atomically, `old` (what `path` held) to `path.bak` first; that backup, if any."""
    mode = 0o600
    if old is not None:
        try:
            mode = stat.S_IMODE(path.stat().st_mode)
        except OSError as exc:
            raise failed("read", path, exc) from None
        if not mode & 0o222:
            raise InstallError(f"{path} is read-only; it was not changed (make it writable to install)", status=1)
    backup = None
    if old is not None:
        backup = path.with_name(path.name + ".bak")
        _renamed_into_place(backup, old, 0o600)
    _renamed_into_place(path, text.encode(), 0o600 if private else mode)
    return backup


def _renamed_into_place(path: Path, data: bytes, mode: int) -> None:
    try:
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    except OSError as exc:
        raise failed("write", path, exc) from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
            if sys.platform != "win32":  # Windows has no fchmod before 3.13, and no such modes
                os.fchmod(out.fileno(), mode)
            out.flush()
            os.fsync(out.fileno())
        os.replace(temporary, path)
    except OSError as exc:
        Path(temporary).unlink(missing_ok=True)
        raise failed("write", path, exc) from None
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
