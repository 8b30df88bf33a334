"""The demo: starts the Projects server on loopback and drives it with Baton's client.

    ./dev demo            # answers each question at the terminal
    ./dev demo --auto     # answers by itself (also when stdin is not a terminal)

Every question the server asks arrives inside an `input_required` result; the client answers it
and retries with the sealed `requestState`, and the server, holding no memory between rounds,
picks the flow up again.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

from baton.client import Accepted, Answer, Client, Question
from baton.render import TerminalRenderer

HERE = Path(__file__).resolve().parent
SAMPLES = {
    "email": "ada@example.com",
    "uri": "https://example.com",
    "date": "2026-12-24",
    "date-time": "2026-12-24T10:00:00Z",
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def auto_value(name: str, prop: dict[str, Any]) -> Any:
    if "default" in prop:
        return prop["default"]
    kind = prop.get("type")
    if kind == "boolean":
        return True
    if kind in ("integer", "number"):
        return prop.get("minimum", 1)
    if kind == "array":
        items = prop["items"]
        choices = items.get("enum") or [c["const"] for c in items.get("anyOf", [])]
        return choices[: max(1, prop.get("minItems", 1))]
    if "enum" in prop:
        return prop["enum"][0]
    if "oneOf" in prop:
        return prop["oneOf"][0]["const"]
    return SAMPLES.get(prop.get("format", ""), "Ada Lovelace" if "name" in name else "demo")


def auto_answerer(question: Question) -> Awaitable[Answer]:
    async def answer() -> Answer:
        print(f"\n  {question.server or 'The server'} asks: {question.message}")
        assert question.form is not None
        content: dict[str, Any] = {}
        for field in question.form.fields:
            prop = field.schema()
            content[field.name] = value = auto_value(field.name, prop)
            print(f"  {prop.get('title', field.name)}: {value}")
        return Accepted(content)

    return answer()


async def run(url: str, auto: bool) -> None:
    # At a terminal, the questions are asked by Baton's terminal renderer; --auto answers by itself.
    handler = auto_answerer if auto else TerminalRenderer()
    async with Client(url, on_form=handler, name="baton-demo") as client:
        tools = await client.list_tools()
        print("Tools:", ", ".join(t["name"] for t in tools))
        for name, args in (
            ("list_projects", {}),
            ("delete_project", {"project_id": "apollo"}),
            ("contact_support", {"topic": "billing"}),
            ("create_project", {"name": "hermes"}),
            ("list_projects", {}),
        ):
            print(f"\n> {name} {args}")
            result = await client.call_tool(name, args)
            for block in result.get("content", []):
                if block.get("type") == "text":
                    print(block["text"])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--auto", action="store_true", help="answer the server's questions automatically")
    args = parser.parse_args()
    auto = args.auto or not sys.stdin.isatty()
    port = free_port()
    env = dict(os.environ)
    env.setdefault("BATON_DATA_DIR", str(Path(tempfile.gettempdir()) / "baton-demo"))
    baton = Path(sys.executable).with_name("baton")
    server = subprocess.Popen([str(baton), "serve", str(HERE / "projects.py"), "--http", f"127.0.0.1:{port}"], env=env)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if server.poll() is not None or time.monotonic() > deadline:
                    print("the demo server did not start", file=sys.stderr)
                    return 1
                time.sleep(0.05)
        print(f"Projects server on http://127.0.0.1:{port}/mcp (pid {server.pid})")
        asyncio.run(run(f"http://127.0.0.1:{port}/mcp", auto))
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
