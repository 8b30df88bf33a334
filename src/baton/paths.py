"""Paths given as tool arguments, confined to directories the server chose: the replacement for Roots.

MCP 2026-07-28 deprecates Roots (SEP-2577): a tool takes a path as an ordinary argument, and the
*server* decides which directories it may touch. `Roots(*directories)` is that decision and
`roots.resolve(path)` applies it:

- A relative path resolves against the **first** root. An absolute path must lie inside a root as written
  (lexically: `/srv/data/x` belongs to the root `/srv/data`); the first root, in the order given, that
  contains it is the one it is checked against. A root given through a symbolic link is reachable under both
  spellings. `~` and environment variables are not expanded; names are not Unicode-normalized (the
  filesystem compares bytes).
- The path is walked one component at a time, the way the kernel would, without ever looking outside the
  root: `..` may not climb above the root, even if it comes back down (`../data/x` is refused); a symbolic
  link at any component is followed only if its target stays inside the same root (an absolute target must
  be written under the root; a relative one may not climb above it), at most `MAX_SYMLINKS` of them. No file
  outside the root is ever looked at, so a refusal reveals nothing about what exists there.
- The result must be a regular file or a directory: devices, FIFOs and sockets are refused.
- Text checks first: not empty, no NUL, valid Unicode (no lone surrogates), at most `MAX_PATH_BYTES` bytes
  in UTF-8 and at most `MAX_NAME_BYTES` per name.
- The returned `Path` is absolute and free of symbolic links (the real path at the time of the check).
  Every refusal is a `PathRefused` (a `ValueError`) whose message quotes only the path the client gave, never
  a real location, so it can go back to the client as it is (e.g. `raise ToolError(str(exc))`).

Time of check and time of use: `resolve` is a check at one instant. If nobody untrusted can write inside
the roots, that is enough. If someone can, they could swap a checked directory for a symbolic link before
the tool uses the path; `roots.open(path, mode)` closes that gap for files: it walks the checked path again
from a descriptor of the root with `O_NOFOLLOW` on *every* component (a link that appeared is refused),
opens the file non-blocking (a FIFO swapped in cannot hang the server), checks with `fstat` that it is a
regular file, and on Linux checks the descriptor's real path (`/proc/self/fd`) is still inside the root.
Limits: a hard link inside a root to a file elsewhere is an ordinary file and cannot be told apart (the
kernel's `protected_hardlinks` stops links to other users' files); a directory tree walked after
`resolve` (as in `os.walk`) is not protected: skip symbolic links while walking (`follow_symlinks=False`);
the roots themselves are trusted. POSIX only (Linux, macOS).
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, Literal

__all__ = ["MAX_NAME_BYTES", "MAX_PATH_BYTES", "MAX_SYMLINKS", "PathRefused", "Roots"]

MAX_PATH_BYTES = 4096  # Linux PATH_MAX
MAX_NAME_BYTES = 255  # NAME_MAX
MAX_SYMLINKS = 40  # as the kernel (MAXSYMLINKS)

PathKind = Literal["any", "file", "dir"]
_OUTSIDE = "is outside the allowed directories"
_LINK_OUTSIDE = "goes through a symbolic link that leads outside the allowed directories"
_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_O_NOCTTY = getattr(os, "O_NOCTTY", 0)


class PathRefused(ValueError):
    """A path argument that is not allowed; the message is safe to show to the client and the model."""


class _Root:
    __slots__ = ("parts", "prefixes", "real")

    def __init__(self, configured: str) -> None:
        spelled = os.path.abspath(configured)
        self.real = os.path.realpath(spelled)
        self.parts = _split(self.real)
        # The real location and the configured spelling: an absolute path may use either.
        self.prefixes = tuple(dict.fromkeys((tuple(_split(self.real)), tuple(_split(spelled)))))

    def strip(self, components: list[str]) -> list[str] | None:
        """The components after this root if the absolute path lies inside it as written, else None."""
        for prefix in self.prefixes:
            if tuple(components[: len(prefix)]) == prefix:
                return components[len(prefix) :]
        return None


class Roots:
    """The directories a server lets tools reach through path arguments; see the module docstring."""

    __slots__ = ("_roots",)

    def __init__(self, *directories: str | os.PathLike[str]) -> None:
        if not directories:
            raise ValueError("Roots needs at least one directory")
        roots = []
        for d in directories:
            root = _Root(os.fspath(d))
            if not os.path.isdir(root.real):
                raise ValueError(f"Roots: {os.fspath(d)!r} is not an existing directory")
            roots.append(root)
        self._roots = tuple(roots)

    @classmethod
    def from_env(cls, variable: str, default: Sequence[str | os.PathLike[str]] = (".",)) -> Roots:
        """Roots from an environment variable listing directories separated by `os.pathsep` (`:`)."""
        value = os.environ.get(variable, "")
        listed = [d for d in value.split(os.pathsep) if d.strip()]
        return cls(*(listed or default))

    @property
    def directories(self) -> tuple[Path, ...]:
        """The roots' real locations, first one first."""
        return tuple(Path(r.real) for r in self._roots)

    def __repr__(self) -> str:
        return f"Roots({', '.join(repr(r.real) for r in self._roots)})"

    def resolve(self, user_path: str, *, kind: PathKind = "any", must_exist: bool = True) -> Path:
        """The real path of `user_path` inside a root, or `PathRefused`.

        `kind` asks for a regular file (`"file"`) or a directory (`"dir"`). With `must_exist=False` a path
        whose last components do not exist yet is accepted (to create it); what exists is still checked.
        """
        root, rel = self._resolve(user_path, kind, must_exist)
        return Path(os.path.join(root.real, *rel))

    def display(self, path: str | os.PathLike[str]) -> str:
        """A resolved path as the client may see it: relative to its root (`.` for the root itself)."""
        parts = _split(os.fspath(path))
        for root in self._roots:
            if parts[: len(root.parts)] == root.parts:
                return "/".join(parts[len(root.parts) :]) or "."
        raise ValueError("display() takes a path returned by resolve()")

    def open(
        self,
        user_path: str,
        mode: str = "r",
        *,
        encoding: str | None = None,
        errors: str | None = None,
        newline: str | None = None,
    ) -> IO[Any]:
        """Open a regular file inside the roots, safe against a symbolic link swapped in after the check.

        `mode` is as for `open()` (`r`, `w`, `a`, `x`, with `b`/`t` and `+`); a mode that creates the file
        needs its directory to exist. Refusals, including a path that changed under us, are `PathRefused`.
        """
        flags, creates = _mode_flags(mode)
        root, rel = self._resolve(user_path, "file", not creates)
        shown = _show(user_path)
        dir_fd = os.open(root.real, os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC)
        try:
            for name in rel[:-1]:
                next_fd = _open_at(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd, shown)
                os.close(dir_fd)
                dir_fd = next_fd
            fd = _open_at(rel[-1], flags | os.O_NONBLOCK | _O_NOCTTY, dir_fd, shown)
        finally:
            os.close(dir_fd)
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                raise PathRefused(f"path {shown} is not a regular file")
            real = _fd_path(fd)
            if real is not None and _split(real)[: len(root.parts)] != root.parts:
                raise PathRefused(f"path {shown} changed while it was being opened")
            os.set_blocking(fd, True)
            return os.fdopen(fd, mode, encoding=encoding, errors=errors, newline=newline)
        except BaseException:
            os.close(fd)
            raise

    # -- the walk -----------------------------------------------------------------------------------

    def _resolve(self, user_path: str, kind: PathKind, must_exist: bool) -> tuple[_Root, list[str]]:
        shown = _check_text(user_path)
        components = user_path.split("/")
        if user_path.startswith("/"):
            for root in self._roots:
                inside = root.strip([c for c in components if c not in ("", ".")])
                if inside is not None:
                    break
            else:
                raise PathRefused(f"path {shown} {_OUTSIDE}")
        else:
            root, inside = self._roots[0], components
        trailing_slash = user_path.endswith(("/", "/."))
        rel, exists = _walk(root, inside, shown, must_exist)
        if not exists:
            return root, rel
        here = os.path.join(root.real, *rel)
        try:
            mode = os.lstat(here).st_mode
        except OSError:
            raise PathRefused(f"path {shown} cannot be accessed") from None
        if stat.S_ISLNK(mode):
            raise PathRefused(f"path {shown} changed while it was being checked")
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            raise PathRefused(f"path {shown} is a device, pipe or socket, not a regular file or directory")
        if (kind == "dir" or trailing_slash) and not stat.S_ISDIR(mode):
            raise PathRefused(f"path {shown} is not a directory")
        if kind == "file" and not stat.S_ISREG(mode):
            raise PathRefused(f"path {shown} is not a file")
        return root, rel


def _walk(root: _Root, components: list[str], shown: str, must_exist: bool) -> tuple[list[str], bool]:
    """Walk `components` below `root` like the kernel would, never stepping outside it.

    Returns the components of the real path below the root, and whether it exists.
    """
    # Pending names, last first, each tagged with whether it came from a symbolic link's target.
    pending: list[tuple[str, bool]] = [(c, False) for c in reversed(components)]
    rel: list[str] = []
    missing_from: int | None = None  # rel[missing_from:] do not exist (only with must_exist=False)
    links = 0
    while pending:
        name, from_link = pending.pop()
        if name in ("", "."):
            continue
        if name == "..":
            if not rel:
                raise PathRefused(f"path {shown} {_LINK_OUTSIDE if from_link else _OUTSIDE}")
            rel.pop()
            if missing_from is not None and len(rel) <= missing_from:
                missing_from = None
            continue
        if missing_from is not None:
            rel.append(name)
            continue
        here = os.path.join(root.real, *rel, name)
        try:
            st = os.lstat(here)
        except FileNotFoundError:
            if must_exist:
                raise PathRefused(f"path {shown} does not exist") from None
            missing_from = len(rel)
            rel.append(name)
            continue
        except NotADirectoryError:
            raise PathRefused(f"path {shown} does not exist (a part of it is not a directory)") from None
        except OSError:
            raise PathRefused(f"path {shown} cannot be accessed") from None
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > MAX_SYMLINKS:
                raise PathRefused(f"path {shown} has too many levels of symbolic links")
            try:
                target = os.readlink(here)
            except OSError:
                raise PathRefused(f"path {shown} cannot be accessed") from None
            if target.startswith("/"):
                inside = root.strip([c for c in target.split("/") if c not in ("", ".")])
                if inside is None:
                    raise PathRefused(f"path {shown} {_LINK_OUTSIDE}")
                rel = []
                missing_from = None
                parts = inside
            else:
                parts = target.split("/")
            pending.extend((c, True) for c in reversed(parts))
            continue
        if pending and not stat.S_ISDIR(st.st_mode):
            raise PathRefused(f"path {shown} does not exist: {_show(name)} is not a directory")
        rel.append(name)
    return rel, missing_from is None


def _check_text(user_path: object) -> str:
    """The path quoted for messages, after the checks that need no filesystem."""
    if not isinstance(user_path, str):
        raise PathRefused("a path must be text")
    shown = _show(user_path)
    if not user_path:
        raise PathRefused("the path is empty")
    if "\x00" in user_path:
        raise PathRefused(f"path {shown} contains a NUL character")
    try:
        encoded = user_path.encode("utf-8")
    except UnicodeEncodeError:
        raise PathRefused(f"path {shown} is not valid Unicode text") from None
    if len(encoded) > MAX_PATH_BYTES:
        raise PathRefused(f"the path is too long (over {MAX_PATH_BYTES} bytes)")
    if any(len(name) > MAX_NAME_BYTES for name in encoded.split(b"/")):
        raise PathRefused(f"path {shown} has a name longer than {MAX_NAME_BYTES} bytes")
    return shown


def _show(text: str, limit: int = 120) -> str:
    """The client's own path, quoted with control characters escaped and cut to `limit` characters."""
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")


def _split(path: str) -> list[str]:
    return [c for c in path.split("/") if c]


def _open_at(name: str, flags: int, dir_fd: int, shown: str) -> int:
    try:
        return os.open(name, flags | os.O_NOFOLLOW | _O_CLOEXEC, 0o666, dir_fd=dir_fd)
    except OSError as exc:
        raise PathRefused(f"path {shown} {_OPEN_ERRORS.get(exc.errno or 0, 'cannot be opened')}") from None


_OPEN_ERRORS = {
    errno.ENOENT: "does not exist",
    errno.ELOOP: "changed while it was being opened (a symbolic link appeared)",
    errno.ENOTDIR: "changed while it was being opened",
    errno.EEXIST: "already exists",
    errno.EISDIR: "is a directory",
    errno.EACCES: "cannot be accessed",
    errno.EPERM: "cannot be accessed",
    errno.ENXIO: "is a device, pipe or socket, not a regular file",
}


def _fd_path(fd: int) -> str | None:
    """The real path of an open descriptor, where the system tells it (Linux /proc); else None."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _mode_flags(mode: str) -> tuple[int, bool]:
    """The `os.open` flags for an `open()` mode, and whether the mode may create the file."""
    primary = [c for c in mode if c in "rwax"]
    if len(primary) != 1 or len(set(mode)) != len(mode) or set(mode) - set("rwaxbt+") or {"b", "t"} <= set(mode):
        raise ValueError(f"invalid mode {mode!r}")
    plus = "+" in mode
    access = os.O_RDWR if plus else os.O_RDONLY if primary[0] == "r" else os.O_WRONLY
    extra = {"r": 0, "w": os.O_CREAT | os.O_TRUNC, "a": os.O_CREAT | os.O_APPEND, "x": os.O_CREAT | os.O_EXCL}
    return access | extra[primary[0]], primary[0] != "r"
