"""Sending one JSON-RPC request over Streamable HTTP: standard headers out, JSON or SSE back."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from ..protocol.constants import NAME_PARAM
from ..protocol.headers import encode_value
from .callbacks import Notify
from .http11 import Disconnected, HttpError, Pool, ProtocolError, Response, Url, encode_headers

if TYPE_CHECKING:
    from .oauth import OAuth, ProgramLogin


_LINE_END = re.compile(rb"\r\n|\r|\n")
_STANDARD = (("Content-Type", "application/json"), ("Accept", "application/json, text/event-stream"))
LEG_S = 60.0  # the bound of one exchange the transport makes where no caller's deadline runs (protocol.md P90)


class HttpTransport:
    """One MCP endpoint URL and a pool of keep-alive connections to it. `timeout` bounds each request (None: the
    caller bounds it, as the Client does with its deadline_s)."""

    def __init__(
        self,
        url: str,
        *,
        timeout: float | None = LEG_S,
        headers: dict[str, str] | None = None,
        auth: OAuth | ProgramLogin | None = None,
    ) -> None:
        self.url = url
        self.timeout = timeout
        self.extra_headers = dict(headers or {})
        self.target = Url.parse(url)
        given_auth = self.target.authorization or any(k.lower() == "authorization" for k in self.extra_headers)
        if auth is not None and given_auth:
            raise ValueError("auth= logs in with OAuth: give no Authorization header and no credentials in the URL")
        if auth is None:
            self.pool = Pool()
        else:  # the login's modules (and httpx) load only for a client given auth=
            from .oauth.pool import auth_pool  # noqa: PLC0415 (the login (and httpx) load only for a client given auth=)

            self.pool = auth_pool(auth, url)  # the pool adds the token, and logs in when the server asks
        # Extra headers replace the standard ones of the same name, except Mcp-Name and Mcp-Param-*.
        extra = [(k, v) for k, v in self.extra_headers.items() if not _per_message(k)]
        given = {k.lower() for k, _ in extra}
        basic = self.target.authorization
        fixed = [(k, v) for k, v in _STANDARD if k.lower() not in given]
        if basic is not None and "authorization" not in given:
            fixed.append(("Authorization", basic))
        self._fixed = encode_headers(fixed + extra)
        self._send_version = "mcp-protocol-version" not in given
        self._send_method = "mcp-method" not in given

    async def close(self) -> None:
        await self.pool.close()

    async def request(
        self, message: dict[str, Any], version: str, notify: Notify | None, param_headers: dict[str, str]
    ) -> dict[str, Any]:
        """POST one request; returns its JSON-RPC response (notifications on the way go to `notify`)."""
        method = message["method"]
        if notify is not None:
            message["params"].setdefault("_meta", {})["progressToken"] = f"p{message['id']}"
        headers = []
        if self._send_version:
            headers.append(("MCP-Protocol-Version", version))
        if self._send_method:
            headers.append(("Mcp-Method", method))
        member = NAME_PARAM.get(method)
        if member is not None:
            headers.append(("Mcp-Name", encode_value(str(message["params"].get(member, "")))))
        for name, value in param_headers.items():
            headers.append((f"Mcp-Param-{name}", encode_value(value)))
        head = self._fixed + encode_headers(headers)
        body = orjson.dumps(message)
        async with self.pool.limit(self.timeout):
            resp = await self.pool.send(self.target, "POST", head, body)
            try:
                if resp.headers.get("content-type", "").lower().startswith("text/event-stream"):
                    reply = await _read_sse(resp, message.get("id"), notify)
                else:
                    reply = _decode(resp.status, await resp.read())
            except BaseException:
                resp.close()
                raise
            resp.release()
        return reply


def _per_message(name: str) -> bool:
    lower = name.lower()
    return lower == "mcp-name" or lower.startswith("mcp-param-")


def _decode(status: int, body: bytes) -> dict[str, Any]:
    """A JSON body: a JSON-RPC response is returned as is (errors too); anything unusable raises HttpError."""
    if not body:
        raise HttpError(status, f"HTTP {status} with an empty body")
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        if status == 404:  # a web server, but no MCP endpoint at this path (protocol.md P91)
            raise HttpError(
                status, f"no MCP endpoint at this address (HTTP 404); the server says: {_excerpt(body)}"
            ) from None
        raise HttpError(status, f"HTTP {status}: the body is not JSON: {_excerpt(body)}") from None
    ok = 200 <= status < 300
    if not isinstance(data, dict):
        if ok:
            return {}
        raise HttpError(status, f"HTTP {status}: the body is not a JSON-RPC response: {_excerpt(body)}")
    if not ok and "error" not in data:
        raise HttpError(status, f"HTTP {status}: the body is not a JSON-RPC error: {_excerpt(body)}")
    return data


def _excerpt(body: bytes) -> str:
    text = body[:200].decode("utf-8", "replace")
    return repr(text + "…" if len(body) > 200 else text)


def sse_message(data: bytes, status: int) -> dict[str, Any] | None:
    """The JSON-RPC message one SSE event carries; None when it is not an object, `ProtocolError` when
    it is not JSON (both eras' readers)."""
    try:
        message = orjson.loads(data)
    except orjson.JSONDecodeError:
        raise ProtocolError(f"HTTP {status}: an SSE event is not JSON: {_excerpt(data)}") from None
    return message if isinstance(message, dict) else None


async def read_body(resp: Response) -> bytes:
    """The whole body; the connection goes back to the pool, or is closed if reading failed."""
    try:
        body = await resp.read()
    except BaseException:
        resp.close()
        raise
    resp.release()
    return body


async def _read_sse(resp: Response, rid: Any, notify: Notify | None) -> dict[str, Any]:
    events = SseDecoder()
    while chunk := await resp.next_chunk():
        for data in events.feed(chunk):
            message = sse_message(data, resp.status)
            if message is None:
                continue
            if "id" in message:
                if message["id"] == rid and ("result" in message or "error" in message):
                    return message
            elif "method" in message and notify is not None:
                await notify(message)
    raise Disconnected("the SSE stream ended before the response arrived")


class SseDecoder:
    """Server-sent events from byte chunks: the data of each `message` event, its lines joined with \\n.

    Comments are skipped, and so is an event with empty data (a 2025-11-25 priming event); an event
    cut off by the end of the stream is dropped. `last_id` is the last `id` field seen and `retry_ms`
    the last valid `retry` field, which a 2025-11-25 client needs to resume a stream (protocol.md P34).
    """

    def __init__(self, last_id: bytes | None = None, retry_ms: int | None = None) -> None:
        self.last_id = last_id
        self.retry_ms = retry_ms
        self._partial: list[bytes] = []  # the start of a line not yet ended
        self._data: list[bytes] = []
        self._event = b""
        self._started = False
        self._after_cr = False  # the last chunk ended with CR: a LF starting the next one belongs to it

    def feed(self, chunk: bytes) -> list[bytes]:
        if not self._started:
            self._started = True
            if chunk.startswith(b"\xef\xbb\xbf"):
                chunk = chunk[3:]
        if self._after_cr:
            self._after_cr = False
            if chunk[:1] == b"\n":
                chunk = chunk[1:]
        if b"\n" not in chunk and b"\r" not in chunk:
            if chunk:
                self._partial.append(chunk)
            return []
        if self._partial:
            self._partial.append(chunk)
            chunk = b"".join(self._partial)
            self._partial = []
        self._after_cr = chunk.endswith(b"\r")
        lines = _LINE_END.split(chunk)
        last = lines.pop()
        if last:
            self._partial.append(last)
        events = []
        for line in lines:
            if not line:
                if self._data and self._event in (b"", b"message") and (len(self._data) > 1 or self._data[0]):
                    events.append(b"\n".join(self._data))
                self._data = []
                self._event = b""
            elif line[0] != 0x3A:  # not a ":" comment
                field, colon, value = line.partition(b":")
                if colon and value[:1] == b" ":
                    value = value[1:]
                if field == b"data":
                    self._data.append(value)
                elif field == b"event":
                    self._event = value
                elif field == b"id":
                    if b"\0" not in value:
                        self.last_id = value
                elif field == b"retry" and value.isdigit():
                    self.retry_ms = int(value)
        return events


__all__ = ["HttpError", "HttpTransport", "SseDecoder"]
