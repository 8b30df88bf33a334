"""Reading and writing a host's config file without losing anything in it.

`read` parses the file as JSON, or for VS Code as JSON with comments (`//` and `/* */` comments and
trailing commas, which VS Code's own parser accepts); a file that does not parse is an `InstallError`
naming the file, the line and the column, and is never written. `put` sets one entry under the servers
key and leaves every other entry and every unknown key as it was. `write` replaces the file atomically
(a temporary file in the same folder, then a rename) after copying the old one beside it as `FILE.bak`.
Hand-written because the one thing needed from a JSON-with-comments library (strip the comments, keep
line numbers for errors) is a few lines, and writing back goes through the standard `json` module.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

from .hosts import InstallError

_JSONC = re.compile(r'"(?:\\.|[^"\\])*"|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.S)


def strip_comments(text: str) -> str:
    """JSON with comments as plain JSON: comments blanked (newlines kept, so line numbers hold), trailing
    commas dropped; strings untouched."""

    def keep(match: re.Match[str]) -> str:
        token = match.group()
        if token.startswith('"'):
            return token
        return re.sub(r"[^\n]", " ", token)

    return _JSONC.sub(keep, text)


def read(path: Path, *, comments: bool) -> tuple[dict[str, Any], bool]:
    """The config in `path` ({} when the file is missing or empty), and whether it held comments."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}, False
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}", status=1) from None
    if not text.strip():
        return {}, False
    plain = strip_comments(text) if comments else text
    try:
        data = json.loads(plain)
    except json.JSONDecodeError as exc:
        kind = "JSON with comments" if comments else "JSON"
        raise InstallError(
            f"{path} is not valid {kind} (line {exc.lineno}, column {exc.colno}: {exc.msg}); it was not changed. "
            "Fix it, or move it away, and install again",
            status=1,
        ) from None
    if not isinstance(data, dict):
        raise InstallError(f"{path} holds a JSON {type(data).__name__}, not an object; it was not changed", status=1)
    return data, plain != text


def put(path: Path, config: dict[str, Any], key: str, name: str, entry: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A copy of `config` (read from `path`) with `entry` as server `name` under `key`; and whether it
    replaced one."""
    servers = config.get(key, {})
    if not isinstance(servers, dict):
        kind = type(servers).__name__
        raise InstallError(f'"{key}" in {path} is a JSON {kind}, not an object; it was not changed', status=1)
    replaced = name in servers
    return {**config, key: {**servers, name: entry}}, replaced


def write(path: Path, config: dict[str, Any]) -> Path | None:
    """Replace `path` atomically with `config`, the old file copied to `path.bak` first; that backup, if any."""
    backup = None
    if path.exists() and not path.stat().st_mode & 0o222:
        raise InstallError(f"{path} is read-only; it was not changed (make it writable to install)", status=1)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.exists():
            backup = path.with_name(path.name + ".bak")
            shutil.copy2(path, backup)
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                json.dump(config, out, indent=2, ensure_ascii=False)
                out.write("\n")
            if path.exists():
                shutil.copymode(path, temporary)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InstallError(f"cannot write {path}: {exc.strerror or exc}", status=1) from None
    return backup
