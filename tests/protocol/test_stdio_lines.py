"""A stdio line over the 16 MiB cap is dropped whole, up to its newline, and no part of it is ever read as a
message (protocol.md P116): `read_line` itself, `baton serve --stdio` reading stdin, and the client's stdio
transport reading a server's stdout."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.markers import needs
from support.paths import SERVERS
from support.stdio import StdioPeer
from wire import meta

from baton.client.errors import ClientError
from baton.client.stdio_transport import StdioTransport
from baton.protocol.lines import MAX_LINE, LineTooLong, read_line

OVER = MAX_LINE + 1024 * 1024  # 17 MiB


async def lines_of(chunks: list[bytes], limit: int = 8) -> list[bytes | str]:
    """What `read_line` makes of `chunks` fed one by one: each line, or "too long", to the end."""
    reader = asyncio.StreamReader(limit=limit)

    async def feed() -> None:
        for chunk in chunks:
            reader.feed_data(chunk)
            await asyncio.sleep(0)
        reader.feed_eof()

    feeding = asyncio.ensure_future(feed())
    got: list[bytes | str] = []
    while True:
        try:
            line = await read_line(reader)
        except LineTooLong:
            got.append("too long")
            continue
        if not line:
            break
        got.append(line)
    await feeding
    return got


@pytest.mark.parametrize(
    ("chunks", "expected"),
    [
        ([b"ok\n", b"x" * 20 + b'{"id":1}\n', b"next\n"], [b"ok\n", "too long", b"next\n"]),
        ([b"ok\n" + b"x" * 20 + b'{"id":1}\nnext\n'], [b"ok\n", "too long", b"next\n"]),  # newline past the cap
        ([b"xxxxx"] * 9 + [b'{"id":1}\n', b"next"], ["too long", b"next"]),  # in pieces; the last line unended
        ([b"x" * 30], ["too long"]),  # cut off by the end of the stream
        ([b"x" * 7 + b"\n", b"x" * 8 + b"\n"], [b"x" * 7 + b"\n", b"x" * 8 + b"\n"]),  # at the cap: whole lines
    ],
    ids=["own-chunk", "one-chunk", "pieces", "at-eof", "at-the-cap"],
)
def test_read_line_drops_an_oversized_line_to_its_newline(chunks: list[bytes], expected: list[bytes | str]) -> None:
    assert asyncio.run(lines_of(chunks)) == expected


@pytest.fixture
@needs("process")
def peer(tmp_path: Path) -> Iterator[StdioPeer]:
    p = StdioPeer(str(SERVERS / "guarded.py"), {"BATON_TEST_RUNLOG": str(tmp_path / "runs.log")})
    with p.process:
        yield p


def test_the_server_answers_one_error_and_never_runs_the_rest_of_an_oversized_line(
    peer: StdioPeer, tmp_path: Path
) -> None:
    """17 MiB of spaces, then a `tools/call` on the same line: it used to run the tool."""
    call = {"jsonrpc": "2.0", "id": "smuggled", "method": "tools/call", "params": {"name": "slow", "_meta": meta()}}
    call["params"]["arguments"] = {"seconds": 0}
    peer.send(b" " * OVER + json.dumps(call).encode() + b"\n")
    error = peer.read(timeout=60)
    assert error["id"] is None and "too large" in error["error"]["message"], error
    peer.request("after", "server/discover")
    assert peer.read(timeout=30)["id"] == "after"  # nothing came for the rest of the long line
    assert "slow:start" not in ((tmp_path / "runs.log").read_text() if (tmp_path / "runs.log").exists() else "")
    assert peer.close() == 0


# A stdio "server" that answers "big" with 17 MiB of spaces and, on the same line, a response to the
# request: then answers "hold" (on a line of its own); "echo" at once; "hold" only after a "big".
FAKE = f"""
import json, sys
out = sys.stdout.buffer
for raw in sys.stdin.buffer:
    msg = json.loads(raw)
    if "id" not in msg:
        continue
    if msg["method"] == "big":
        smuggled = json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": {{"smuggled": True}}}})
        out.write(b" " * {OVER} + smuggled.encode() + b"\\n")
        out.write(json.dumps({{"jsonrpc": "2.0", "id": "hold", "result": {{"held": True}}}}).encode() + b"\\n")
    elif msg["method"] == "echo":
        out.write(json.dumps({{"jsonrpc": "2.0", "id": msg["id"], "result": {{"echo": True}}}}).encode() + b"\\n")
    out.flush()
"""


def ask(transport: StdioTransport, rid: str, method: str) -> asyncio.Future[dict[str, Any]]:
    message = {"jsonrpc": "2.0", "id": rid, "method": method, "params": {}}
    return asyncio.ensure_future(asyncio.wait_for(transport.request(message, "2026-07-28", None, {}), 60))


async def with_fake(check: Any) -> None:
    transport = StdioTransport([sys.executable, "-c", FAKE])
    try:
        assert (await ask(transport, "first", "echo"))["result"] == {"echo": True}
        await check(transport)
        assert (await ask(transport, "last", "echo"))["result"] == {"echo": True}  # still reading
    finally:
        await transport.close()


@pytest.mark.process
def test_the_client_fails_the_one_pending_request_an_oversized_line_answers() -> None:
    async def check(transport: StdioTransport) -> None:
        with pytest.raises(ClientError, match="longer than"):
            await ask(transport, "big", "big")

    asyncio.run(with_fake(check))


@pytest.mark.process
def test_the_client_never_reads_the_rest_of_an_oversized_line() -> None:
    """Two requests pending: the long line cannot say whose it is, so neither fails; its tail, a response
    to one of them, is not taken for one, and the line after it is read as usual."""

    async def check(transport: StdioTransport) -> None:
        hold = ask(transport, "hold", "hold")
        await asyncio.sleep(0.1)
        big = ask(transport, "big", "big")
        assert (await hold)["result"] == {"held": True}
        assert not big.done()
        big.cancel()

    asyncio.run(with_fake(check))
