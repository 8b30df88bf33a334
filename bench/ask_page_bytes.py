"""Bytes held per question waiting on the server's own page (protocol.md P145-P147), in each backend.

A waiting question is one `link` record in the ledger (sealed: the question, the journal so far, the ticket
id) and one ticket in the connect store. This parks N questions, each for its own caller, with the two
questions of examples/projects.py (delete_project's yes/no, create_project's template form), through the
real `ConnectKit` and `ParkedFlow`, and reports what each backend holds per question:

- memory: Python heap growth (tracemalloc) per question, the ledger and the ticket store together;
- SQLite: the two database files' growth (pages in use, after a WAL checkpoint) per question;
- Redis: `used_memory` growth per question, and `MEMORY USAGE` of one link key and one ticket key
  (a redis-server of its own on a free loopback port, stopped at the end).

Usage: `.venv/bin/python bench/ask_page_bytes.py [N]` (default 2000).
"""

from __future__ import annotations

import asyncio
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path
from typing import Any

import redis

from baton.connect import ConnectKit
from baton.forms import compile_form
from baton.server.context import CONFIRM_FORM
from baton.state.journal import Journal
from baton.state.keys import KeyRing
from baton.state.ledger import Ledger
from baton.state.ledger_url import ledger_from_url

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "examples"))
from projects import Template  # examples/ is not a package

QUESTIONS = {
    "delete_project": ("Delete project apollo? This cannot be undone.", compile_form(CONFIRM_FORM).schema),
    "create_project": ("How should atlas-3f2a be set up?", compile_form(Template).schema),
}


def request(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"method": "elicitation/create", "params": {"mode": "form", "message": message, "requestedSchema": schema}}


async def park(store: str, ledger: Ledger, n: int, question: str, first: int = 0) -> None:
    """Park `n` questions, each for its own principal (numbered from `first`), in a kit on `store` with `ledger`."""
    kit = ConnectKit(public_url="http://127.0.0.1:8000", store=store)
    kit.attach(KeyRing.ephemeral_key(), None, lambda: ledger)
    message, schema = QUESTIONS[question]
    asked = request(message, schema)
    journal = Journal(once={"reserve": "atlas-3f2a"}) if question == "create_project" else Journal()
    for i in range(first, first + n):
        binding = b"\0\0\0\x0ftools/call" + b'{"project_id":"apollo"}'
        flow = kit.page_flow(f"user-{i:06d}@example.com", binding, lambda request: False)  # a host without forms
        assert flow is not None
        await flow.resume()
        await flow.park("q1", "AAAAAAAAAAA", asked, journal)
    await kit.aclose()


def park_at(url: str, n: int, question: str, first: int) -> None:
    """`park` on the store and ledger `url` names (one file or one Redis for both), closed afterwards."""

    async def run() -> None:
        ledger = ledger_from_url(url)
        try:
            await park(url, ledger, n, question, first)
        finally:
            await ledger.close()

    asyncio.run(run())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sqlite_bytes(path: Path) -> int:
    db = sqlite3.connect(path)
    try:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = db.execute("PRAGMA page_count").fetchone()[0] - db.execute("PRAGMA freelist_count").fetchone()[0]
        return int(pages * db.execute("PRAGMA page_size").fetchone()[0])
    finally:
        db.close()


def measure_memory(n: int, question: str) -> str:
    ledger = ledger_from_url("memory:")
    tracemalloc.start()
    asyncio.run(park("memory:", ledger, 1, question))  # warm: imports, key derivation, caches
    before = tracemalloc.get_traced_memory()[0]
    asyncio.run(park("memory:", ledger, n, question, first=1))
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return f"memory: {(after - before) / n:.0f} bytes per waiting question (heap growth, ledger + tickets)"


def measure_sqlite(n: int, question: str) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "both.sqlite3"
        url = f"sqlite:///{path}"

        park_at(url, 1, question, 0)
        before = sqlite_bytes(path)
        park_at(url, n, question, 1)
        after = sqlite_bytes(path)
    return f"SQLite: {(after - before) / n:.0f} bytes per waiting question (pages in use, ledger + tickets)"


def measure_redis(n: int, question: str) -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        return "Redis: redis-server is not on PATH (apt-get install -y redis-server)"
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--bind", "127.0.0.1", "--port", str(port), "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    url = f"redis://127.0.0.1:{port}/0"
    try:
        client = redis.Redis(host="127.0.0.1", port=port)
        for _ in range(100):
            try:
                client.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)

        park_at(url, 1, question, 0)
        before = int(client.info("memory")["used_memory"])
        park_at(url, n, question, 1)
        after = int(client.info("memory")["used_memory"])
        link = next(client.scan_iter("baton:ledger:*"))
        ticket = next(client.scan_iter("baton:connect:ticket:*"))
        one = f"MEMORY USAGE: link {client.memory_usage(link)} + ticket {client.memory_usage(ticket)} bytes"
        client.close()
    finally:
        proc.terminate()
        proc.wait(10)
    return f"Redis: {(after - before) / n:.0f} bytes per waiting question (used_memory growth; {one})"


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    for question, (_, schema) in QUESTIONS.items():
        print(f"{question} ({len(str(schema))} characters of schema), {n} waiting questions:")
        for measure in (measure_memory, measure_sqlite, measure_redis):
            print("  " + measure(n, question))


if __name__ == "__main__":
    main()
