"""The four servers bench/compare runs: Baton, the floor and the two peers, and how each is started.

Baton serves ``examples/everything.py`` with its own ``baton serve``, the floor is ``bench/floor.py``, both in
Baton's venv. The peers are the same tool written with ``mcp`` and with FastMCP (``peers/`` at the top of the
repository, shared with the interop tests), each in its own venv (see venvs.py) and asked for JSON responses,
as Baton and the floor give. ``IMPORTS`` is what each server's module imports from its library, for the
import-time measurement (import_time.py). bench/legacy_compare plans its servers with ``plan_servers`` too,
its peers' scripts its own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from processes import Server, Skip, baton_command, say, script_command
from venvs import ensure_venv

SERVER_ORDER = ("baton", "floor", "mcp", "fastmcp")
PEER_SCRIPTS = {"mcp": "peers/mcp_server.py", "fastmcp": "peers/fastmcp_server.py"}
PEER_ARGS = ("--json",)  # the peers' libraries answer in SSE by default; Baton and the floor in JSON
LABELS = {"baton": "Baton", "floor": "floor", "mcp": "mcp 2.3.0", "fastmcp": "FastMCP 4.1.6"}
# What each server's module imports from its library, as its author writes it: the README's example for Baton,
# the third-party imports at the top of peers/mcp_server.py and peers/fastmcp_server.py for the peers.
IMPORTS = {
    "baton": "from baton import Context, Server",
    "mcp": "from mcp.server.mcpserver import AcceptedElicitation, Elicit, ElicitationResult, MCPServer, Resolve; "
    "from pydantic import BaseModel, Field",
    "fastmcp": "from fastmcp import Context, FastMCP; "
    "from mcp.types import ElicitRequest, ElicitRequestFormParams, ElicitResult, InputRequiredResult",
}


def plan_servers(
    names: list[str],
    baton_python: Path,
    cache: Path,
    scripts: dict[str, str] = PEER_SCRIPTS,
    args: tuple[str, ...] = PEER_ARGS,
    say: Callable[[str], None] = say,
) -> tuple[list[Server], dict[str, str]]:
    """The servers to start, and the reasons for those that cannot be: a peer is ``scripts[name]`` run with
    ``args`` in its venv (bench/legacy_compare passes its own)."""
    servers: list[Server] = []
    skipped: dict[str, str] = {}
    for name in names:
        try:
            if name in ("baton", "floor"):
                if not baton_python.exists():
                    raise Skip(f"{baton_python} does not exist (run ./dev setup first)")
                if name == "baton":
                    baton = baton_python.parent / "baton"
                    if not baton.exists():
                        raise Skip(f"{baton} does not exist (run ./dev setup first)")
                    servers.append(Server(name, baton_python, baton_command(baton)))
                else:
                    servers.append(Server(name, baton_python, script_command(baton_python, "bench/floor.py")))
            else:
                python = ensure_venv(cache, name)
                servers.append(Server(name, python, script_command(python, scripts[name], *args)))
        except Skip as exc:
            skipped[name] = str(exc)
            say(f"{name}: skipped: {exc}")
    return servers, skipped
