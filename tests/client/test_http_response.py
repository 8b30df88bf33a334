"""The response reader (`baton.client.http_response`) fed bytes directly, with no sockets.

Every response is also fed split at every byte boundary and one byte at a time: the events must not
depend on where the reads fall. The rest covers framing (Content-Length, chunked with extensions and
trailers, bodies that end at the close), 1xx, HEAD, keep-alive, the size limits and invalid HTTP.
"""

from __future__ import annotations

from collections.abc import Iterable

import pytest

from baton.client.http_response import MAX_HEAD, MAX_LINE, End, Event, Head, ProtocolError, ResponseReader

JSON = b'{"jsonrpc":"2.0","id":1,"result":{"text":"ok"}}'
FIXED = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (len(JSON), JSON)
CHUNKED = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"
    b'5;name=value;quoted="a b"\r\nhello\r\n'
    b"1A\r\n, chunked world, in 3 bits\r\n"
    b"0;last\r\nX-Checksum: abc\r\nX-Other: d\r\n\r\n"
)


def feed_all(reader: ResponseReader, pieces: Iterable[bytes]) -> list[Event]:
    events: list[Event] = []
    for piece in pieces:
        events += reader.feed(piece)
    return events


def splits(data: bytes) -> Iterable[list[bytes]]:
    """`data` whole, cut in two at every boundary, and one byte at a time."""
    yield [data]
    for i in range(1, len(data)):
        yield [data[:i], data[i:]]
    yield [data[i : i + 1] for i in range(len(data))]


def summary(events: list[Event]) -> list[object]:
    """Heads as (status, headers), adjacent body pieces joined, ends as ("end", keep_alive)."""
    out: list[object] = []
    for event in events:
        if isinstance(event, bytes):
            if out and isinstance(out[-1], bytes):
                out[-1] += event
            else:
                out.append(event)
        elif isinstance(event, Head):
            out.append((event.status, event.headers))
        else:
            out.append(("end", event.keep_alive))
    return out


def parse(data: bytes, *, head_only: bool = False) -> list[object]:
    reader = ResponseReader()
    reader.expect(head_only=head_only)
    return summary(reader.feed(data))


# -- framing, wherever the reads fall ----------------------------------------------------------------


def test_content_length_at_every_split() -> None:
    want = [(200, {"content-type": "application/json", "content-length": str(len(JSON))}), JSON, ("end", True)]
    for pieces in splits(FIXED):
        reader = ResponseReader()
        assert summary(feed_all(reader, pieces)) == want, pieces
        assert reader.idle


def test_chunked_with_extensions_and_trailers_at_every_split() -> None:
    head = {"content-type": "text/event-stream", "transfer-encoding": "chunked"}
    want = [(200, head), b"hello, chunked world, in 3 bits", ("end", True)]
    for pieces in splits(CHUNKED):
        reader = ResponseReader()
        assert summary(feed_all(reader, pieces)) == want, pieces  # the trailers are read and dropped
        assert reader.idle


def test_body_pieces_come_as_they_arrive() -> None:
    reader = ResponseReader()
    cut = CHUNKED.index(b"hello") + 3
    first = reader.feed(CHUNKED[:cut])
    assert summary(first)[1:] == [b"hel"]  # the head, then what there is of the body: no End yet
    assert not reader.idle
    assert summary(reader.feed(CHUNKED[cut:]))[-1] == ("end", True)


def test_two_responses_in_one_buffer() -> None:
    second = b"HTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\n{}"
    events = parse(FIXED + second)
    assert events[1:3] == [JSON, ("end", True)]
    assert events[3:] == [(404, {"content-length": "2"}), b"{}", ("end", True)]


def test_bytes_of_a_next_response_after_an_end_leave_the_reader_busy() -> None:
    reader = ResponseReader()
    events = reader.feed(FIXED + b"HTTP/1.1 2")
    assert isinstance(events[-1], End) and events[-1].keep_alive
    assert not reader.idle  # a connection with such bytes must not be reused
    reader = ResponseReader()
    reader.feed(FIXED + b"\r\n")  # blank lines between responses are not a response
    assert reader.idle


@pytest.mark.parametrize("cut", [0, 5, 20])
def test_body_that_ends_at_the_close(cut: int) -> None:
    data = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n" + JSON
    reader = ResponseReader()
    head_end = data.index(b"\r\n\r\n") + 4
    events = feed_all(reader, [data[: head_end + cut], data[head_end + cut :]])
    assert not any(isinstance(event, End) for event in events)
    assert b"".join(event for event in events if isinstance(event, bytes)) == JSON
    assert reader.eof() is not None and reader.eof() is None  # one End, not keep-alive
    assert not reader.idle


@pytest.mark.parametrize(
    "data",
    [
        b"HTTP/1.0 200 OK\r\n\r\nold",  # HTTP/1.0 without a length
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw",  # chunked not last: to the close
    ],
    ids=["http10", "te-not-chunked"],
)
def test_other_bodies_that_end_at_the_close(data: bytes) -> None:
    reader = ResponseReader()
    events = summary(reader.feed(data))
    assert events[1] == data.rpartition(b"\r\n\r\n")[2]
    end = reader.eof()
    assert end is not None and not end.keep_alive


@pytest.mark.parametrize(
    "data",
    [
        b"",
        b"HTTP/1.1 200 OK\r\nContent-Le",
        FIXED[:-3],
        CHUNKED[:-5],
        b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 10\r\n\r\nshort",
        FIXED,
    ],
    ids=["nothing", "in-head", "short-length", "short-chunked", "close-short", "complete"],
)
def test_the_close_ends_no_framed_body(data: bytes) -> None:
    reader = ResponseReader()
    reader.feed(data)
    assert reader.eof() is None


# -- 1xx, HEAD, bodiless statuses ----------------------------------------------------------------------


def test_informational_responses_are_skipped() -> None:
    early = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"
    for pieces in splits(early + FIXED):
        reader = ResponseReader()
        events = summary(feed_all(reader, pieces))
        assert [e[0] for e in events if isinstance(e, tuple)] == [200, "end"]  # one Head: the final one
        assert JSON in events


def test_101_is_refused() -> None:
    with pytest.raises(ProtocolError, match="switched protocols"):
        parse(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: upgrade\r\n\r\n")


def test_head_response_ends_with_its_head() -> None:
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 1234\r\n\r\n"
    for pieces in splits(head):
        reader = ResponseReader()
        reader.expect(head_only=True)
        events = feed_all(reader, pieces)
        assert summary(events) == [(200, {"content-type": "application/json", "content-length": "1234"}), ("end", True)]
        assert reader.idle
        assert summary(reader.feed(FIXED))[1:] == [JSON, ("end", True)]  # the next request's answer has a body


def test_head_response_after_1xx_and_with_bytes_after_it() -> None:
    reader = ResponseReader()
    reader.expect(head_only=True)
    events = reader.feed(b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc")
    assert summary(events) == [(200, {"content-length": "3"}), ("end", True)]
    assert not reader.idle  # a body sent to HEAD: the connection cannot be trusted
    with pytest.raises(ProtocolError, match="after the response to HEAD"):
        reader.feed(FIXED)


def test_head_response_without_a_length_is_not_kept_alive() -> None:
    assert parse(b"HTTP/1.1 200 OK\r\n\r\n", head_only=True) == [(200, {}), ("end", False)]


@pytest.mark.parametrize("status", [204, 304])
def test_bodiless_statuses(status: int) -> None:
    events = parse(b"HTTP/1.1 %d X\r\nContent-Length: 5\r\n\r\n" % status + FIXED)
    assert events[:2] == [(status, {"content-length": "5"}), ("end", True)]
    assert events[3] == JSON  # the next response follows at once


# -- keep-alive ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "keep_alive"),
    [
        (b"HTTP/1.1 200 OK\r\n", True),
        (b"HTTP/1.1 200 OK\r\nConnection: close\r\n", False),
        (b"HTTP/1.1 200 OK\r\nConnection: Keep-Alive, Close\r\n", False),
        (b"HTTP/1.0 200 OK\r\n", False),
        (b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\n", True),
    ],
)
def test_keep_alive(head: bytes, keep_alive: bool) -> None:
    events = parse(head + b"Content-Length: 2\r\n\r\n{}")
    assert events[-1] == ("end", keep_alive)


def test_an_error_after_a_whole_response_does_not_take_it_away() -> None:
    reader = ResponseReader()
    events = reader.feed(b"HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}junk")
    assert summary(events)[1:] == [b"{}", ("end", False)]
    assert not reader.idle
    with pytest.raises(ProtocolError):
        reader.feed(b"more")


# -- headers ---------------------------------------------------------------------------------------------


def test_header_names_values_and_repeats() -> None:
    head = (
        b"HTTP/1.1 200 \r\nX-Empty:\r\nBaton-Instance:  b-1 \t\r\nSet-Thing: a\r\nset-thing: b\r\n"
        b"X-Latin: caf\xe9\r\nContent-Length: 0\r\n\r\n"
    )
    [(status, headers), end] = parse(head)
    assert status == 200 and end == ("end", True)
    assert headers == {
        "x-empty": "",
        "baton-instance": "b-1",
        "set-thing": "a, b",
        "x-latin": "café",
        "content-length": "0",
    }


# -- limits ----------------------------------------------------------------------------------------------


def test_a_head_larger_than_64_kib_is_refused_whole_or_in_pieces() -> None:
    huge = b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * MAX_HEAD
    with pytest.raises(ProtocolError, match="head is larger than 64 KiB"):
        ResponseReader().feed(huge)
    reader = ResponseReader()
    with pytest.raises(ProtocolError, match="head is larger than 64 KiB"):
        for i in range(0, len(huge), 1000):
            reader.feed(huge[i : i + 1000])
    with pytest.raises(ProtocolError, match="head is larger"):
        reader.feed(FIXED)  # and it stays broken


def test_a_head_just_under_the_limit_is_read() -> None:
    big = b"HTTP/1.1 200 OK\r\nX-Big: " + b"a" * (MAX_HEAD - 100) + b"\r\nContent-Length: 0\r\n\r\n"
    reader = ResponseReader()
    events = feed_all(reader, [big[i : i + 4096] for i in range(0, len(big), 4096)])
    assert summary(events)[-1] == ("end", True)


def test_a_chunk_size_line_longer_than_8_kib_is_refused() -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    reader = ResponseReader()
    reader.feed(head)
    with pytest.raises(ProtocolError, match="chunk-size line is longer than 8 KiB"):
        reader.feed(b"5;ext=" + b"x" * MAX_LINE)
    reader = ResponseReader()  # a long extension under the limit is fine
    assert summary(reader.feed(head + b"5;ext=" + b"x" * (MAX_LINE - 100) + b"\r\nhello\r\n0\r\n\r\n"))[1:] == [
        b"hello",
        ("end", True),
    ]


def test_trailers_larger_than_64_kib_are_refused() -> None:
    reader = ResponseReader()
    reader.feed(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n")
    with pytest.raises(ProtocolError, match="trailer fields are larger than 64 KiB"):
        for _ in range(100):
            reader.feed(b"X-T: " + b"t" * 1000 + b"\r\n")


# -- invalid HTTP ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"HTTP/2 200 OK\r\n\r\n", "status line"),
        (b"HTTP/1.1 2000 OK\r\n\r\n", "status line"),
        (b"<html>hello</html>\r\n\r\n", "status line"),
        (b"HTTP/1.1 200 OK\nContent-Length: 0\n\n", "CR"),  # bare LF line ends are refused
        (b"HTTP/1.1 200 OK\r\nBad Header: 1\r\n\r\n", "header token"),
        (b"HTTP/1.1 200 OK\r\nX: a\r\n folded\r\n\r\n", "whitespace"),  # obsolete line folding
        (b"HTTP/1.1 200 OK\r\nX: \x01\r\n\r\n", "header value"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 2\r\n\r\n", "Content-Length"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", "Transfer-Encoding"),
        (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "Transfer-Encoding"),
        (b"HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 0\r\n\r\n", "Content-Encoding"),
    ],
    ids=[
        "http2",
        "status-4-digits",
        "not-http",
        "bare-lf",
        "header-name",
        "obs-fold",
        "control-char",
        "two-lengths",
        "negative-length",
        "length-overflow",
        "te-and-length",
        "gzip-te",
        "chunked-twice",
        "gzip",
    ],
)
def test_invalid_heads(data: bytes, match: str) -> None:
    with pytest.raises(ProtocolError, match=match):
        parse(data)


@pytest.mark.parametrize(
    ("chunks", "match"),
    [
        (b"zz\r\n", "chunk size"),
        (b"-1\r\n", "chunk size"),
        (b"3 \r\nabc\r\n0\r\n\r\n", "chunk size"),
        (b"\r\n", "chunk size"),
        (b"FFFFFFFFFFFFFFFFFF\r\n", "overflow"),
        (b"2\r\n{}XX0\r\n\r\n", "after chunk data"),
    ],
    ids=["letters", "negative", "space", "empty", "overflow", "no-crlf-after-data"],
)
def test_bad_chunks(chunks: bytes, match: str) -> None:
    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    for pieces in ([head + chunks], [head, chunks], [bytes([b]) for b in head + chunks]):
        reader = ResponseReader()
        with pytest.raises(ProtocolError, match=match):
            feed_all(reader, pieces)
