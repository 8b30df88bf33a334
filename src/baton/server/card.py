"""`ServerCard`: what a server says of itself before anyone connects (SEP-2127, a draft; protocol.md P194).

Off unless the author gives `Server(card=ServerCard(name="com.example/notes", ...))`. The card is built from
the server's own metadata (version, title, instructions as the description unless one is given, the
capabilities derived from what is registered, the tools, resources and prompts as `*/list` describes them)
plus the few things only the author knows: the registry name, a website, the source repository, icons. The
lists are the same for every caller in Baton (a principal changes what a call may do, not what is listed),
so publishing them leaks nothing a connected client would not see; `primitives=False` leaves them out.
Nothing secret goes on a card: it is public by design.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from ..protocol.constants import ADVERTISED_VERSIONS

if TYPE_CHECKING:
    from .core import Server

CARD_SCHEMA: Final = "https://static.modelcontextprotocol.io/schemas/v1/server-card.schema.json"
NAME_PATTERN: Final = re.compile(r"[a-zA-Z0-9.-]+/[a-zA-Z0-9._-]+\Z")


@dataclass(frozen=True)
class ServerCard:
    """The author's part of the card. `name` is the registry's: reverse DNS, one slash (`com.example/notes`)."""

    name: str
    description: str | None = None
    website_url: str | None = None
    repository_url: str | None = None
    icons: tuple[dict[str, Any], ...] = ()
    primitives: bool = True

    def __post_init__(self) -> None:
        if not NAME_PATTERN.match(self.name):
            raise ValueError(
                f"ServerCard name {self.name!r} is not a registry name: reverse DNS, then one slash and the "
                "server's own name, such as 'com.example/notes' or 'io.github.you/notes'"
            )
        for label, url in (("website_url", self.website_url), ("repository_url", self.repository_url)):
            if url is not None and not url.startswith(("https://", "http://")):
                raise ValueError(f"ServerCard {label} {url!r} is not an http(s) URL")


def card_document(server: Server, card: ServerCard, endpoint: str) -> dict[str, Any]:
    """The card of `server`, reached at `endpoint` (the absolute URL of its MCP endpoint)."""
    document: dict[str, Any] = {"$schema": CARD_SCHEMA, "name": card.name, "version": server.version}
    description = card.description or server.instructions
    if description:
        document["description"] = description
    if server.title:
        document["title"] = server.title
    if card.website_url:
        document["websiteUrl"] = card.website_url
    if card.repository_url:
        document["repository"] = {"url": card.repository_url, "source": repository_source(card.repository_url)}
    if card.icons:
        document["icons"] = list(card.icons)
    remote: dict[str, Any] = {
        "type": "streamable-http",
        "url": endpoint,
        "supportedProtocolVersions": list(ADVERTISED_VERSIONS),
    }
    if server.settings.auth is not None:
        remote["authentication"] = {"required": True, "schemes": ["oauth2"]}
    document["remotes"] = [remote]
    document["capabilities"] = server.runtime.capabilities()
    if card.primitives:
        for key, registry in (("tools", server.tools), ("resources", server.resources), ("prompts", server.prompts)):
            if registry:
                document[key] = [item.describe() for item in registry.values()]
    return document


def catalog_document(card: ServerCard, card_url: str, endpoint: str, version: str) -> dict[str, Any]:
    """The domain's catalog (`/.well-known/mcp/catalog.json`): the one server this process serves, by its card."""
    entry = {"name": card.name, "version": version, "url": endpoint, "serverCard": card_url}
    if card.description:
        entry["description"] = card.description
    return {"servers": [entry]}


def repository_source(url: str) -> str:
    """The hosting service of a repository URL, as the registry names it (`github`, `gitlab`, else the host)."""
    host = url.split("://", 1)[-1].split("/", 1)[0].lower()
    return host.removesuffix(".com").removesuffix(".org") if host in ("github.com", "gitlab.com") else host
