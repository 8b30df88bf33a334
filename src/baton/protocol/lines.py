"""Reading newline-delimited messages from a byte stream, one line at most `MAX_LINE` bytes: the one rule both
ends of stdio share (`baton serve --stdio` reading stdin, the client reading a server's stdout).

A line longer than the cap is read to its newline and dropped whole, then reported once (`LineTooLong`):
no part of it is ever taken for a message of its own (protocol.md P116).
"""

from __future__ import annotations

import asyncio

MAX_LINE = 16 * 1024 * 1024
"""The longest line either end of stdio reads; give a `StreamReader` this `limit`."""


class LineTooLong(Exception):
    """A line over the reader's limit was read to its end and dropped."""


async def read_line(reader: asyncio.StreamReader) -> bytes:
    """The next line, its newline included (the last one may lack it); b"" at the end of the stream.

    A line longer than the reader's limit is consumed up to and including its newline (or to the end of the
    stream), then `LineTooLong` is raised; the next call reads the line after it."""
    dropping = False
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the end of the stream: what came after the last newline
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            # No newline within the limit: drop what was scanned (never a newline in it) and read on to the
            # newline, rather than `readline`'s clearing the buffer and reading the rest as new lines.
            await reader.readexactly(exc.consumed)
            dropping = True
            continue
        if dropping:
            raise LineTooLong
        return line
