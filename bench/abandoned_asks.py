"""What calls that ask and are never answered cost a 2025-11-25 server: its memory, and its caps.

In a handshake-era session a question is a server request sent on the call's SSE stream, and the call
waits for the answer (up to the ask timeout, protocol.md P95). A client that declares elicitation and
never answers holds every such call open. This script starts `baton serve examples/everything.py` over
HTTP with a long ask timeout, opens sessions of 32 calls each (the per-session cap) until 10,000 calls
wait (the per-instance cap), each on its own connection kept open, and reads the server's resident
memory (`VmRSS`) before, with the calls waiting, once the clients closed while the questions still
wait for a resume (the server's resume window, protocol.md P111, is `RESUME_WINDOW_S` here), and after
that window; a second wave shows
whether the memory of the first is reused. It checks that one call more in a full session, and one in
a new session past the instance cap, are refused with a clear tool error, and that once the clients
have gone a new call asks again. It prints one Markdown table, or one JSON object with `--json`.

Run: `.venv/bin/python bench/abandoned_asks.py [--calls N] [--waves W] [--json]` (about two minutes).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from legacy_load import Lane
from load import FatalError
from processes import Server, Skip, start, stop

from baton.client.http11 import Response, Url

PER_SESSION = 32  # MAX_OPEN_ASKS_PER_SESSION, baton.server.handshake
RESUME_WINDOW_S = 5  # the server's --resume-window: closed streams' questions wait this long (P111)
ASKING_TOOL = "test_elicitation"


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for process {pid}")


class Session(Lane):
    """One 2025-11-25 session of a client that never answers (legacy_load's `Lane` opens it): the responses of
    its calls, each held open at its question."""

    def __init__(self, url: Url) -> None:
        super().__init__(url, ASKING_TOOL, "{}")
        self.held: list[Response] = []

    async def open(self) -> None:
        await self.open_session()

    async def ask(self, n: int) -> str:
        """Call the asking tool and read its stream until the question (kept open) or the end (returned)."""
        call = {
            "jsonrpc": "2.0",
            "id": n,
            "method": "tools/call",
            "params": {"name": ASKING_TOOL, "arguments": {"message": f"question {n}"}},
        }
        resp = await self.pool.send(self.url, "POST", self.head, orjson.dumps(call))
        seen = b""
        while True:
            chunk = await resp.next_chunk()
            if not chunk:
                resp.release()
                return seen.decode(errors="replace")
            seen += chunk
            if b'"elicitation/create"' in seen:
                self.held.append(resp)
                return ""

    async def close(self) -> None:
        for resp in self.held:
            resp.close()
        await self.pool.close()


async def fill(url: Url, calls: int) -> list[Session]:
    """Sessions of `PER_SESSION` calls each until `calls` wait for an answer; raise if one ends instead."""
    sessions: list[Session] = []
    waiting = 0
    while waiting < calls:
        session = Session(url)
        await session.open()
        sessions.append(session)
        batch = min(PER_SESSION, calls - waiting)
        ended = await asyncio.gather(*(session.ask(waiting + i) for i in range(batch)))
        refused = [text for text in ended if text]
        if refused:
            raise RuntimeError(f"a call ended before {calls} waited ({waiting} so far): {refused[0][:300]}")
        waiting += batch
    return sessions


async def measure(server: Server, calls: int, waves: int) -> dict[str, Any]:
    assert server.proc is not None
    pid = server.proc.pid
    url = Url.parse(server.url)
    warm = Session(url)  # one session and one call first, so what every session costs once is in the baseline
    await warm.open()
    assert await warm.ask(1) == ""
    await warm.close()
    await asyncio.sleep(0.5)
    before = rss_kib(pid)
    report: dict[str, Any] = {"calls_waiting": calls, "rss_before_kib": before, "waves": []}
    for wave in range(waves):
        started = time.perf_counter()
        sessions = await fill(url, calls)
        opened_s = time.perf_counter() - started
        await asyncio.sleep(1.0)
        with_calls = rss_kib(pid)
        if wave == 0:  # one call more: in a full session, and in a new session
            full = next((s for s in sessions if len(s.held) == PER_SESSION), None)
            report["refused_in_full_session"] = _tool_error(await full.ask(calls + 1)) if full else ""
            extra = Session(url)
            await extra.open()
            report["refused_past_instance_cap"] = _tool_error(await extra.ask(calls + 2))
            sessions.append(extra)
        for session in sessions:
            await session.close()
        await asyncio.sleep(1.0)
        in_window = rss_kib(pid)  # the questions still wait, for a resume that will not come
        await asyncio.sleep(RESUME_WINDOW_S + 1.0)
        report["waves"].append(
            {
                "sessions": len(sessions),
                "open_s": round(opened_s, 1),
                "rss_kib": with_calls,
                "in_window_kib": in_window,
                "closed_kib": rss_kib(pid),
            }
        )
    first = report["waves"][0]
    report["bytes_per_call"] = round((first["rss_kib"] - before) * 1024 / max(calls, 1))
    again = Session(url)  # past the window the closed streams gave their questions back: a new call asks again
    await again.open()
    report["asks_again_after_close"] = await again.ask(calls + 3) == ""
    await again.close()
    return report


def _tool_error(stream: str) -> str:
    """The text of the tool error at the end of an SSE stream ('' if none)."""
    for line in stream.splitlines():
        if line.startswith("data:") and line[5:].strip():
            message = json.loads(line[5:])
            result = message.get("result") or {}
            if result.get("isError"):
                return str(result["content"][0]["text"])
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=10_000, help="calls left waiting (default 10,000)")
    parser.add_argument("--waves", type=int, default=2, help="fill, measure and close this many times (default 2)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    baton = Path(sys.executable).parent / "baton"

    def argv_of(port: int) -> list[str]:
        return [
            *(str(baton), "serve", "examples/everything.py", "--http", f"127.0.0.1:{port}"),
            *("--ask-timeout", "3600", "--resume-window", str(RESUME_WINDOW_S)),
        ]

    server = Server("baton", Path(sys.executable), argv_of)
    with tempfile.TemporaryDirectory() as logs:
        try:
            start(server, Path(logs), 30.0)
            report = asyncio.run(measure(server, args.calls, max(args.waves, 1)))
        except (Skip, FatalError, OSError, RuntimeError) as exc:
            print(f"abandoned_asks: {exc}", file=sys.stderr)
            return 1
        finally:
            stop(server)
    if args.json:
        print(json.dumps(report))
        return 0
    mib = 1024
    print("| measure | value |\n| --- | --- |")
    print(f"| server RSS before | {report['rss_before_kib'] / mib:.1f} MiB |")
    for i, wave in enumerate(report["waves"], 1):
        print(
            f"| wave {i}: {report['calls_waiting']:,} calls waiting in {wave['sessions']} sessions"
            f" (opened in {wave['open_s']} s) | {wave['rss_kib'] / mib:.1f} MiB;"
            f" {wave['in_window_kib'] / mib:.1f} MiB once the clients closed, their questions waiting for a resume;"
            f" {wave['closed_kib'] / mib:.1f} MiB after the resume window |"
        )
    print(f"| per waiting call (wave 1) | {report['bytes_per_call'] / 1024:.1f} KiB |")
    print(f"| one call more in a full session | {report['refused_in_full_session'] or 'not refused'} |")
    past = report["refused_past_instance_cap"] or (
        "not refused" if report["calls_waiting"] >= 10_000 else "n/a (under 10,000)"
    )
    print(f"| one call more past the instance cap | {past} |")
    print(f"| a new call asks again after the clients closed | {'yes' if report['asks_again_after_close'] else 'NO'} |")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        sys.exit(130)
