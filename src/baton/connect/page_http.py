"""The small HTTP vocabulary of the connect pages: a parsed request, an HTML response, the page shell."""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from http.cookies import CookieError, SimpleCookie
from urllib.parse import parse_qs

from ..protocol.asgi import Receive, Scope, Send
from ..web import BodyTooLarge, ClientGone, read_body, security_headers

MAX_FORM_BYTES = 16 * 1024
CSP = "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
_SECURITY_HEADERS = security_headers(CSP, referrer="same-origin")


@dataclass(slots=True)
class Request:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    cookies: dict[str, str]
    form: dict[str, str] = field(default_factory=dict)
    fields: dict[str, list[str]] = field(default_factory=dict)  # every value of each name (multi-select)


@dataclass(slots=True)
class PageResponse:
    status: int
    body: str = ""
    headers: list[tuple[str, str]] = field(default_factory=list)


def _single(values: dict[str, list[str]]) -> dict[str, str]:
    return {k: v[0] for k, v in values.items() if v}


async def read_request(scope: Scope, receive: Receive) -> Request | None:
    """Parse the request; None if the body is too large or the client went away."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    cookies: dict[str, str] = {}
    try:
        jar = SimpleCookie(headers.get("cookie", ""))
        cookies = {k: m.value for k, m in jar.items()}
    except CookieError:
        pass
    query = _single(parse_qs(scope.get("query_string", b"").decode("latin-1")))
    request = Request(scope["method"], scope["path"], query, headers, cookies)
    if request.method != "POST":
        return request
    try:
        body = await read_body(receive, MAX_FORM_BYTES)
    except (BodyTooLarge, ClientGone):
        return None
    if headers.get("content-type", "").split(";")[0].strip() == "application/x-www-form-urlencoded":
        request.fields = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
        request.form = _single(request.fields)
    return request


async def send_response(send: Send, response: PageResponse) -> None:
    body = response.body.encode()
    headers = [
        (b"content-type", b"text/html; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        *_SECURITY_HEADERS,
        *((k.encode("latin-1"), v.encode("latin-1")) for k, v in response.headers),
    ]
    await send({"type": "http.response.start", "status": response.status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def page(title: str, body_html: str, *, status: int = 200, banner: str | None = None) -> PageResponse:
    """An HTML page; `body_html` must already be escaped (build it with `esc`)."""
    notice = f'<p class="banner">{esc(banner)}</p>' if banner else ""
    text = (
        "<!doctype html><html><head><meta charset='utf-8'>"
        "<meta name='viewport' content='width=device-width, initial-scale=1'>"
        f"<title>{esc(title)}</title><style>body{{font-family:sans-serif;max-width:36em;margin:3em auto}}"
        ".banner{background:#fde68a;padding:.5em}</style></head>"
        f"<body>{notice}<h1>{esc(title)}</h1>{body_html}</body></html>"
    )
    return PageResponse(status, text)


def redirect(location: str, headers: list[tuple[str, str]] | None = None) -> PageResponse:
    return PageResponse(303, "", [("location", location), *(headers or [])])


def esc(text: str) -> str:
    return html.escape(text, quote=True)
