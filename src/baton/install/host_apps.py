"""The hosts `baton install` writes for: where each keeps its MCP servers, and the shape of one entry.

- `claude-desktop`: `claude_desktop_config.json` in Claude's folder (macOS `~/Library/Application
  Support/Claude`, Windows `%APPDATA%\\Claude`, else `$XDG_CONFIG_HOME/Claude`, default `~/.config/Claude`),
  under `mcpServers`, as `{command, args, env}`; no URL entries (that file starts stdio servers only: a URL
  is installed as `baton bridge URL`, `bridged`).
- `cursor`: `~/.cursor/mcp.json`, or `DIR/.cursor/mcp.json` with `--workspace DIR`, under `mcpServers`, as
  `{command, args, env}` or `{url}`.
- `vscode`: `DIR/.vscode/mcp.json` with `--workspace DIR`, else the user profile's `mcp.json` (macOS
  `~/Library/Application Support/Code/User`, Windows `%APPDATA%\\Code\\User`, else `$XDG_CONFIG_HOME/Code/User`),
  under `servers`, as `{type: "stdio", command, args, env}` or `{type: "http", url}`; the file may hold comments.
- `mcp-json`: printed, `{"mcpServers": {...}}`, the generic block any host's file takes.
- `claude-code`: no file: `claude mcp add NAME -e KEY=VALUE -- COMMAND ARGS`, or `--transport http NAME URL`.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

HostName = Literal["claude-desktop", "claude-code", "cursor", "vscode", "mcp-json"]
HOSTS: tuple[HostName, ...] = ("claude-desktop", "claude-code", "cursor", "vscode", "mcp-json")


class InstallError(Exception):
    """What stops an install; the message says what to do (exit status 2, or 1 for a file that cannot be read)."""

    def __init__(self, message: str, status: int = 2) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True, slots=True)
class Entry:
    """One server as a host starts it: a command with its arguments and environment, or a URL."""

    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None


def entry_json(host: HostName, entry: Entry, *, mask: bool = False) -> dict[str, Any]:
    """The entry as `host` writes it; `mask`: environment values shown as `${KEY}` (never echoed)."""
    if entry.url is not None:
        return {"type": "http", "url": entry.url} if host == "vscode" else {"url": entry.url}
    out: dict[str, Any] = {"type": "stdio"} if host == "vscode" else {}
    out["command"] = entry.command
    out["args"] = list(entry.args)
    if entry.env:
        out["env"] = {k: f"${{{k}}}" if mask else v for k, v in entry.env}
    return out


def servers_key(host: HostName) -> str:
    return "servers" if host == "vscode" else "mcpServers"


def config_file(host: HostName, workspace: Path | None) -> Path:
    """The file `host` reads its servers from, for this user (or this workspace)."""
    home = Path(os.environ.get("HOME") or Path.home())
    if host == "cursor":
        return (workspace / ".cursor" if workspace else home / ".cursor") / "mcp.json"
    if host == "vscode":
        if workspace is not None:
            return workspace / ".vscode" / "mcp.json"
        return _app_dir(home, "Code") / "User" / "mcp.json"
    if host == "claude-desktop":
        if workspace is not None:
            raise InstallError("--workspace is for cursor and vscode; Claude Desktop has one config file per user")
        return _app_dir(home, "Claude") / "claude_desktop_config.json"
    raise InstallError(f"{host} has no config file to write")


def _app_dir(home: Path, name: str) -> Path:
    if sys.platform == "darwin":
        return home / "Library" / "Application Support" / name
    if sys.platform == "win32":
        appdata = os.environ.get("APPDATA")
        return Path(appdata) / name if appdata else home / "AppData" / "Roaming" / name
    xdg = os.environ.get("XDG_CONFIG_HOME")
    return (Path(xdg) if xdg else home / ".config") / name
