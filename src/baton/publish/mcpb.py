"""An MCPB bundle (`.mcpb`, a zip with `manifest.json`) that a desktop host installs and starts with `uv`.

Manifest 0.4, server type `uv` (protocol.md P218): the bundle carries the server file, a `pyproject.toml` naming
its dependencies (Baton, and any `--requirement`), and a launcher that serves the file on stdio as
`baton serve FILE --stdio` does; the host's `uv` installs the dependencies on first start. No packages are
bundled, except wheels given with `--wheel` (a Baton not on PyPI, a private dependency), which the project
points `uv` at. `mcp_config` says the same command for hosts that run it as written. The zip is reproducible:
same inputs, same bytes.
"""

from __future__ import annotations

import json
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from ..targets import split_target
from ..version import __version__
from .described import Described, PublishError, read_file

MANIFEST_VERSION: Final = "0.4"  # the first with server type "uv"
BATON_DISTRIBUTION: Final = "mcp-baton"
REQUIRES_PYTHON: Final = ">=3.11"
ENTRY_POINT: Final = "server/main.py"
APP_FOLDER: Final = "server/app"
_ZIP_TIME: Final = (1980, 1, 1, 0, 0, 0)
_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
_WHEEL: Final = re.compile(r"(?P<name>[A-Za-z0-9_.]+)-[^-]+(-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl\Z")
_LAUNCHER: Final = '''"""Serves the bundled Baton server on stdio (written by `baton publish mcpb`)."""

import runpy
import sys
from pathlib import Path

sys.argv = ["baton", "serve", str(Path(__file__).parent / "app" / {file}) + {attr}, "--stdio"]
runpy.run_module("baton", run_name="__main__", alter_sys=True)
'''


@dataclass(frozen=True)
class Bundle:
    """The publisher's part of a bundle."""

    author: str
    name: str | None = None
    requirements: tuple[str, ...] = ()
    wheels: tuple[Path, ...] = ()


def build(target: str, described: Described, bundle: Bundle, output: Path) -> list[str]:
    """Write the bundle of the server at `target` to `output`; the names of the files in it."""
    spec, attr = split_target(target)
    source = Path(spec)
    if source.suffix != ".py":
        raise PublishError(f"{target!r} is not a FILE.py[:ATTR]: a bundle carries the server's file")
    if not bundle.author.strip():
        raise PublishError("an MCPB manifest names its author: pass --author NAME")
    files: dict[str, bytes] = {
        "manifest.json": json.dumps(_manifest(described, bundle), indent=2).encode() + b"\n",
        "pyproject.toml": _pyproject(bundle.name or described.server.name, bundle).encode(),
        ENTRY_POINT: _LAUNCHER.format(
            file=json.dumps(source.name), attr=json.dumps(f":{attr}" if attr else "")
        ).encode(),
        f"{APP_FOLDER}/{source.name}": read_file(source),
    }
    for wheel in bundle.wheels:
        files[f"wheels/{wheel.name}"] = read_file(wheel)
    partial = output.with_name(output.name + ".partial")
    try:
        with zipfile.ZipFile(partial, "w", compression=zipfile.ZIP_DEFLATED) as archive:
            for name, data in files.items():
                info = zipfile.ZipInfo(name, date_time=_ZIP_TIME)
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                archive.writestr(info, data)
        partial.replace(output)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise PublishError(f"cannot write {output}: {exc.strerror or exc}", status=1) from None
    return list(files)


def carries_baton(bundle: Bundle) -> bool:
    """Whether one of the bundle's wheels is Baton itself (else uv fetches it from PyPI at the host)."""
    return any(
        (found := _WHEEL.match(wheel.name)) is not None and _normalized(found.group("name")) == BATON_DISTRIBUTION
        for wheel in bundle.wheels
    )


def default_output(name: str, version: str) -> Path:
    """`NAME-VERSION.mcpb` in the working directory, with anything but letters, digits, `.`, `_`, `-` as `-`."""
    return Path(re.sub(r"[^A-Za-z0-9._-]+", "-", f"{name}-{version}") + ".mcpb")


def _manifest(described: Described, bundle: Bundle) -> dict[str, Any]:
    server = described.server
    card = server.settings.card
    launch = ["run", "--project", "${__dirname}", "${__dirname}/" + ENTRY_POINT]
    manifest: dict[str, Any] = {
        "manifest_version": MANIFEST_VERSION,
        "name": bundle.name or server.name,
        "version": server.version,
        "description": described.description,
        "author": {"name": bundle.author.strip()},
        "server": {"type": "uv", "entry_point": ENTRY_POINT, "mcp_config": {"command": "uv", "args": launch}},
        "compatibility": {"platforms": ["darwin", "linux", "win32"], "runtimes": {"python": REQUIRES_PYTHON}},
    }
    if server.title:
        manifest["display_name"] = server.title
    if card and card.website_url:
        manifest["homepage"] = card.website_url
    if card and card.repository_url:
        manifest["repository"] = {"type": "git", "url": card.repository_url}
    if server.tools:
        manifest["tools"] = [_tool(tool.describe()) for tool in server.tools.values()]
        manifest["tools_generated"] = False
    return manifest


def _tool(described: dict[str, Any]) -> dict[str, str]:
    tool = {"name": described["name"]}
    if described.get("description"):
        tool["description"] = described["description"]
    return tool


def _pyproject(name: str, bundle: Bundle) -> str:
    """The bundle's project: its dependencies only (`package = false`: uv installs them, not the bundle)."""
    dependencies = {_normalized(BATON_DISTRIBUTION): f"{BATON_DISTRIBUTION}=={__version__}"}
    for requirement in bundle.requirements:
        found = _NAME.match(requirement.strip())
        if not found:
            raise PublishError(f"--requirement {requirement!r} is not a requirement such as 'httpx>=0.27'")
        dependencies[_normalized(found.group())] = requirement.strip()
    sources = {}
    for wheel in bundle.wheels:
        matched = _WHEEL.match(wheel.name)
        if not matched:
            raise PublishError(f"--wheel {wheel} is not a wheel file (NAME-VERSION-PY-ABI-PLATFORM.whl)")
        distribution = _normalized(matched.group("name"))
        dependencies[distribution] = distribution
        sources[distribution] = f"wheels/{wheel.name}"
    lines = [
        "# Written by `baton publish mcpb`: what `uv` installs before the host starts the server.",
        "[project]",
        f"name = {json.dumps(_normalized(name) + '-bundle')}",
        'version = "0"  # the bundle\'s version is in manifest.json',
        f"requires-python = {json.dumps(REQUIRES_PYTHON)}",
        "dependencies = [",
        *(f"    {json.dumps(spec)}," for spec in dependencies.values()),
        "]",
        "",
        "[tool.uv]",
        "package = false",
    ]
    if sources:
        lines += ["", "[tool.uv.sources]"]
        lines += [f"{json.dumps(key)} = {{ path = {json.dumps(path)} }}" for key, path in sources.items()]
    return "\n".join(lines) + "\n"


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()
