"""Start-up checks: `baton serve`, `server.asgi()` and `Server(...)` refuse configuration that could only
fail on a later request, with a message that says what to set; `baton serve` says where it serves; and
`baton keys` treats a missing key file the same way in every action, with `init` to create it.

The CLI runs as a real subprocess on servers written to the test's directory; ledgers are real (SQLite,
and a Redis URL that nothing answers).
"""

from __future__ import annotations

import getpass
import hashlib
import os
import re
import socket
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest
from support import processes
from support.paths import BATON, ROOT
from support.processes import free_port
from support.serve import start_server
from wire import call, meta

from baton import ConfigurationError, Context, KeyRing, Server
from baton.serve.run import UNNAMED
from baton.server.startup import connect_calls

URL_CAPS: dict[str, Any] = {"elicitation": {"url": {}}}

SECRET_TOOL = """
from baton import Context, Server

server = Server("weather"{options})


@server.tool()
async def forecast(ctx: Context, city: str) -> str:
    key = await ctx.secret("weather_api_key", "Connect your weather account")
    return f"{{city}}: sunny"
"""

HELPER_SECRET = """
from baton import Context, Server

server = Server("weather"{options})


async def api_key(ctx: Context) -> str:
    return await (await ctx.secret("weather_api_key", "Connect your weather account")).reveal()


@server.tool()
async def forecast(c: Context, city: str) -> str:
    return f"{{city}}: {{len(await api_key(c))}}"
"""

DECLARED_KIT = """
from baton import Server
from baton.connect import ConnectKit

server = Server("declared", connect=ConnectKit())


@server.tool()
def hello() -> str:
    return "hello"
"""

SINGLE_USE = """
from baton import Context, Server

server = Server("transfers")


@server.tool({options})
async def transfer(ctx: Context, amount: int) -> str:
    if not await ctx.confirm(f"Transfer {{amount}}?"):
        return "cancelled"
    return "done"
"""

PLAIN = """
from baton import Server

server = Server("plain")


@server.tool()
def hello() -> str:
    return "hello"
"""


def write(tmp_path: Path, template: str, options: str = "") -> str:
    path = tmp_path / "app.py"
    path.write_text(textwrap.dedent(template.format(options=options)))
    return str(path)


def baton(*args: str, env: dict[str, str] | None = None, stdin: bytes = b"") -> subprocess.CompletedProcess[str]:
    """Run `baton ARGS` to its end (stdin closed at once, so a stdio server stops at EOF)."""
    done = processes.run(
        [BATON, *args],
        cwd=ROOT,
        input=stdin,
        capture_output=True,
        timeout=60,
        check=False,
        env={**os.environ, **(env or {})},
    )
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def refused(*args: str, env: dict[str, str] | None = None) -> str:
    """`baton serve ARGS` must refuse to start: exit 2; its stderr."""
    done = baton("serve", *args, env=env)
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr


def http(port: int | None = None) -> list[str]:
    return ["--http", f"127.0.0.1:{port or free_port()}"]


@pytest.fixture(autouse=True)
def _no_public_url(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("BATON_PUBLIC_URL", "BATON_LEDGER", "BATON_KEY_FILE", "BATON_CONNECT_STORE"):
        monkeypatch.delenv(name, raising=False)


# -- the connect kit -------------------------------------------------------------------------------------


@pytest.mark.process
@pytest.mark.parametrize("transport", ["--http", "--stdio"])
def test_secret_without_a_public_url_is_refused_at_start(tmp_path: Path, transport: str) -> None:
    target = write(tmp_path, SECRET_TOOL)
    err = refused(target, *(http() if transport == "--http" else ["--stdio"]))
    assert "cannot serve 'weather': tool forecast (ctx.secret) needs the server's public URL" in err
    assert "Server(public_url='https://...') or $BATON_PUBLIC_URL" in err


@pytest.mark.process
def test_https_public_url_without_a_principal_hook_is_refused_over_http(tmp_path: Path) -> None:
    target = write(tmp_path, SECRET_TOOL, ', public_url="https://mcp.example.com"')
    err = refused(target, *http())
    assert "tool forecast (ctx.secret) needs to know who is calling" in err and "Server(principal=...)" in err
    # Over stdio the caller is the OS user: the same server starts.
    done = baton("serve", target, "--stdio")
    assert done.returncode == 0, done.stderr
    assert "connect pages: https://mcp.example.com/connect/" in done.stderr


@pytest.mark.process
def test_a_kit_given_to_the_server_is_checked_even_if_no_handler_is_seen_using_it(tmp_path: Path) -> None:
    err = refused(write(tmp_path, DECLARED_KIT), *http())
    assert "the connect kit given to Server(connect=...) needs the server's public URL" in err


def test_a_loopback_public_url_serves_and_says_where_the_pages_are(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    port = free_port()
    target = write(tmp_path, SECRET_TOOL)
    server = serve(target, env={"BATON_PUBLIC_URL": f"http://127.0.0.1:{port}"})
    assert f"baton serve: connect pages: http://127.0.0.1:{port}/connect/" in server.log.read_text()


def test_a_use_through_a_helper_fails_at_call_time_naming_the_setting(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = serve(write(tmp_path, HELPER_SECRET))  # not seen at start: it starts
    result = call(server.url, "forecast", {"city": "Oslo"}, caps=URL_CAPS).json()["result"]
    text = result["content"][0]["text"]
    assert result["isError"] is True and "$BATON_PUBLIC_URL" in text and "internal error" not in text


def test_asgi_refuses_what_baton_serve_refuses(tmp_path: Path) -> None:
    server = Server("in-process", state_keys=KeyRing.ephemeral_key())

    @server.tool()
    async def forecast(ctx: Context) -> str:
        return str(await ctx.secret("api_key", "Connect"))

    with pytest.raises(ConfigurationError, match=r"tool forecast \(ctx.secret\) needs the server's public URL") as info:
        server.asgi()
    assert info.value.setting == "Server(public_url=...) or $BATON_PUBLIC_URL"
    development = Server("in-process", state_keys=KeyRing.ephemeral_key(), public_url="http://127.0.0.1:8000")
    development.add_tool(forecast)
    development.asgi()  # loopback http is development, where anonymous callers are taken
    production = Server("in-process", state_keys=KeyRing.ephemeral_key(), public_url="https://mcp.example.com")
    production.add_tool(forecast)
    with pytest.raises(ConfigurationError, match="needs to know who is calling"):
        production.asgi()


def test_which_handlers_are_seen_using_the_connect_kit() -> None:
    async def direct(ctx: Context) -> None:
        await ctx.secret("a", "b")
        await ctx.connect("github")

    async def nested(c: Context) -> None:
        async def inner() -> None:
            await c.secret("a", "b")

        await inner()

    async def other_names(ctx: Context, db: object) -> None:
        """Mentions ctx.secret("x") in a docstring only."""
        # ctx.connect("github") in a comment
        db.connect()  # type: ignore[attr-defined]
        note = "ctx.secret"
        del note

    assert connect_calls(direct, "ctx") == ["ctx.secret", "ctx.connect"]
    assert connect_calls(nested, "c") == ["c.secret"]
    assert connect_calls(other_names, "ctx") == []
    assert connect_calls(direct, None) == []  # no Context parameter: it cannot reach the kit
    assert connect_calls(print, "ctx") == []  # no source


# -- the ledger, the keys, the address -------------------------------------------------------------------


@pytest.mark.process
def test_an_unreachable_ledger_is_refused_when_single_use_is_on(tmp_path: Path) -> None:
    nobody = f"redis://127.0.0.1:{free_port()}/0"
    err = refused(write(tmp_path, SINGLE_USE, "single_use=True"), *http(), env={"BATON_LEDGER": nobody})
    assert f"single use is on, but the ledger at {nobody} cannot be used" in err
    assert "Server(ledger=...) or $BATON_LEDGER" in err
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    err = refused(
        write(tmp_path, SINGLE_USE, "single_use=True"), *http(), env={"BATON_LEDGER": f"sqlite://{blocked}/ledger.db"}
    )
    assert f"the ledger at sqlite://{blocked}/ledger.db cannot be used" in err and "$BATON_LEDGER" in err


def test_an_unreachable_ledger_is_not_looked_at_without_single_use(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = serve(write(tmp_path, SINGLE_USE), env={"BATON_LEDGER": f"redis://127.0.0.1:{free_port()}/0"})
    assert call(server.url, "transfer", {"amount": 1}).json()["result"]["resultType"] == "input_required"


@pytest.mark.process
@pytest.mark.parametrize(
    ("env", "setting"),
    [
        ({"BATON_KEY_FILE": "{tmp}"}, "cannot use the key file {tmp}: Is a directory"),
        ({"BATON_KEY_FILE": "{tmp}/garbage"}, "cannot use the key file {tmp}/garbage: a key is written kid:base64key"),
        ({"BATON_STATE_KEYS": "k1:not-base64!"}, "$BATON_STATE_KEYS cannot be used"),
    ],
)
def test_keys_that_cannot_be_loaded_are_refused(tmp_path: Path, env: dict[str, str], setting: str) -> None:
    (tmp_path / "garbage").write_text("this is not a key\n")
    env = {k: v.format(tmp=tmp_path) for k, v in env.items()}
    err = refused(write(tmp_path, PLAIN), *http(), env=env)
    assert setting.format(tmp=tmp_path) in err


@pytest.mark.process
def test_a_taken_port_is_refused(tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        err = refused(write(tmp_path, PLAIN), *http(port))
    assert f"cannot listen on 127.0.0.1:{port}: Address already in use" in err


def test_server_refuses_what_it_can_judge_at_once() -> None:
    with pytest.raises(ConfigurationError, match=r"public_url 'mcp\.example\.com' is not where browsers reach"):
        Server("x", public_url="mcp.example.com")
    with pytest.raises(ConfigurationError, match="unknown scheme 'postgres'") as info:
        Server("x", ledger="postgres://db/1")
    assert info.value.setting == "Server(ledger=...) or $BATON_LEDGER"


def test_serve_says_where_it_serves_without_any_log_level(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    server = serve(write(tmp_path, PLAIN))
    data = Path(os.environ["BATON_DATA_DIR"])
    lines = server.log.read_text().splitlines()
    assert f"baton serve: serving 'plain' at http://127.0.0.1:{server.port}/mcp" in lines
    assert f"baton serve: keys: key file {data / 'state-keys'}" in lines
    assert f"baton serve: data directory: {data}" in lines


def test_serve_names_the_instance_and_the_ledger(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Issue 41 item 9 (protocol.md P114): the start-up lines say which instance this is and which ledger it
    uses; a lone unnamed instance with the default ledger gets no warning."""
    server = serve(write(tmp_path, PLAIN), env={"BATON_INSTANCE": ""})
    data = Path(os.environ["BATON_DATA_DIR"])
    lines = server.log.read_text().splitlines()
    assert f"baton serve: instance: {socket.gethostname()}:{server.proc.pid}{UNNAMED}" in lines  # protocol.md P229
    assert f"baton serve: ledger: SQLite file {data / 'ledger.sqlite3'}, this host only" in "\n".join(lines)
    assert not any("share" in line and "Redis" in line and "BATON_LEDGER" in line for line in lines[:6]), lines


def test_named_instances_with_a_local_ledger_are_warned(serve, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    local = serve(write(tmp_path, PLAIN), env={"BATON_INSTANCE": "a"}).log.read_text()
    assert "baton serve: instance: a\n" in local
    assert "$BATON_INSTANCE names this one of several instances, but its ledger is local" in local
    assert "give every instance the same BATON_LEDGER=redis://..." in local
    # A Redis ledger is shared, and carries the answers between instances: no warning (it need not answer yet)
    shared = serve(write(tmp_path, PLAIN), env={"BATON_INSTANCE": "b", "BATON_LEDGER": "redis://127.0.0.1:1/0"})
    text = shared.log.read_text()
    assert "baton serve: ledger: Redis at redis://127.0.0.1:1/0, also the answer bus between instances" in text
    assert "ledger is local" not in text


@pytest.mark.process
def test_stdio_says_it_on_stderr_and_keeps_stdout_for_protocol_messages(tmp_path: Path) -> None:
    line = b'{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{'
    line += (
        b'"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}\n'
    )
    done = baton("serve", write(tmp_path, PLAIN), "--stdio", stdin=line)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "baton serve: serving 'plain' on stdio\n"  # one short line: a host logs it
    (reply,) = done.stdout.splitlines()
    assert reply.startswith('{"jsonrpc":"2.0","id":1,"result":')
    quiet = baton("serve", write(tmp_path, PLAIN), "--stdio", "--quiet", stdin=line)
    assert quiet.returncode == 0 and quiet.stderr == ""
    assert quiet.stdout == done.stdout


# -- baton keys -------------------------------------------------------------------------------------------


@pytest.mark.process
def test_keys_init_creates_the_file_and_says_where(tmp_path: Path) -> None:
    key_file = tmp_path / "ring" / "state-keys"
    done = baton("keys", "init", env={"BATON_KEY_FILE": str(key_file)})
    assert done.returncode == 0 and f"created {key_file} with key " in done.stderr
    (kid,) = [line.split(":")[0] for line in key_file.read_text().splitlines()]
    assert key_file.stat().st_mode & 0o777 == 0o600
    listed = baton("keys", "list", "--key-file", str(key_file))
    assert listed.stdout == f"{kid}\tseals and opens\n"
    again = baton("keys", "init", "--key-file", str(key_file))
    assert again.returncode == 1 and "already exists" in again.stderr
    assert key_file.read_text().startswith(f"{kid}:")  # untouched


@pytest.mark.process
@pytest.mark.parametrize("action", [["list"], ["rotate"], ["add"], ["promote", "k1"], ["retire", "k1"]])
def test_every_action_on_a_missing_key_file_says_so_and_creates_nothing(tmp_path: Path, action: list[str]) -> None:
    key_file = tmp_path / "absent"
    done = baton("keys", *action, "--key-file", str(key_file))
    assert done.returncode == 1
    assert f"no key file at {key_file}; create it with `baton keys init`" in done.stderr
    assert not key_file.exists()


@pytest.mark.process
@pytest.mark.parametrize(
    "args",
    [
        ["serve", "--help"],
        ["keys", "--help"],
        *(["keys", action, "--help"] for action in ("init", "list", "rotate", "add", "promote", "retire", "generate")),
    ],
)
def test_help_of_every_subcommand_exits_0(args: list[str]) -> None:
    done = baton(*args)
    assert done.returncode == 0 and "usage: baton" in done.stdout, done.stderr


# -- the connect kit with a stdio server -----------------------------------------------------------------

STDIO_SECRET = """
import hashlib

from baton import Context, Server

server = Server("weather")


@server.tool()
async def forecast(ctx: Context, city: str) -> str:
    handle = await ctx.secret("weather_api_key", "Connect your weather account")
    digest = hashlib.sha256((await handle.reveal()).encode()).hexdigest()[:16]
    return f"{{city}} for {{handle.principal}}: key digest {{digest}}"
"""


@pytest.mark.process
def test_a_stdio_server_uses_the_pages_of_an_http_server_beside_it(tmp_path: Path) -> None:
    """The recipe of docs/server.md: the same file served over HTTP (same data directory, so the same key
    file, tickets and vault) serves the pages; the browser user signs in as the stdio caller, os:<user>."""
    port = free_port()
    env = {"BATON_PUBLIC_URL": f"http://127.0.0.1:{port}"}
    target = write(tmp_path, STDIO_SECRET)
    pages = start_server(target, port=port, log=tmp_path / "pages.log", env=env)  # on the public URL's port
    stdio = processes.popen(
        [BATON, "serve", target, "--stdio"],
        cwd=ROOT,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **env},
    )
    assert stdio.stdin is not None and stdio.stdout is not None

    def forecast(**extra: Any) -> dict[str, Any]:
        params = {"name": "forecast", "arguments": {"city": "Oslo"}, "_meta": meta(URL_CAPS), **extra}
        stdio.stdin.write(orjson.dumps({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}) + b"\n")  # type: ignore[union-attr]
        stdio.stdin.flush()  # type: ignore[union-attr]
        result: dict[str, Any] = orjson.loads(stdio.stdout.readline())["result"]  # type: ignore[union-attr]
        return result

    try:
        first = forecast()
        ((key, ask),) = first["inputRequests"].items()
        url = ask["params"]["url"]
        assert url.startswith(f"http://127.0.0.1:{port}/connect/")
        me = "os:" + getpass.getuser()
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=10) as browser:
            browser.post("/connect/login", data={"principal": me, "next": "/connect/"})
            page = browser.get(url)
            assert page.status_code == 200 and f"Signed in as <b>{me}</b>" in page.text
            csrf = re.search(r"name='csrf' value='([^']+)'", page.text)
            assert csrf is not None
            done = browser.post(url, data={"csrf": csrf.group(1), "secret": "sk-stdio-123"})
            assert done.status_code == 200 and "Connected" in done.text
        final = forecast(requestState=first["requestState"], inputResponses={key: {"action": "accept"}})
        digest = hashlib.sha256(b"sk-stdio-123").hexdigest()[:16]
        assert final["content"][0]["text"] == f"Oslo for {me}: key digest {digest}"
    finally:
        stdio.stdin.close()
        stdio.wait(timeout=20)
        stdio.stdout.close()
        pages.stop()


def test_page_tools_without_a_public_url_are_warned_of_at_start(serve) -> None:  # type: ignore[no-untyped-def]
    """examples/projects.py's page-rung tools (P145): without a public URL no page can be given, and the start
    says so; with one, it says where the pages are."""
    projects = str(ROOT / "examples" / "projects.py")
    bare = serve(projects, env={"BATON_PUBLIC_URL": ""})
    said = bare.log.read_text()
    assert "delete_project, create_project take the page rung" in said and "Set $BATON_PUBLIC_URL" in said
    said = serve(projects, env={"BATON_PUBLIC_URL": "http://127.0.0.1:8000"}).log.read_text()
    assert "connect pages: http://127.0.0.1:8000/connect/" in said and "page rung" not in said
