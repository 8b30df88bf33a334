"""`baton dev` as an MCP Apps host: a tool's app page, read through the page's client, served in a sandbox.

The page (static/apps.js) speaks the host side of the app protocol to a frame; this module gives it the
frame's document. `AppPages.render` reads the `ui://` resource through the same client as every call,
checks it is an app page, and keeps its HTML under a random id; `GET /app/<id>` serves it with a
Content-Security-Policy built from the page's `_meta.ui.csp` and nothing more (protocol.md P188): no
origin it did not declare, not even this one, so the frame cannot reach the dev server's API; and the
policy's own `sandbox allow-scripts` keeps the document in an opaque origin even if opened outside its
frame. The id is the only key to a page: the frame cannot send the run's token, and a page holds no
secret, only what the server gave.
"""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..client import Client
from ..server.apps import APP_MIME_TYPE, APPS, is_origin

MAX_PAGES = 64
"""App pages kept for frames that load (or reload) them; the oldest go first."""
HOST_EXTENSIONS = {APPS: {"mimeTypes": [APP_MIME_TYPE]}}
"""What `baton dev`'s client declares: it renders app pages."""

NONE = "'none'"
_DIRECTIVES = {  # a `_meta.ui.csp` key -> the directives it opens
    "connectDomains": ("connect-src",),
    "resourceDomains": ("script-src", "style-src", "img-src", "font-src", "media-src"),
    "frameDomains": ("frame-src",),
    "baseUriDomains": ("base-uri",),
}
_BASE = {  # what every page gets: its own inline code and styles, data: images and media, nothing else
    "default-src": ["'none'"],
    "script-src": ["'unsafe-inline'"],
    "style-src": ["'unsafe-inline'"],
    "img-src": ["data:"],
    "font-src": [],
    "media-src": ["data:"],
    "connect-src": [],
    "frame-src": [],
    "base-uri": [],
    "object-src": ["'none'"],
    "form-action": ["'none'"],
}


class AppPageError(Exception):
    """The tool's app page cannot be shown; the message says why."""


@dataclass(frozen=True, slots=True)
class AppPage:
    html: str
    policy: str


def page_policy(csp: Any) -> tuple[str, list[str]]:
    """The Content-Security-Policy for a page that declared `csp` (its `_meta.ui.csp`), and the declared
    sources left out because they are not origins (`'unsafe-eval'`, `*`, a path...): never more than declared."""
    directives = {name: list(sources) for name, sources in _BASE.items()}
    refused: list[str] = []
    declared = csp if isinstance(csp, Mapping) else {}
    for key, names in _DIRECTIVES.items():
        sources = declared.get(key)
        for source in sources if isinstance(sources, list) else []:
            if not is_origin(source):
                refused.append(f"{key}: {source!r}")
                continue
            for name in names:
                directives[name].append(source)
    parts = [f"{name} {' '.join(sources) if sources else NONE}" for name, sources in directives.items()]
    return "; ".join([*parts, "frame-ancestors 'self'", "sandbox allow-scripts"]), refused


class AppPages:
    """The app pages rendered so far, by id."""

    def __init__(self) -> None:
        self._pages: OrderedDict[str, AppPage] = OrderedDict()

    async def render(self, client: Client, uri: str, listed: Mapping[str, Any] | None) -> dict[str, Any]:
        """Read `uri` through `client` and keep it; what the page needs to frame it. `listed` is the resource as
        `resources/list` gave it, whose `_meta.ui` stands in for what the contents leave out."""
        if not uri.startswith("ui://"):
            raise AppPageError(f"the tool names {uri!r} as its app, which is not a ui:// resource")
        result = await client.request("resources/read", {"uri": uri})
        contents = result.get("contents")
        item = next((c for c in contents if isinstance(c, dict) and c.get("uri") == uri), None) if contents else None
        if item is None or not isinstance(item.get("text"), str):
            raise AppPageError(f"reading {uri} gave no page text to show")
        if item.get("mimeType") != APP_MIME_TYPE:
            raise AppPageError(f"{uri} is {item.get('mimeType')!r}, not {APP_MIME_TYPE!r}: it is not an app page")
        ui = _ui(item) or _ui(listed or {})
        policy, refused = page_policy(ui.get("csp"))
        page_id = secrets.token_urlsafe(18)
        self._pages[page_id] = AppPage(item["text"], policy)
        while len(self._pages) > MAX_PAGES:
            self._pages.popitem(last=False)
        return {
            "src": f"/app/{page_id}",
            "policy": policy,
            "refused": refused,
            "prefersBorder": ui.get("prefersBorder") if isinstance(ui.get("prefersBorder"), bool) else None,
            "permissions": sorted(ui["permissions"]) if isinstance(ui.get("permissions"), dict) else [],
        }

    def page(self, page_id: str) -> AppPage | None:
        return self._pages.get(page_id)


def _ui(item: Mapping[str, Any]) -> dict[str, Any]:
    meta = item.get("_meta")
    ui = meta.get("ui") if isinstance(meta, dict) else None
    return ui if isinstance(ui, dict) else {}
