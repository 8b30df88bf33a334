"""The bridge's own page for the questions a host cannot show (protocol.md P160).

A host that declared no elicitation, or not the mode a question needs, gets no `elicitation/create`:
the bridge asks the person itself, on a page it serves on 127.0.0.1 (a free port, opened at the first
question and kept until the bridge ends), admitted by `baton dev`'s `DevGuard` (Host, Origin, the
run's token in the printed address's fragment). Each question is announced by one line on stderr with
that address (a host's log shows it; a headless host's user opens it by hand) and, unless
`--no-browser` or a page already follows the questions, the browser is opened at it.

The page reads the waiting questions from `GET /api/questions` and answers with `POST /api/answer`
(`{id, action, values}`). A form is the markup of `baton.render.html.form_html` (the renderer of
`baton dev`), its submitted values read back by `form_values` and checked by the `Client`'s own
`Question.answer` (an answer that does not fit is a 422 with the reason, and the question stays open).
A URL-mode question shows the link (if Baton's URL check passes it) with Done and Decline. A question
nobody answers within the ask timeout is cancelled; one whose call ends first disappears from the page.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import webbrowser
from dataclasses import dataclass
from importlib import resources
from typing import Any

from ..client import InvalidReply, Question
from ..devui.app import (
    BadRequest,
    admitted,
    form_pairs,
    json_body,
    reply,
    reply_json,
    static_file,
    text_field,
)
from ..devui.page_access import DevGuard
from ..devui.run import bind
from ..forms import Accepted, Answer, Cancelled, Declined
from ..forms.url_safety import check_url
from ..protocol.asgi import Receive, Scope, Send
from ..render.html import form_html, form_values
from ..web import Started, lifespan, started

log = logging.getLogger("baton.bridge")
FOLLOWED_S = 5.0
"""A page that read the questions this recently is open: a new question opens no second browser tab."""
BUTTONS = (("accept", "Submit"), ("decline", "Decline"), ("cancel", "Cancel"))


@dataclass(slots=True)
class PageQuestion:
    question: Question
    future: asyncio.Future[Answer[Any]]
    shown: dict[str, Any]


class LoopbackAskPage:
    """The loopback page of one bridge run; `ask` is the handler of the questions no host can show."""

    def __init__(self, *, open_browser: bool, timeout_s: float) -> None:
        self.open_browser = open_browser
        self.timeout_s = timeout_s
        self.guard: DevGuard | None = None
        self._started: Started | None = None
        self._waiting: dict[str, PageQuestion] = {}
        self._followed = -FOLLOWED_S
        self._static = {
            "/": (static_file_of("ask.html"), "text/html; charset=utf-8"),
            "/static/ask.js": (static_file_of("ask.js"), "text/javascript; charset=utf-8"),
            "/static/dom.js": (static_file("dom.js"), "text/javascript; charset=utf-8"),
            "/static/app.css": (static_file("app.css"), "text/css; charset=utf-8"),
            "/favicon.ico": (static_file("favicon.svg"), "image/svg+xml"),
        }

    async def ask(self, question: Question) -> Answer[Any]:
        """The person's answer on the page; Cancelled when none comes within the timeout."""
        address = await self._start()
        qid = secrets.token_urlsafe(9)
        future: asyncio.Future[Answer[Any]] = asyncio.get_running_loop().create_future()
        self._waiting[qid] = PageQuestion(question, future, _shown(qid, question))
        log.warning(
            "the server asks a question the host cannot show (%s mode): answer it at %s", question.mode, address
        )
        loop = asyncio.get_running_loop()
        if self.open_browser and loop.time() - self._followed > FOLLOWED_S:
            await asyncio.to_thread(webbrowser.open, address)
        try:
            return await asyncio.wait_for(future, self.timeout_s)
        except TimeoutError:
            log.warning("nobody answered question %r in %g s: cancelled", question.key, self.timeout_s)
            return Cancelled()
        finally:
            self._waiting.pop(qid, None)

    async def _start(self) -> str:
        if self._started is None:
            sock = bind(0)
            self.guard = DevGuard(sock.getsockname()[1], name="baton bridge")
            self._started = await started(self, sock, graceful_s=1)  # raises why it could not start
        assert self.guard is not None
        return self.guard.address

    async def close(self) -> None:
        if self._started is not None:
            self._started.stop()
            with contextlib.suppress(Exception):
                await self._started.serving

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http" or self.guard is None:
            return
        path, method = scope["path"], scope["method"]
        static = path in self._static
        headers = await admitted(self.guard, scope, send, static=static)
        if headers is None:
            return
        try:
            if static and method in ("GET", "HEAD"):
                body, kind = self._static[path]
                await reply(send, 200, kind, body)
            elif path == "/api/questions" and method == "GET":
                self._followed = asyncio.get_running_loop().time()
                await reply_json(send, 200, {"questions": [w.shown for w in self._waiting.values()]})
            elif path == "/api/answer" and method == "POST":
                data = await json_body(headers, receive)
                self.answer(text_field(data, "id"), text_field(data, "action"), form_pairs(data.get("values")))
                await reply_json(send, 200, {"ok": True})
            else:
                raise BadRequest(404, f"no {method} {path} here")
        except BadRequest as exc:
            await reply_json(send, exc.status, {"error": str(exc)})

    def answer(self, qid: str, action: str, pairs: dict[str, list[str]]) -> None:
        """Answer a waiting question; BadRequest 422 (the question stays open) when the answer does not fit."""
        waiting = self._waiting.get(qid)
        if waiting is None or waiting.future.done():
            raise BadRequest(422, "that question is no longer waiting (answered, withdrawn or timed out)")
        given: Answer[Any]
        if action == "decline":
            given = Declined()
        elif action == "cancel":
            given = Cancelled()
        elif action == "accept":
            form = waiting.question.form
            given = Accepted(form_values(form, pairs) if form is not None else None)
            try:
                waiting.question.answer(given)  # the client's own check, whatever the page checked
            except InvalidReply as exc:
                raise BadRequest(422, str(exc)) from None
        else:
            raise BadRequest(400, f"an answer is accept, decline or cancel, not {action!r}")
        waiting.future.set_result(given)


def static_file_of(name: str) -> bytes:
    return (resources.files(__package__) / "static" / name).read_bytes()


def _shown(qid: str, question: Question) -> dict[str, Any]:
    """A question as the page shows it: its message, and its form's markup or its URL (if safe to open)."""
    shown: dict[str, Any] = {"id": qid, "mode": question.mode, "message": question.message}
    if question.form is not None:
        shown["form"] = form_html(question.form, prefix=f"q-{qid}", label=question.message, buttons=BUTTONS)
    else:
        report = check_url(question.url or "", allow_http_loopback=True)
        shown["url"] = question.url if report.ok else None
        shown["site"] = report.registrable_domain or report.display_host
        shown["refused"] = [issue.message for issue in report.errors]
    return shown
