"""What a 2025-11-25 server asks the client during a call, answered with the handlers MRTR asks use.

In a session the server sends its own requests (`elicitation/create`, `sampling/createMessage`,
`roots/list`, `ping`) while a client request waits, and the client answers each with a JSON-RPC
response (protocol.md P29, P34). `Inbound` turns one into that response: a form or URL question goes
to `on_form` / `on_url` and its reply is checked by `Question.answer`, exactly as for an MRTR input
request; sampling and roots go to their raw handlers. The host is asked one question at a time.
A method the client does not know, or an ask it did not declare, is answered with an error.

A mode declared without a handler (`Client(declare=...)`) is answered `cancel`, as in MRTR (protocol.md
P23). It also keeps the URL elicitations the server named (asked, or listed by a -32042 error), so that
`notifications/elicitation/complete` for one of them is recorded and one for any other id ignored,
and it cancels a handler when the server sends `notifications/cancelled` for its request.
When telemetry is on, each server request answered is a SERVER span (`observer`, protocol.md P63).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Collection
from typing import TYPE_CHECKING, Any

from ..forms import Accepted
from ..protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, METHOD_NOT_FOUND, McpError
from ..protocol.messages import error_response, result_response
from .callbacks import RawHandler
from .deadline import Deadlines
from .errors import MalformedQuestion
from .pacing import UrlPacing
from .questions import ElicitHandler, Question
from .tap import MessageTap

if TYPE_CHECKING:
    from .tracing import ClientObserver

log = logging.getLogger("baton.client")
SendReply = Callable[[dict[str, Any]], Awaitable[None]]
"""Sends a JSON-RPC response back to the server (a POST on HTTP, a line on stdio)."""

COMPLETE = "notifications/elicitation/complete"
CANCELLED = "notifications/cancelled"


class Inbound:
    """Answers one session's server requests; `server` is the server's name, shown with questions."""

    def __init__(
        self,
        on_form: ElicitHandler | None,
        on_url: ElicitHandler | None,
        on_sampling: RawHandler | None,
        on_roots: RawHandler | None,
        *,
        declared: Collection[str] = (),
        observer: ClientObserver | None = None,
        tap: MessageTap | None = None,
        deadlines: Deadlines | None = None,
    ) -> None:
        self.observer = observer
        self.tap = tap
        self.deadlines = deadlines or Deadlines(float("inf"))  # the client's, paused while a handler runs
        self.on_form, self.on_url = on_form, on_url
        self.declared = declared
        self.on_sampling, self.on_roots = on_sampling, on_roots
        self.server: str | None = None
        self.urls: dict[str, bool] = {}  # elicitationId -> the server said the flow is complete
        self._asking = asyncio.Lock()
        self.one_at_a_time = True
        """False: each question reaches its handler at once (`baton bridge --serve-http`, whose questions go to
        different clients, one of which may never answer); True: one at a time, as a person reads them."""
        self._running: dict[Any, asyncio.Task[None]] = {}

    # -- requests ------------------------------------------------------------------------------------------

    def take(self, message: dict[str, Any], reply: SendReply) -> asyncio.Task[None] | None:
        """Answer a server request in a task of its own, so that the stream it came on keeps being read.

        The task is returned so that the client request whose stream carried the ask can `drop` it when
        that request ends: the server's question belongs to it, and the host must not be left asking.
        """
        rid = message.get("id")
        if not isinstance(rid, (str, int)):
            return None  # not a JSON-RPC request id: nothing could be answered
        task = asyncio.ensure_future(self._answer_and_reply(message, reply))
        self._running[rid] = task
        task.add_done_callback(lambda done: self._forget(rid, done))
        return task

    @staticmethod
    def drop(tasks: Collection[asyncio.Task[None]]) -> None:
        """Stop the handlers of asks that came with a client request that has ended (answered, cancelled,
        timed out or failed): once it has, nobody reads the server's cancellation of them (protocol.md P34)."""
        for task in tasks:
            if not task.done():
                task.cancel()

    def _forget(self, rid: Any, task: asyncio.Task[None]) -> None:
        if self._running.get(rid) is task:
            del self._running[rid]

    async def _answer_and_reply(self, message: dict[str, Any], reply: SendReply) -> None:
        if self.tap is not None:
            self.tap("received", message)
        response = await self.answer(message)
        if self.tap is not None:
            self.tap("sent", response)
        try:
            await reply(response)
        except Exception as exc:  # the server is gone or refused it: nothing more to do for this ask
            log.warning("could not send the answer to the server's %s: %s", message.get("method"), exc)

    async def answer(self, message: dict[str, Any]) -> dict[str, Any]:
        """The JSON-RPC response to one server request (a result, or an error the server can read)."""
        if self.observer is not None:
            return await self.observer.answering(message, self._answer)
        return await self._answer(message)

    async def _answer(self, message: dict[str, Any]) -> dict[str, Any]:
        rid = message.get("id")
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        try:
            if method == "ping":
                result: dict[str, Any] = {}
            else:
                async with self._asking if self.one_at_a_time else contextlib.nullcontext():
                    result = await self._ask(method, params, rid)
        except McpError as exc:
            return error_response(rid, exc)
        except MalformedQuestion as exc:
            return error_response(rid, McpError(INVALID_PARAMS, str(exc)))
        except Exception as exc:  # a handler failed: the server must still get an answer
            log.warning("answering the server's %s failed: %r", method, exc)
            return error_response(rid, McpError(INTERNAL_ERROR, f"the client could not answer {method}: {exc}"))
        return result_response(rid, result)

    async def _ask(self, method: Any, params: dict[str, Any], rid: Any) -> dict[str, Any]:
        if method == "elicitation/create":
            return await self._elicit(params, rid)
        if method == "sampling/createMessage" and self.on_sampling is not None:
            return await self.deadlines.answering(self.on_sampling(params), limited=False)
        if method == "roots/list" and self.on_roots is not None:
            return await self.deadlines.answering(self.on_roots(params), limited=False)
        if method in ("sampling/createMessage", "roots/list"):
            raise McpError(METHOD_NOT_FOUND, f"this client did not declare {method.partition('/')[0]}")
        raise McpError(METHOD_NOT_FOUND, f"Method not found: {method}")

    async def _elicit(self, params: dict[str, Any], rid: Any) -> dict[str, Any]:
        url_id = params.get("elicitationId") if params.get("mode") == "url" else None
        key = url_id if isinstance(url_id, str) else str(rid)
        question = Question.from_params(key, params, self.server)
        handler = self.on_url if question.mode == "url" else self.on_form
        if handler is None:
            if question.mode in self.declared:  # declared for step mode: nobody here to answer
                return {"action": "cancel"}
            # 2025-11-25 names -32602 for a mode the client did not declare
            raise McpError(INVALID_PARAMS, f"this client did not declare elicitation.{question.mode}")
        if isinstance(url_id, str):
            self.urls.setdefault(url_id, False)
        reply = await self.deadlines.answering(handler(question))
        return question.answer(reply)

    # -- -32042 ----------------------------------------------------------------------------------------------

    async def open_urls(self, data: Any, pacing: UrlPacing) -> bool:
        """Show the URL elicitations of a -32042 error; True only if the user accepted every one.

        A URL accepted before in the same request is asked again only after `pacing`'s pause.
        """
        asks = data.get("elicitations") if isinstance(data, dict) else None
        if not isinstance(asks, list) or not asks or self.on_url is None:
            return False
        await pacing.wait(p["url"] for p in asks if isinstance(p, dict) and isinstance(p.get("url"), str))
        for params in asks:
            if not isinstance(params, dict) or params.get("mode", "url") != "url":
                return False
            url_id = params.get("elicitationId")
            key = url_id if isinstance(url_id, str) else "url"
            question = Question.from_params(key, {**params, "mode": "url"}, self.server)
            if isinstance(url_id, str):
                self.urls.setdefault(url_id, False)
            async with self._asking:
                reply = await self.deadlines.answering(self.on_url(question))
            if not isinstance(reply, Accepted):
                return False
            pacing.accepted(question.url)
        return True

    # -- notifications ---------------------------------------------------------------------------------------

    def notice(self, message: dict[str, Any]) -> bool:
        """Handle a notification meant for this layer; False: it is for the caller (progress, log)."""
        if self.tap is not None:
            self.tap("received", message)
        method = message.get("method")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if method == COMPLETE:
            url_id = params.get("elicitationId")
            if isinstance(url_id, str) and url_id in self.urls:  # unknown ids are ignored (MCP elicitation)
                self.urls[url_id] = True
            return True
        if method == CANCELLED:
            task = self._running.get(params.get("requestId"))
            if task is not None:  # the server gave up on its ask: stop asking, send nothing
                task.cancel()
            return True
        return False

    async def close(self) -> None:
        """Stop every handler still running (the session is ending)."""
        tasks = list(self._running.values())
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(BaseException):
                await task
