"""HTTP/1.1 responses from bytes, with no sockets: a reader fed what arrives, giving back heads, body pieces, ends.

The parsing is httptools' (llhttp, the parser under uvicorn). What stays here is what that parser does
not do for a client: the limits on a head, a chunk-size line and the trailers (llhttp has none), the
end of a body that runs to the close (httptools cannot be told of EOF), responses to HEAD (llhttp
cannot be told that a response has no body), and this client's refusals (101, a Content-Encoding or
a transfer coding it would have to decode).
"""

from __future__ import annotations

from httptools import HttpParserCallbackError, HttpParserError, HttpParserUpgrade, HttpResponseParser
from httptools.parser.errors import HttpParserInvalidStatusError

MAX_HEAD = 64 * 1024  # the status line and headers of one response, and its trailers
MAX_LINE = 8 * 1024  # one chunk-size line, extensions included
# Where the reader is, how many bytes may come without the parser making progress, and what to say past that.
_HEAD_LIMIT = (MAX_HEAD, "the response head is larger than 64 KiB")
_LINE_LIMIT = (MAX_LINE, "a chunk-size line is longer than 8 KiB")
_TRAILER_LIMIT = (MAX_HEAD, "the trailer fields are larger than 64 KiB")
_SWITCHED = "the server switched protocols, which was never asked for"


class ProtocolError(ConnectionError):
    """The server's response is not valid HTTP/1.1 (or uses something this client does not support)."""


class Head:
    """The status and header fields of a final (non-1xx) response.

    `headers` has lowercase names, values stripped of surrounding blanks, repeated fields joined with ", ".
    """

    __slots__ = ("headers", "status")

    def __init__(self, status: int, headers: dict[str, str]) -> None:
        self.status = status
        self.headers = headers

    def __repr__(self) -> str:
        return f"Head({self.status}, {self.headers!r})"


class End:
    """The end of a response; `keep_alive`: the connection may carry another request."""

    __slots__ = ("keep_alive",)

    def __init__(self, keep_alive: bool) -> None:
        self.keep_alive = keep_alive

    def __repr__(self) -> str:
        return f"End(keep_alive={self.keep_alive})"


END_KEEP_ALIVE = End(True)
END_CLOSE = End(False)

Event = Head | bytes | End  # bytes: a piece of the body, passed on as soon as it is parsed


class ResponseReader:
    """Parses the responses of one connection, fed its bytes in order; knows nothing of sockets.

    `feed(data)` returns the events that `data` completes: a `Head` per final response (1xx responses
    are skipped), body pieces as `bytes`, an `End` per response. Invalid HTTP raises `ProtocolError`,
    and so does every later call. An error in bytes after a response that ended in the same `feed`
    does not take that response away: the events are returned, and `idle` is false from then on.
    """

    __slots__ = (
        "_error",
        "_events",
        "_head_only",
        "_idle",
        "_in_head",
        "_limit",
        "_parser",
        "_raw",
        "_stall",
        "_too_long",
        "_until_close",
        "_waiting",
    )

    def __init__(self) -> None:
        self._parser = HttpResponseParser(self)
        self._events: list[Event] = []
        self._raw: list[tuple[bytes, bytes]] = []  # the header (or trailer) fields of the current response
        self._head_only = False
        self._idle = True  # no byte of a response since the last End
        self._in_head = True
        self._until_close = False  # the body of the current response ends when the connection closes
        self._waiting = False  # a head is in; its End has not come
        self._error: ProtocolError | None = None
        self._stall = 0  # bytes fed since the parser last made visible progress
        self._limit, self._too_long = _HEAD_LIMIT  # the bytes allowed where the parser is now, and why

    def expect(self, *, head_only: bool) -> None:
        """Say what the next response answers: `head_only` for a HEAD request (its head is the whole response)."""
        self._head_only = head_only

    @property
    def idle(self) -> bool:
        """No byte of a further response has come since the last End, and nothing went wrong."""
        return self._idle and self._error is None

    def feed(self, data: bytes) -> list[Event]:
        """The events that `data` completes, in order."""
        if self._error is not None:
            raise self._error
        events: list[Event] = []
        self._events = events
        self._stall += len(data)
        try:
            if self._head_only:
                self._feed_head_only(data)
            else:
                self._parser.feed_data(data)
        except HttpParserCallbackError as exc:
            cause = exc.__context__
            self._error = cause if isinstance(cause, ProtocolError) else self._invalid(exc)
        except (HttpParserError, HttpParserUpgrade) as exc:
            self._error = self._invalid(exc)
        else:
            if self._stall > self._limit:
                self._error = ProtocolError(self._too_long)
            else:
                return events
        if any(event.__class__ is End for event in events):  # the error is in bytes after a whole response
            return events
        raise self._error

    def eof(self) -> End | None:
        """The connection closed: the End of a body that runs to the close, else None (the response, if any, is cut)."""
        if self._waiting and self._until_close and self._error is None:
            self._waiting = False
            self._error = ProtocolError("the connection is closed")
            return END_CLOSE
        return None

    # -- HEAD ------------------------------------------------------------------------------------------

    def _feed_head_only(self, data: bytes) -> None:
        """Line by line, so that the head is known to end where a piece ends; what follows it is not parsed.

        llhttp would read the body that the Content-Length announces; the response to HEAD has none.
        """
        pieces = data.splitlines(keepends=True)
        for i, piece in enumerate(pieces):
            self._parser.feed_data(piece)
            if not self._head_only:  # the head came: what follows would be a response nobody asked for
                self._parser = HttpResponseParser(self)
                if i + 1 < len(pieces):
                    self._idle = False
                    self._error = ProtocolError("bytes after the response to HEAD")
                return

    # -- httptools callbacks ---------------------------------------------------------------------------

    def on_message_begin(self) -> None:
        self._idle = False
        self._in_head = True
        self._raw = []

    def on_header(self, name: bytes, value: bytes) -> None:
        self._raw.append((name, value))

    def on_headers_complete(self) -> None:
        self._stall = 0
        self._in_head = False
        status = self._parser.get_status_code()
        if status < 200:
            if status == 101:
                raise ProtocolError(_SWITCHED)
            # informational (100 Continue, 103 Early Hints): the final response follows
            self._limit, self._too_long = _HEAD_LIMIT
            return
        headers: dict[str, str] = {}
        for name, value in self._raw:
            key = name.decode("latin-1").lower()
            text = value.decode("latin-1").strip(" \t")
            old = headers.get(key)
            headers[key] = text if old is None else f"{old}, {text}"
        self._raw = []  # trailers, if any, go to a fresh list and are ignored
        coding = headers.get("content-encoding")
        if coding is not None and coding.lower() not in ("", "identity"):
            raise ProtocolError(f"unsupported Content-Encoding {coding!r} (none was asked for)")
        te = headers.get("transfer-encoding")
        chunked = False
        if te is not None:
            codings = [c.strip().lower() for c in te.split(",")]
            chunked = codings[-1] == "chunked"
            if chunked and len(codings) > 1:
                raise ProtocolError(f"unsupported Transfer-Encoding {te!r}")
        self._events.append(Head(status, headers))
        self._waiting = True
        self._limit, self._too_long = _LINE_LIMIT
        if self._head_only:  # llhttp wants a body when there is no framing: such a connection is not reused
            self._head_only = False
            self._finish(self._parser.should_keep_alive())
            return
        self._until_close = not chunked and "content-length" not in headers and status not in (204, 304)

    def on_body(self, body: bytes) -> None:
        self._stall = 0
        self._events.append(body)

    def on_chunk_header(self) -> None:
        self._stall = 0
        self._limit, self._too_long = _TRAILER_LIMIT

    def on_chunk_complete(self) -> None:
        self._stall = 0
        self._limit, self._too_long = _LINE_LIMIT

    def on_message_complete(self) -> None:
        self._stall = 0
        self._limit, self._too_long = _HEAD_LIMIT
        if self._waiting:
            self._finish(self._parser.should_keep_alive())

    def _finish(self, keep_alive: bool) -> None:
        self._waiting = False
        self._until_close = False
        self._idle = True
        self._events.append(END_KEEP_ALIVE if keep_alive else END_CLOSE)

    def _invalid(self, exc: Exception) -> ProtocolError:
        reason = str(exc) or type(exc).__name__
        if isinstance(exc, HttpParserUpgrade):
            return ProtocolError(_SWITCHED)
        if isinstance(exc, HttpParserInvalidStatusError) or (
            self._in_head and not self._raw and self._parser.get_status_code() == 0
        ):
            return ProtocolError(f"not an HTTP/1.1 status line ({reason})")
        where = "head" if self._in_head else "body"
        return ProtocolError(f"invalid HTTP/1.1 response {where} ({reason})")


__all__ = [
    "END_CLOSE",
    "END_KEEP_ALIVE",
    "MAX_HEAD",
    "MAX_LINE",
    "End",
    "Event",
    "Head",
    "ProtocolError",
    "ResponseReader",
]
