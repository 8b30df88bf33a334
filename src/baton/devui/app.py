"""The HTTP side of `baton dev`: the page's static files and its small JSON API, as one ASGI app.

| route | what |
| --- | --- |
| `GET /`, `GET /static/*` | the page (no token: it holds nothing; its script reads the token from the fragment) |
| `GET /favicon.ico` | the page's icon, where a browser looks for it without asking (no token either) |
| `GET /api/events` | every event so far, then each new one, as newline-delimited JSON (keep-alive `{}` each 15 s) |
| `POST /api/call` | `{kind, name, values}`: start a call, read or get; `{call}` |
| `POST /api/answer` | `{call, key, action, values}`: answer a waiting question; 422 and the reason if it does not fit |
| `POST /api/stop` | `{call}`: stop a call (cancelled on the wire) |
| `GET /api/exchange?call=ID` | the call's raw JSON-RPC messages, masked |
| `POST /api/complete` | `{ref, name, value, context}`: the server's completions for one argument |
| `POST /api/refresh` | read the lists again |
| `POST /api/skill` | `{uri}`: a listed skill's SKILL.md, verified against its entry: `{text}`; 422 and why if not |

| `POST /api/app/render` | `{call}`: read the tool call's app page; where its frame loads it, with its policy |
| `POST /api/app/call` | `{from, method, params}`: relay an app page's `tools/call` or `resources/read`; `{call}` |
| `GET /app/<id>` | an app page, in its own sandbox and CSP (no token: the frame cannot send it; the id is the key) |

Every request passes `DevGuard` first (Host, Origin, token). Bodies are JSON (`Content-Type:
application/json`, at most `MAX_BODY` bytes); anything else is a 4xx with a JSON `{error}`. Hand-written
on the ASGI interface, as the connect pages are: a web framework would bring more than these routes need.
"""

from __future__ import annotations

import asyncio
import contextlib
from importlib import resources
from typing import Any
from urllib.parse import parse_qs

import orjson

from ..protocol.asgi import Receive, Scope, Send
from ..web import BodyTooLarge, ClientGone, lifespan, read_body, security_headers
from .live import DevError, DevSession
from .page_access import DevGuard

MAX_BODY = 1024 * 1024
KEEPALIVE_S = 15.0
STATIC = {
    "/": ("index.html", "text/html; charset=utf-8"),
    "/static/app.js": ("app.js", "text/javascript; charset=utf-8"),
    "/static/dom.js": ("dom.js", "text/javascript; charset=utf-8"),
    "/static/app.css": ("app.css", "text/css; charset=utf-8"),
    "/static/favicon.svg": ("favicon.svg", "image/svg+xml"),
    "/favicon.ico": ("favicon.svg", "image/svg+xml"),
    "/static/apps.js": ("apps.js", "text/javascript; charset=utf-8"),
}
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; media-src data:; "
    "connect-src 'self'; frame-src 'self'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'"
)
_HEADERS = security_headers(CSP)


class BadRequest(Exception):
    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status


def static_file(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


class DevApp:
    """The ASGI app of one `baton dev` run."""

    def __init__(self, session: DevSession, guard: DevGuard, *, keepalive_s: float = KEEPALIVE_S) -> None:
        self.session = session
        self.guard = guard
        self.keepalive_s = keepalive_s
        self._static = {path: (static_file(name), kind) for path, (name, kind) in STATIC.items()}
        self._closing = asyncio.Event()

    def close(self) -> None:
        """End every open event stream: uvicorn then stops at once, with nothing to cancel (and no traceback)."""
        self._closing.set()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        path: str = scope["path"]
        method: str = scope["method"]
        static = path in self._static or path.startswith("/app/")
        headers = await admitted(self.guard, scope, send, static=static)
        if headers is None:
            return
        try:
            if static and method not in ("GET", "HEAD"):
                raise BadRequest(405, "static files are only read")
            if path.startswith("/app/"):
                await self._app_page(send, path.removeprefix("/app/"))
            elif static:
                body, kind = self._static[path]
                await reply(send, 200, kind, body)
            elif path == "/api/events" and method == "GET":
                await self._events(send, receive)
            elif path == "/api/exchange" and method == "GET":
                query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
                await reply_json(send, 200, {"messages": self.session.exchange(_one(query, "call"))})
            elif method == "POST" and path.startswith("/api/"):
                data = await json_body(headers, receive)
                await reply_json(send, 200, await self._post(path, data))
            else:
                raise BadRequest(404, f"no {method} {path} here")
        except BadRequest as exc:
            await reply_json(send, exc.status, {"error": str(exc)})
        except DevError as exc:
            await reply_json(send, 422, {"error": str(exc)})

    async def _post(self, path: str, data: dict[str, Any]) -> dict[str, Any]:
        session = self.session
        if path == "/api/call":
            kind = data.get("kind")
            if kind not in ("tool", "resource", "prompt"):
                raise BadRequest(400, "kind is tool, resource or prompt")
            return {"call": session.start_call(kind, text_field(data, "name"), form_pairs(data.get("values")))}
        if path == "/api/answer":
            action = text_field(data, "action")
            session.answer(text_field(data, "call"), text_field(data, "key"), action, form_pairs(data.get("values")))
            return {"ok": True}
        if path == "/api/stop":
            session.stop(text_field(data, "call"))
            return {"ok": True}
        if path == "/api/complete":
            ref = data.get("ref")
            context = data.get("context")
            if not isinstance(ref, dict):
                raise BadRequest(400, "ref is an object")
            context = {k: v for k, v in context.items() if isinstance(v, str)} if isinstance(context, dict) else {}
            values = await session.complete(ref, text_field(data, "name"), text_field(data, "value"), context)
            return {"values": values}
        if path == "/api/skill":
            return await session.load_skill(text_field(data, "uri"))

        if path == "/api/app/render":
            return await session.render_app(text_field(data, "call"))
        if path == "/api/app/call":
            params = data.get("params")
            if not isinstance(params, dict):
                raise BadRequest(400, "params is an object")
            return {"call": session.start_app_call(text_field(data, "from"), text_field(data, "method"), params)}
        if path == "/api/refresh":
            await session.refresh()
            return {"ok": True}
        raise BadRequest(404, f"no POST {path} here")

    async def _app_page(self, send: Send, page_id: str) -> None:
        """An app page with its own policy: sandboxed, framed only here, reaching only what it declared (P188)."""
        page = self.session.app_pages.page(page_id)
        if page is None:
            raise BadRequest(404, "no such app page: call its tool again")
        security = security_headers(page.policy, framed=True)
        await reply(send, 200, "text/html; charset=utf-8", page.html.encode(), security)

    async def _events(self, send: Send, receive: Receive) -> None:
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"application/x-ndjson"), *_HEADERS],
            }
        )
        gone: asyncio.Future[Any] = asyncio.ensure_future(_disconnected(receive))
        closing = asyncio.ensure_future(self._closing.wait())
        stream = aiter(self.session.events())
        pending: asyncio.Future[Any] | None = None  # kept across keep-alives: never cut mid-wait
        try:
            while not gone.done() and not closing.done():
                if pending is None:
                    pending = asyncio.ensure_future(anext(stream))
                done, _ = await asyncio.wait(
                    {pending, gone, closing}, timeout=self.keepalive_s, return_when=asyncio.FIRST_COMPLETED
                )
                if pending in done:
                    event, pending = pending.result(), None
                    await send({"type": "http.response.body", "body": orjson.dumps(event) + b"\n", "more_body": True})
                elif not gone.done() and not closing.done():
                    await send({"type": "http.response.body", "body": b"{}\n", "more_body": True})
        except OSError:
            pass  # the page went away mid-write
        finally:
            gone.cancel()
            closing.cancel()
            if pending is not None:
                pending.cancel()
                with contextlib.suppress(BaseException):
                    await pending
            with contextlib.suppress(Exception):
                await stream.aclose()  # type: ignore[attr-defined]
        with contextlib.suppress(Exception):
            await send({"type": "http.response.body", "body": b"", "more_body": False})


async def admitted(guard: DevGuard, scope: Scope, send: Send, *, static: bool) -> dict[str, str] | None:
    """The request's (lower-cased) headers if `page_access` admits it; else None, once its refusal was sent."""
    headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
    refusal = guard.check(headers, static=static)
    if refusal is not None:
        await reply_json(send, refusal.status, {"error": refusal.reason})
        return None
    return headers


async def _disconnected(receive: Receive) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass


async def json_body(headers: dict[str, str], receive: Receive) -> dict[str, Any]:
    if headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise BadRequest(415, "send JSON (Content-Type: application/json)")
    try:
        body = await read_body(receive, MAX_BODY)
    except ClientGone:
        raise BadRequest(400, "the request ended early") from None
    except BodyTooLarge:
        raise BadRequest(413, f"a request body is at most {MAX_BODY} bytes") from None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise BadRequest(400, f"the body is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise BadRequest(400, "the body is a JSON object")
    return data


def text_field(data: dict[str, Any], key: str) -> str:
    value = data.get(key, "")
    if not isinstance(value, str):
        raise BadRequest(400, f"{key} is a string")
    return value


def _one(query: dict[str, list[str]], key: str) -> str:
    values = query.get(key)
    if not values:
        raise BadRequest(400, f"name the {key}")
    return values[0]


def form_pairs(values: Any) -> dict[str, list[str]]:
    """A form's values as the page sends them: name -> a list of strings."""
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise BadRequest(400, "values is an object of lists of strings")
    out: dict[str, list[str]] = {}
    for name, given in values.items():
        items = given if isinstance(given, list) else [given]
        out[name] = [item for item in items if isinstance(item, str)]
    return out


async def reply(
    send: Send, status: int, kind: str, body: bytes, security: list[tuple[bytes, bytes]] = _HEADERS
) -> None:
    """A whole response: `security` is the page's headers (`baton.web.security_headers`)."""
    headers = [(b"content-type", kind.encode()), (b"content-length", str(len(body)).encode()), *security]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def reply_json(send: Send, status: int, data: dict[str, Any]) -> None:
    await reply(send, status, "application/json", orjson.dumps(data))
