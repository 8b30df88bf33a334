"""The client's HTTP/1.1 response reader and its SSE parser, fed the input's bytes in the pieces it chooses:
the first byte sets the piece size and whether the request was HEAD; SSE events become JSON-RPC messages."""

from __future__ import annotations

from baton.client.http_response import ProtocolError, ResponseReader
from baton.client.http_transport import SseDecoder, sse_message

from ..harness import Target


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)] or [b""]


def one(data: bytes) -> None:
    if not data:
        return
    control, body = data[0], data[1:]
    size = (control & 0x3F) + 1
    reader = ResponseReader()
    events = SseDecoder()
    reader.expect(head_only=bool(control & 0x40))
    try:
        for piece in pieces(body, size):
            reader.feed(piece)
        reader.eof()
    finally:  # the SSE parser reads whatever a body holds, valid HTTP or not
        for piece in pieces(body, size):
            for event in events.feed(piece):
                sse_message(event, 200)


TARGET = Target("http_response", "the client's HTTP/1.1 response reader and SSE parser", one, (ProtocolError,))
