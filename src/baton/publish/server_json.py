"""`server.json` for the MCP Registry (schema 2025-12-11), from the server's own metadata and the options.

The server gives the version, the title, the description (its card's, else its instructions) and, when it has
a card, the registry name, the website and the repository; the options give what only the publisher knows:
where it is published (a PyPI package run over stdio, remote Streamable HTTP endpoints) and anything the server
does not say. The registry proves a PyPI package is the publisher's by finding `mcp-name: NAME` in the
package's README, so `marker` is printed for them to paste (protocol.md P217).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ..server.card import NAME_PATTERN, repository_source
from .described import Described, PublishError, check_version, fits

SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/2025-12-11/server.schema.json"
_HTTP_URL: Final = re.compile(r"https?://\S+\Z")
_PYPI_NAME: Final = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?\Z")  # PEP 508 distribution names


@dataclass(frozen=True)
class Where:
    """The publisher's part: the registry name and where the server is found."""

    name: str | None = None
    pypi: str | None = None
    package_version: str | None = None
    remotes: tuple[str, ...] = ()
    mcpb: tuple[str, str] | None = None  # a bundle's download URL, and the SHA-256 of its bytes
    title: str | None = None
    website_url: str | None = None
    repository_url: str | None = None


def document(described: Described, where: Where) -> dict[str, Any]:
    """The `server.json` of the described server, published as `where` says."""
    server = described.server
    card = server.settings.card
    name = where.name or (card.name if card else None)
    if not name:
        raise PublishError(
            "the registry needs the server's registry name: pass --name io.github.YOU/NAME (or com.example/NAME "
            "for a domain you own), or give the Server card=ServerCard(name=...)"
        )
    if not NAME_PATTERN.match(name) or not 3 <= len(name) <= 200:
        raise PublishError(
            f"--name {name!r} is not a registry name: reverse DNS, one slash, then the server's own name, such "
            "as io.github.you/notes"
        )
    if not where.pypi and not where.remotes and not where.mcpb:
        raise PublishError(
            "say where clients get the server: --pypi PACKAGE (run over stdio from PyPI), --mcpb URL FILE (a "
            "bundle), and/or --remote URL (a Streamable HTTP endpoint)"
        )
    doc: dict[str, Any] = {
        "$schema": SCHEMA,
        "name": name,
        "description": fits(described.description, "description", "--description"),
        "version": server.version,
    }
    title = where.title or server.title
    if title:
        doc["title"] = fits(title, "title", "--title")
    website = where.website_url or (card.website_url if card else None)
    if website:
        doc["websiteUrl"] = _url(website, "--website")
    repository = where.repository_url or (card.repository_url if card else None)
    if repository:
        doc["repository"] = {"url": _url(repository, "--repository"), "source": repository_source(repository)}
    if card and card.icons:
        doc["icons"] = list(card.icons)
    packages: list[dict[str, Any]] = []
    if where.pypi:
        if not _PYPI_NAME.match(where.pypi):
            raise PublishError(f"--pypi {where.pypi!r} is not a PyPI package name")
        version = where.package_version or server.version
        check_version(version, "--package-version")
        packages.append(
            {"registryType": "pypi", "identifier": where.pypi, "version": version, "transport": {"type": "stdio"}}
        )
    if where.mcpb:
        url, digest = where.mcpb
        if not url.startswith("https://") or not _HTTP_URL.match(url):
            raise PublishError(f"--mcpb {url!r} is not an https URL (where clients download the bundle)")
        packages.append(
            {
                "registryType": "mcpb",
                "identifier": url,
                "version": server.version,
                "fileSha256": digest,
                "transport": {"type": "stdio"},
            }
        )
    if packages:
        doc["packages"] = packages
    if where.remotes:
        doc["remotes"] = [{"type": "streamable-http", "url": _url(url, "--remote")} for url in where.remotes]
    return doc


def marker(name: str) -> str:
    """The README line by which the registry checks that a PyPI package belongs to `name` (an HTML comment:
    PyPI does not show it)."""
    return f"<!-- mcp-name: {name} -->"


def _url(url: str, option: str) -> str:
    if not _HTTP_URL.match(url):
        raise PublishError(f"{option} {url!r} is not an http(s) URL")
    return url
