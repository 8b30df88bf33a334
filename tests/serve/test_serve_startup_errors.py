"""Start-up errors of `baton serve` (protocol.md P97): one clear message, exit 2, never a traceback through
Baton. Real `baton serve` subprocesses on files written for each case; a form mistake that only the call
can see, in process."""

from __future__ import annotations

import asyncio
import subprocess
import textwrap
from pathlib import Path

import pytest
from support import processes
from support.paths import BATON, ROOT
from wire import meta

from baton import Context, KeyRing, Server
from baton.protocol.messages import Message
from baton.server import Exchange, Reply, RequestInfo
from baton.server.problems import HandlerProblems

BAD_PARAMETERS = """\
from dataclasses import dataclass

from baton import Context, Server

server = Server("bad-parameters")


class Thing:
    pass


@server.tool()
async def upload(
    ctx: Context,
    data: bytes,
    name: str,
    thing: Thing,
) -> str:
    return name


@server.prompt()
def brief(topic: complex) -> str:
    return "x"


@server.tool
def fine(text: str) -> str:
    return text


@server.tool(name="tally")
def count(items: list[bytes]) -> int:
    return len(items)
"""

BAD_FORMS = """\
from dataclasses import dataclass

from baton import Accepted, Cancelled, Context, Declined, Server

server = Server("bad-forms")


@dataclass
class Login:
    user: str
    password: str


@dataclass
class Trip:
    where: Login


@server.tool()
async def sign_in(ctx: Context) -> str:
    answer = await ctx.elicit(Login, "Your login")
    return str(answer)


@server.tool()
async def plan(ctx: Context) -> str:
    form = Trip
    answer: Accepted[Trip] | Declined | Cancelled = await ctx.elicit(form, "Where to?")
    return str(answer)


@server.tool()
async def allowed(ctx: Context) -> str:
    return str(await ctx.elicit(Login, "Your login", allow_secrets=True))
"""

RAISES = """\
import json

from baton import Server

server = Server("raises")


def settings() -> dict:
    return json.loads("{not json")


SETTINGS = settings()
"""


def serve(
    tmp_path: Path, source: str, target: str | None = None, name: str = "app.py"
) -> subprocess.CompletedProcess[str]:
    (tmp_path / name).write_text(textwrap.dedent(source))
    return processes.run(
        [BATON, "serve", target or name, "--stdio"],
        cwd=tmp_path,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def line_of(source: str, text: str) -> int:
    return next(n for n, line in enumerate(source.splitlines(), 1) if text in line)


def assert_no_baton_traceback(stderr: str) -> None:
    assert "src/baton" not in stderr and "site-packages/baton" not in stderr, stderr
    assert "importlib" not in stderr, stderr


@pytest.mark.process
def test_every_unsupported_parameter_of_every_handler_at_once(tmp_path: Path) -> None:
    done = serve(tmp_path, BAD_PARAMETERS)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stdout == ""
    src = BAD_PARAMETERS
    expected = [
        f"app.py:{line_of(src, 'data: bytes')}: tool upload, parameter 'data': bytes cannot be described",
        f"app.py:{line_of(src, 'thing: Thing')}: tool upload, parameter 'thing': Thing cannot be described",
        f"app.py:{line_of(src, 'topic: complex')}: prompt brief, parameter 'topic': complex cannot be described",
        f"app.py:{line_of(src, 'items: list[bytes]')}: tool tally, parameter 'items': bytes cannot be described",
    ]
    for line in expected:
        assert line in done.stderr, done.stderr
    assert "cannot serve app.py: 4 problems with its handlers" in done.stderr
    assert done.stderr.count("parameter types Baton can describe") == 1
    assert "fine" not in done.stderr


@pytest.mark.process
def test_a_form_the_wire_cannot_carry_is_refused_where_the_tool_asks_it(tmp_path: Path) -> None:
    done = serve(tmp_path, BAD_FORMS)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    src = BAD_FORMS
    asked = line_of(src, "answer = await ctx.elicit(Login")
    assert f"app.py:{asked}: tool sign_in, the form Login" in done.stderr
    assert "its name suggests a password" in done.stderr
    assert f"app.py:{line_of(src, 'Accepted[Trip]')}: tool plan, the form Trip" in done.stderr  # by its annotation
    assert "allowed" not in done.stderr  # allow_secrets=True is read from the call
    assert "2 problems" in done.stderr


@pytest.mark.process
def test_an_error_in_the_users_module_is_their_traceback_only(tmp_path: Path) -> None:
    done = serve(tmp_path, RAISES)
    assert done.returncode == 2, done.stderr
    assert "app.py cannot be loaded; the error is in its code" in done.stderr
    assert f'app.py", line {line_of(RAISES, "SETTINGS = settings()")}, in <module>' in done.stderr
    assert f"line {line_of(RAISES, 'return json.loads')}, in settings" in done.stderr
    assert done.stderr.rstrip().splitlines()[-1].startswith("json.decoder.JSONDecodeError: ")
    assert_no_baton_traceback(done.stderr)


@pytest.mark.process
def test_a_mistake_in_a_decorator_shows_the_users_line(tmp_path: Path) -> None:
    source = (
        'from baton import Server\nserver = Server("s")\n\n\n@server.tool(nmae="x")\ndef a() -> str:\n    return "a"\n'
    )
    done = serve(tmp_path, source)
    assert done.returncode == 2
    assert 'app.py", line 5, in <module>' in done.stderr
    assert "unknown option 'nmae'; did you mean 'name'?" in done.stderr
    assert_no_baton_traceback(done.stderr)


@pytest.mark.process
def test_a_syntax_error_is_shown_as_python_shows_it(tmp_path: Path) -> None:
    done = serve(tmp_path, "from baton import Server\ndef broken(:\n    pass\n")
    assert done.returncode == 2
    assert 'app.py", line 2' in done.stderr and "SyntaxError: invalid syntax" in done.stderr
    assert_no_baton_traceback(done.stderr)


@pytest.mark.process
def test_typos_in_the_target_get_did_you_mean(tmp_path: Path) -> None:
    source = 'from baton import Server\nshop = Server("shop")\n'
    done = serve(tmp_path, source, "app.py:shp")
    assert done.returncode == 2
    assert done.stderr.strip() == "baton serve: app.py has no attribute 'shp'; did you mean 'shop'?"
    done = serve(tmp_path, source, "ap.py")
    assert done.returncode == 2
    assert done.stderr.strip() == "baton serve: no such file: ap.py; did you mean 'app.py'?"


@pytest.mark.process
def test_a_stdio_command_without_dashes_gets_a_hint(tmp_path: Path) -> None:
    done = processes.run(
        [BATON, "tools", "baton", "serve", "app.py", "--stdio"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "put -- before its command: baton tools -- baton serve app.py --stdio" in done.stderr
    assert "Traceback" not in done.stderr


# -- in process: the library's own behaviour ---------------------------------------------------------


def test_outside_baton_serve_registration_raises_every_problem_of_the_handler() -> None:
    server = Server("lib", state_keys=KeyRing.ephemeral_key())
    with pytest.raises(HandlerProblems) as caught:

        @server.tool()
        def two(a: bytes, b: complex) -> str:
            return ""

    assert [text for _, text in caught.value.problems] == [
        "parameter 'a': bytes cannot be described as JSON Schema",
        "parameter 'b': complex cannot be described as JSON Schema",
    ]
    assert all(where.startswith("tests/serve/test_serve_startup_errors.py:") for where, _ in caught.value.problems)


def test_a_form_only_the_call_can_see_is_a_tool_error_that_says_what_is_wrong() -> None:
    from dataclasses import dataclass

    @dataclass
    class Login:
        user: str
        api_key: str

    server = Server("lib", state_keys=KeyRing.ephemeral_key())

    def form_for(ctx: Context) -> type:  # the form is not visible in the tool's own source
        return Login

    @server.tool()
    async def sign_in(ctx: Context) -> str:
        return str(await ctx.elicit(form_for(ctx), "Your login"))

    body = {"name": "sign_in", "arguments": {}, "_meta": meta({"elicitation": {"form": {}}})}
    reply = asyncio.run(server.runtime.handle(Message("tools/call", body, 1, True), Exchange(RequestInfo("stdio"))))
    assert isinstance(reply, Reply)
    result = reply.body["result"]
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert text.startswith("Tool sign_in cannot ask its question: form 'Login', field 'api_key'")
    assert "internal error" not in text
