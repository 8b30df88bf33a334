"""MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865) on the server: an `App` is a `ui://` HTML page that a
host renders in a sandboxed frame for a tool's result (protocol.md P185, P186).

`@server.tool(app=App("ui://clock/app.html", path="clock.html"))` registers the page as a resource served
as `text/html;profile=mcp-app` with its `_meta.ui` (csp, permissions, domain, prefersBorder), stamps the
tool's `_meta.ui` (`resourceUri`, `visibility`) and the legacy flat `ui/resourceUri` key, and declares the
extension. The tool still answers with `content` that reads well where no page is shown.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from ..protocol.extensions import Extensions, negotiated

if TYPE_CHECKING:
    from .context import Context

APPS: Final = "io.modelcontextprotocol/ui"
"""The MCP Apps extension identifier."""
APP_MIME_TYPE: Final = "text/html;profile=mcp-app"
"""The MIME type of an app's page, in its resource's description and its `resources/read` contents."""
FLAT_URI_KEY: Final = "ui/resourceUri"
"""The flat `_meta` key of the drafts, still read by hosts that predate `_meta.ui.resourceUri` (P186)."""

# An origin a page may declare: http(s) or ws(s), a host (a leading `*.` for its subdomains), a port.
_ORIGIN: Final = re.compile(r"(?:https?|wss?)://(?:\*\.)?[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*(?::\d{1,5})?")

Visibility = Literal["model", "app"]
_VISIBILITIES: Final = ("model", "app")
_PERMISSIONS: Final = ("camera", "microphone", "geolocation", "clipboardWrite")


class App:
    """An app page for one or more tools: `App(uri, html=...)` or `App(uri, path=...)`, exactly one of the two.

    `uri` is a `ui://` URI naming the page. `path` is an HTML file, relative to the file that creates the
    App (not the working directory); it is read on every `resources/read`, so an edit shows on the next
    render. `connect_domains` (fetch, XHR, WebSocket), `resource_domains` (scripts, styles, images,
    fonts, media), `frame_domains` and `base_uri_domains` are the origins the page may reach beyond its
    own inline code: the host builds its Content-Security-Policy from them and blocks the rest.
    `permissions` names browser features the page asks for (`camera`, `microphone`, `geolocation`,
    `clipboardWrite`); `domain` a dedicated origin in the host's own format; `prefers_border` whether the
    host draws a border and background around it. Problems are reported when a tool registers it.
    """

    def __init__(
        self,
        uri: str,
        *,
        html: str | None = None,
        path: str | os.PathLike[str] | None = None,
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        connect_domains: Collection[str] = (),
        resource_domains: Collection[str] = (),
        frame_domains: Collection[str] = (),
        base_uri_domains: Collection[str] = (),
        permissions: Collection[str] = (),
        domain: str | None = None,
        prefers_border: bool | None = None,
    ) -> None:
        self.uri = uri
        self.html = html
        self.path = None if path is None else _beside_caller(Path(path))
        self.name = name
        self.title = title
        self.description = description
        self.csp = {
            "connectDomains": list(connect_domains),
            "resourceDomains": list(resource_domains),
            "frameDomains": list(frame_domains),
            "baseUriDomains": list(base_uri_domains),
        }
        self.permissions = list(permissions)
        self.domain = domain
        self.prefers_border = prefers_border

    def __repr__(self) -> str:
        return f"App({self.uri!r}, {'path=' + repr(str(self.path)) if self.path else 'html=...'})"

    def problems(self) -> list[str]:
        """What makes this app unservable, each in a sentence that says what to write instead."""
        found: list[str] = []
        if not isinstance(self.uri, str) or not self.uri.startswith("ui://") or len(self.uri) <= len("ui://"):
            found.append(f"an app's uri must be a ui:// URI such as 'ui://weather/dashboard.html', not {self.uri!r}")
        if (self.html is None) == (self.path is None):
            found.append("give an App its page as html='<!doctype html>...' or path='page.html', exactly one")
        elif self.html is not None and (not isinstance(self.html, str) or not self.html.strip()):
            found.append("an App's html must be the page's text (a non-empty string)")
        elif self.path is not None and not self.path.is_file():
            found.append(f"the app page {str(self.path)!r} does not exist; a relative path is read beside the file")
        for key, domains in self.csp.items():
            if not all(is_origin(d) for d in domains):
                found.append(f"{_snake(key)} must be origins such as 'https://api.example.com', not {domains!r}")
        unknown = [p for p in self.permissions if p not in _PERMISSIONS]
        if unknown:
            found.append(f"unknown app permission {unknown[0]!r}; the permissions are {', '.join(_PERMISSIONS)}")
        if self.prefers_border is not None and not isinstance(self.prefers_border, bool):
            found.append("prefers_border must be True, False or None (the host decides)")
        return found

    def resource_meta(self) -> dict[str, Any]:
        """`_meta` of the page's description and contents: `{"ui": {...}}` with what was declared (P185)."""
        ui: dict[str, Any] = {}
        csp = {key: domains for key, domains in self.csp.items() if domains}
        if csp:
            ui["csp"] = csp
        if self.permissions:
            ui["permissions"] = {name: {} for name in self.permissions}
        if self.domain is not None:
            ui["domain"] = self.domain
        if self.prefers_border is not None:
            ui["prefersBorder"] = self.prefers_border
        return {"ui": ui} if ui else {}

    def page(self) -> str:
        """The page's HTML, read from its file each time when it has one."""
        if self.path is None:
            return self.html or ""
        return self.path.read_text(encoding="utf-8")

    def reader(self) -> Callable[[], Any]:
        """The resource handler that serves the page: its `resources/read` contents, `_meta.ui` included."""

        async def read_app() -> dict[str, Any]:
            item: dict[str, Any] = {"uri": self.uri, "mimeType": APP_MIME_TYPE, "text": self.page()}
            meta = self.resource_meta()
            if meta:
                item["_meta"] = meta
            return item

        read_app.__doc__ = self.description or f"The app page {self.uri}."
        return read_app


def app_tool_meta(meta: Mapping[str, Any] | None, app: App, visibility: Collection[str] | None) -> dict[str, Any]:
    """The `_meta` of a tool with an app: the author's, plus `ui` (`resourceUri`, `visibility` when given)
    and the legacy flat key (P186). ValueError for a `ui` key of the author's or a bad visibility."""
    out = dict(meta or {})
    if "ui" in out or FLAT_URI_KEY in out:
        raise ValueError("meta={'ui': ...} is written by app=...: give visibility=[...] instead")
    ui: dict[str, Any] = {"resourceUri": app.uri}
    if visibility is not None:
        seen = list(visibility)
        if isinstance(visibility, str) or not seen or any(v not in _VISIBILITIES for v in seen):
            raise ValueError(f"visibility must be a non-empty list of 'model' and 'app', not {visibility!r}")
        ui["visibility"] = list(dict.fromkeys(seen))
    out["ui"] = ui
    out[FLAT_URI_KEY] = app.uri
    return out


def is_origin(source: object) -> bool:
    """Whether `source` is an origin a page may declare in its `csp`: `https://api.example.com`,
    `wss://live.example.com:8443`, `https://*.cdn.example.com`; never a keyword, a scheme alone, a path
    or a list (which would widen or inject into a host's policy)."""
    return isinstance(source, str) and _ORIGIN.fullmatch(source) is not None


def shows_apps(ctx: Context) -> bool:
    """Whether this request's client renders app pages: it declared the extension with the app MIME type
    among its `mimeTypes` (on a server that offers it, as one with an app tool does). A tool's `content`
    matters either way; this lets it say more in text where no page will be shown."""
    return _app_mime(ctx.extension(APPS))


def renders_apps(offered: Extensions, declared: Extensions) -> bool:
    """`shows_apps` from the server's offered extensions and the client's declared ones (before a Context)."""
    settings = negotiated(offered, declared, APPS)
    return _app_mime(None if settings is None else dict(settings))


def _app_mime(settings: Mapping[str, Any] | None) -> bool:
    mime_types = (settings or {}).get("mimeTypes")
    return isinstance(mime_types, list) and APP_MIME_TYPE in mime_types


def _beside_caller(path: Path) -> Path:
    """A relative page path, made absolute against the directory of the file that created the App."""
    if path.is_absolute():
        return path
    frame = sys._getframe(2)  # App.__init__ <- the author's code
    caller = frame.f_globals.get("__file__")
    base = Path(caller).resolve().parent if isinstance(caller, str) else Path.cwd()
    return base / path


def _snake(key: str) -> str:
    return "".join(f"_{c.lower()}" if c.isupper() else c for c in key)
