"""Analyze a project: a path passed as a tool argument and confined to server-side roots (instead of MCP Roots).

Roots were deprecated in MCP 2026-07-28: the client no longer tells the server where it may look. The
server decides, here from the `ANALYZE_ROOTS` environment variable (directories separated by `:`, default:
the current directory), and every path argument goes through `Roots.resolve`. A refused path (outside the
roots, through a symbolic link that leaves them, a device, ...) becomes a tool error the model can read.

Serve it:  ANALYZE_ROOTS=~/src:/srv/projects baton serve examples/analyze_project.py --http 127.0.0.1:8000
"""

from __future__ import annotations

import asyncio
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from baton import PathRefused, Roots, Server, ToolError

MAX_FILES = 100_000  # stop counting after this many files, so a huge tree cannot stall the server

server = Server("analyze-project", "1.0.0", instructions="Report file counts and sizes for a project directory.")
roots = Roots.from_env("ANALYZE_ROOTS", default=[os.getcwd()])


@dataclass
class ExtensionStats:
    extension: str  # ".py", or "" for files without one
    files: int
    bytes: int


@dataclass
class ProjectReport:
    path: str  # relative to its root ("." for the root itself)
    files: int
    directories: int
    bytes: int
    skipped_links: int  # symbolic links are not followed: they could lead outside the roots
    truncated: bool  # true if the tree has more than MAX_FILES files
    by_extension: list[ExtensionStats]


@server.tool(annotations={"readOnlyHint": True})
async def analyze_project(path: str = ".") -> ProjectReport:
    """Count the files of a project directory by extension, with their total sizes.

    `path` is relative to the first allowed directory, or absolute inside one of them.
    """
    try:
        directory = roots.resolve(path, kind="dir")
    except PathRefused as exc:
        raise ToolError(str(exc)) from None
    report = await asyncio.to_thread(_scan, directory)
    report.path = roots.display(directory)
    return report


def _scan(top: Path) -> ProjectReport:
    counts: Counter[str] = Counter()
    sizes: Counter[str] = Counter()
    directories = links = 0
    truncated = False
    stack = [str(top)]
    while stack and not truncated:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue  # unreadable directory: skip it
        for entry in entries:
            if entry.is_symlink():
                links += 1
            elif entry.is_dir(follow_symlinks=False):
                directories += 1
                stack.append(entry.path)
            elif entry.is_file(follow_symlinks=False):  # devices, FIFOs and sockets are neither
                extension = os.path.splitext(entry.name)[1].lower()
                counts[extension] += 1
                sizes[extension] += entry.stat(follow_symlinks=False).st_size
                if counts.total() >= MAX_FILES:
                    truncated = True
                    break
    by_extension = [ExtensionStats(ext, n, sizes[ext]) for ext, n in counts.most_common()]
    return ProjectReport(".", counts.total(), directories, sum(sizes.values()), links, truncated, by_extension)


if __name__ == "__main__":
    server.run()  # stdio, as a host starts it; server.run("http", port=8000) for Streamable HTTP
