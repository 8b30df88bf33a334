"""The demo: starts the Projects server on loopback and drives it with Baton's client.

    ./dev demo            # answers each question at the terminal
    ./dev demo --auto     # answers by itself (also when stdin is not a terminal)

Every question the server asks arrives inside an `input_required` result; the client answers it
and retries with the sealed `requestState`, and the server, holding no memory between rounds,
picks the flow up again.

The last step deploys a project with the caller's own API key, which must never pass through the
client: the server asks, in URL mode, for its own connect page (`ctx.secret`, protocol.md P22). At a
terminal you see the full address with its domain highlighted, agree to open it, sign in on the
development login (it suggests whom to sign in as) and paste any key; `--auto` does the same over
HTTP, without a browser. The server is `demo_server` below: Projects plus that one tool, with the
connect kit's stores in memory so that every run asks again.
"""

from __future__ import annotations

import argparse
import asyncio
import html
import importlib.util
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Awaitable
from pathlib import Path
from typing import Any

import httpx

from baton import Context, McpError, Server
from baton.client import Accepted, Answer, Client, ClientError, Question
from baton.forms.url_safety import check_url, format_for_display
from baton.render import TerminalRenderer

HERE = Path(__file__).resolve().parent
DEMO_KEY = "sk-demo-4f1c9e27b8a05d36"  # what --auto pastes on the key page; any value does
SAMPLES = {
    "email": "ada@example.com",
    "uri": "https://example.com",
    "date": "2026-12-24",
    "date-time": "2026-12-24T10:00:00Z",
}


def demo_server() -> Server:
    """The server `baton serve examples/demo.py:demo_server` runs: examples/projects.py plus `deploy_project`."""
    spec = importlib.util.spec_from_file_location("baton_demo_projects", HERE / "projects.py")
    assert spec is not None and spec.loader is not None
    projects = sys.modules[spec.name] = importlib.util.module_from_spec(spec)  # dataclasses look it up there
    spec.loader.exec_module(projects)
    server: Server = projects.server

    @server.tool(when_unasked="page")  # a host without URL mode gets the connect page's link in the result
    async def deploy_project(ctx: Context, project_id: str) -> str:
        """Deploy a project to Acme Cloud with the caller's own Acme API key."""
        if project_id not in projects.PROJECTS:
            return f"There is no project {project_id!r}."
        # The key is asked on the server's own page (URL mode), never in a form: it never reaches the client.
        handle = await ctx.secret("acme_api_key", "Connect your Acme Cloud account: paste your Acme API key")
        key = await handle.reveal()  # a real server would call Acme's API with it here
        return (
            f"Deployed {project_id} to Acme Cloud for {ctx.principal}, with the API key from the server's vault "
            f"({len(key)} characters; it never passed through this client)."
        )

    return server


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


def auto_answerer(question: Question) -> Awaitable[Answer[Any]]:
    async def answer() -> Answer[Any]:
        print(f"\n  {question.server or 'The server'} asks: {question.message}")
        assert question.form is not None
        content: dict[str, Any] = {}
        for field in question.form.fields:
            prop = field.schema()
            content[field.name] = value = auto_value(field.name, prop)
            print(f"  {prop.get('title', field.name)}: {value}")
        return Accepted(content)

    return answer()


def styled_address(url: str) -> str:
    """The URL as the renderer shows it: the site (registrable domain) bold and underlined on a terminal."""
    color = sys.stdout.isatty() and "NO_COLOR" not in os.environ
    segments = format_for_display(check_url(url, allow_http_loopback=True))
    return "".join(f"\x1b[1;4;36m{text}\x1b[0m" if style == "domain" and color else text for text, style in segments)


def need(ok: bool, problem: str) -> None:
    if not ok:
        raise RuntimeError(f"--auto could not complete the connect page: {problem}")


def auto_connect(question: Question) -> Awaitable[Answer[Any]]:
    """--auto's URL handler: show the address, consent, and do in HTTP what the user does in the browser."""

    async def answer() -> Answer[Any]:
        url = question.url or ""
        print(f"\n  {question.server or 'The server'} asks you to open a web page: {question.message}")
        print(f"  Address: {styled_address(url)}")
        print("  [auto] Open this page? yes. No browser: the demo signs in and pastes a key over HTTP.")
        async with httpx.AsyncClient(timeout=10) as web:
            page = await web.get(url)  # no session yet: sent to the development login
            need(page.status_code == 303, f"expected the login first, got {page.status_code}")
            login = await web.get(page.url.join(page.headers["location"]))
            login_url = str(login.url)
            prefilled = re.search(r"name='principal' value='([^']*)'", login.text)
            if prefilled is None:
                raise RuntimeError("the development login did not suggest a principal")
            who = html.unescape(prefilled[1])
            print(f"  [auto] {login_url.partition('?')[0]} suggests {who!r}; signing in as {who}")
            signed_in = await web.post(login_url, data={"principal": who})
            need(signed_in.status_code == 303, f"the login answered {signed_in.status_code}")
            form = await web.get(url)
            csrf = re.search(r"name='csrf' value='([^']*)'", form.text)
            if csrf is None:
                raise RuntimeError(f"no key form at {url} ({form.status_code})")
            saved = await web.post(url, data={"secret": DEMO_KEY, "csrf": html.unescape(csrf[1])})
            need(saved.status_code == 200 and "Connected" in saved.text, f"the key page answered {saved.status_code}")
            print("  [auto] pasted a demo API key on the page: Connected. Done in the browser; continuing.")
        return Accepted(None)

    return answer()


async def run(url: str, auto: bool, renderer: TerminalRenderer | None) -> None:
    # At a terminal, the questions are asked by Baton's terminal renderer; --auto answers by itself.
    on_form = auto_answerer if renderer is None else renderer
    on_url = auto_connect if renderer is None else renderer
    async with Client(url, on_form=on_form, on_url=on_url, name="baton-demo") as client:
        tools = await client.list_tools()
        print("Tools:", ", ".join(t.name for t in tools))
        for name, args in (
            ("list_projects", {}),
            ("delete_project", {"project_id": "apollo"}),
            ("contact_support", {"topic": "billing"}),
            ("create_project", {"name": "hermes"}),
            ("list_projects", {}),
            ("deploy_project", {"project_id": "gemini"}),
        ):
            print(f"\n> {name} {args}")
            if name == "deploy_project" and not auto:
                print(
                    "  This step needs an API key, which never goes through this client: the server asks you to\n"
                    "  open its own page. There, sign in as the principal the development login suggests, paste\n"
                    "  any value as the key, Save, then come back here and type d."
                )
            result = await client.call_tool(name, args)
            print(result.text)


def relay(server: subprocess.Popen[str], renderer: TerminalRenderer | None) -> None:
    """Copy the server's stderr to ours, a line at a time, never into an open question."""
    assert server.stderr is not None
    for line in server.stderr:
        if renderer is None:
            sys.stderr.write(line)
        else:
            renderer.between_dialogs(line)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--auto", action="store_true", help="answer the server's questions automatically")
    args = parser.parse_args()
    auto = args.auto or not sys.stdin.isatty()
    port = free_port()
    env = dict(os.environ)
    env.setdefault("BATON_DATA_DIR", str(Path(tempfile.gettempdir()) / "baton-demo"))
    env["BATON_PUBLIC_URL"] = f"http://127.0.0.1:{port}"  # loopback http: development, the development login
    env["BATON_CONNECT_STORE"] = "memory:"  # a fresh vault each run, so the key is asked for every time
    baton = Path(sys.executable).with_name("baton")
    target = f"{HERE / 'demo.py'}:demo_server"
    # The server's log lines go through the renderer, which holds them while a question is open.
    renderer = None if auto else TerminalRenderer()
    server = subprocess.Popen(
        [str(baton), "serve", target, "--http", f"127.0.0.1:{port}"], env=env, stderr=subprocess.PIPE, text=True
    )
    threading.Thread(target=relay, args=(server, renderer), daemon=True).start()
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
        asyncio.run(run(f"http://127.0.0.1:{port}/mcp", auto, renderer))
    except (ClientError, McpError, OSError) as exc:  # said in one line: what happened, not a traceback
        print(f"demo: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print(file=sys.stderr)
        return 130
    finally:
        server.terminate()
        server.wait(10)
    return 0


if __name__ == "__main__":
    sys.exit(main())
