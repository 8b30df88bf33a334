"""A host's config file as data: parsed without losing anything in it, and one entry set in it.

`parse` reads the file's text as JSON, or for VS Code as JSON with comments (`baton.install.jsonc`); a
file that does not parse is an `InstallError` naming the file, the line and the column, and is never
written. `put` sets one entry under the servers key and leaves every other entry and every unknown key as
it was. Reading and writing the file itself is `baton.install.safe_file`.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from . import jsonc
from .host_apps import InstallError


def parse(path: Path, data: bytes | None, *, comments: bool) -> tuple[dict[str, Any], bool]:
    """The config `data` read from `path` ({} when missing or empty), and whether it held comments."""
    try:
        text = (data or b"").decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InstallError(f"cannot read {path}: it is not UTF-8 text ({exc.reason})", status=1) from None
    if not text.strip():
        return {}, False
    plain, had_comments = jsonc.plain(text) if comments else (text, False)
    try:
        config = json.loads(plain)
    except json.JSONDecodeError as exc:
        kind = "JSON with comments" if comments else "JSON"
        raise InstallError(
            f"{path} is not valid {kind} (line {exc.lineno}, column {exc.colno}: {exc.msg}); it was not changed. "
            "Fix it, or move it away, and install again",
            status=1,
        ) from None
    if not isinstance(config, dict):
        raise InstallError(f"{path} holds a JSON {type(config).__name__}, not an object; it was not changed", status=1)
    return config, had_comments


def put(path: Path, config: dict[str, Any], key: str, name: str, entry: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A copy of `config` (read from `path`) with `entry` as server `name` under `key`; and whether it
    replaced one."""
    servers = config.get(key, {})
    if not isinstance(servers, dict):
        kind = type(servers).__name__
        raise InstallError(f'"{key}" in {path} is a JSON {kind}, not an object; it was not changed', status=1)
    replaced = name in servers
    return {**config, key: {**servers, name: entry}}, replaced


def dumps(config: dict[str, Any]) -> str:
    """The file's new text."""
    return json.dumps(config, indent=2, ensure_ascii=False) + "\n"
