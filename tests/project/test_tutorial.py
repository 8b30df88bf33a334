"""docs/tutorial.md, run for real: every marked code block, in the order a reader meets them.

The tutorial marks its blocks with an HTML comment on the line before the fence (invisible when
rendered):

- `<!-- tutorial: tracker.py -->`: a part of the server file; the parts are joined in order;
- `<!-- tutorial: serve -->`: `export NAME=value` lines and the `baton serve` command, run as given
  (in the directory holding tracker.py, on a free loopback port instead of 8000);
- `<!-- tutorial: cli -->`: a terminal transcript, `$ baton ...` then what the terminal shows. What the
  reader types follows the renderer's prompts; it is fed to the command's stdin, and the output
  (without that typing, as a pipe does not echo it) must be exactly the rest of the transcript;
- `<!-- tutorial: client.py -->`: the Python client, run as a script; `<!-- tutorial: client.py output -->`
  is exactly what it prints;
- `<!-- tutorial: install -->`: the `baton install` line, run with the serve block's variables exported
  (in a throw-away home); `<!-- tutorial: install error -->`: `$ baton install ...` then exactly what it
  says on stderr, refusing (exit status 2).

The URL-mode step is completed the way `examples/demo.py --auto` does it: the `BROWSER` that the
terminal renderer's `webbrowser.open` starts is a script here that signs in on the development login
(as the principal the page suggests) and saves a key on the connect page over HTTP.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import processes
from support.paths import BATON, ROOT
from support.processes import PortOpen, free_port, start

from baton.client import Client

TUTORIAL = ROOT / "docs" / "tutorial.md"
DOC_PORT = "8000"  # the port the tutorial writes
BLOCK = re.compile(r"^<!-- tutorial: (?P<name>[^>]+?) -->\n```\w*\n(?P<body>.*?)^```[ \t]*$", re.M | re.S)
# The end of each prompt of the terminal renderer; what follows it on a transcript line was typed.
PROMPT_END = re.compile(r"\(Enter = answer\): ?|\[c\]ancel: ?|\[n\]o: ?|^  > ?")
TICKET = re.compile(r"/connect/[A-Za-z0-9_-]{20,}")
BROWSER_KEY = "sk-acme-test-0001"  # what the tutorial suggests pasting

# What a person does in the browser, done over HTTP (as examples/demo.py --auto does); it records each
# address it was given and whom the development login suggested, and prints nothing on success.
BROWSER_SCRIPT = """\
import html, re, sys
import httpx

url = sys.argv[1]
with httpx.Client(timeout=10) as web:
    page = web.get(url)  # no browser session yet: sent to the development login
    assert page.status_code == 303, f"expected the login first, got {page.status_code}"
    login = web.get(page.url.join(page.headers["location"]))
    who = html.unescape(re.search(r"name='principal' value='([^']*)'", login.text)[1])
    signed_in = web.post(str(login.url), data={"principal": who})
    assert signed_in.status_code == 303, f"the login answered {signed_in.status_code}"
    key_page = web.get(url)
    csrf = html.unescape(re.search(r"name='csrf' value='([^']*)'", key_page.text)[1])
    saved = web.post(url, data={"secret": KEY, "csrf": csrf})
    assert saved.status_code == 200 and "Connected" in saved.text, f"the key page answered {saved.status_code}"
with open(OPENED, "a") as log:
    log.write(f"{url} {who}\\n")
"""

pytestmark = [
    pytest.mark.process,
    pytest.mark.skipif(sys.platform == "win32", reason="the tutorial's commands are POSIX shell"),
    pytest.mark.timeout(90),
]


@dataclass
class Transcript:
    command: list[str]
    stdin: str
    expected: str


def blocks(name: str) -> list[str]:
    found = [m["body"] for m in BLOCK.finditer(TUTORIAL.read_text()) if m["name"] == name]
    assert found, f"docs/tutorial.md has no block marked <!-- tutorial: {name} -->"
    return found


def localize(text: str, port: int) -> str:
    """A block as run here: the free port instead of the tutorial's 8000."""
    return text.replace(f"127.0.0.1:{DOC_PORT}", f"127.0.0.1:{port}")


def as_documented(text: str, port: int) -> str:
    """Output as the tutorial shows it: its port, a placeholder for connect tickets, no trailing blanks."""
    text = TICKET.sub("/connect/<ticket>", re.sub(rf"\b{port}\b", DOC_PORT, text))
    return "\n".join(line.rstrip() for line in text.splitlines()).strip("\n")


def parse_transcript(body: str) -> Transcript:
    first, _, rest = body.partition("\n")
    assert first.startswith("$ baton "), f"a cli transcript starts with `$ baton ...`, not {first!r}"
    typed: list[str] = []
    shown: list[str] = []
    for line in rest.splitlines():
        end = PROMPT_END.search(line)
        if end is None:
            shown.append(line + "\n")
            continue
        typed.append(line[end.end() :])
        shown.append(line[: end.start()] + end.group().rstrip() + " ")  # the typed line is not echoed
    stdin = "".join(t + "\n" for t in typed)
    return Transcript(shlex.split(first[2:]), stdin, "".join(shown))


def exported() -> dict[str, str]:
    """The variables the serve block exports, as the tutorial writes them."""
    (serve,) = blocks("serve")
    lines = [line.removeprefix("export ") for line in serve.splitlines() if line.startswith("export ")]
    return dict(line.partition("=")[::2] for line in lines)


def run(argv: list[str], *, cwd: Path, env: dict[str, str], stdin: str = "") -> str:
    done = processes.run(argv, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=30, check=False)
    shown = " ".join(argv[1:])
    assert done.returncode == 0, f"`{shown}` exited with {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def test_the_tutorial_runs_as_written(tmp_path: Path) -> None:
    port = free_port()
    work = tmp_path / "tracker"
    work.mkdir()
    (work / "tracker.py").write_text("\n\n".join(blocks("tracker.py")))

    opened = tmp_path / "opened.txt"
    browser = tmp_path / "browser"
    browser.write_text(f"#!{sys.executable}\nKEY = {BROWSER_KEY!r}\nOPENED = {str(opened)!r}\n" + BROWSER_SCRIPT)
    browser.chmod(0o755)
    env = {name: value for name, value in os.environ.items() if name != "BATON_PUBLIC_URL"}
    env |= {"NO_COLOR": "1", "BROWSER": str(browser)}

    # Serve it: the `export` lines set the environment, the `baton serve` line is the command.
    (serve,) = blocks("serve")
    exported: dict[str, str] = {}
    command: list[str] | None = None
    for line in localize(serve, port).splitlines():
        if line.startswith("export "):
            name, _, value = line.removeprefix("export ").partition("=")
            exported[name] = value
        elif line.startswith("baton serve "):
            command = [BATON, *shlex.split(line)[1:]]
    assert command is not None, f"the serve block has no `baton serve` line:\n{serve}"
    assert f"127.0.0.1:{port}" in command, f"the tutorial serves on 127.0.0.1:{DOC_PORT}: {command}"

    # Without the exported public URL it refuses to start, saying what the tutorial says it says.
    refused = processes.run(command, cwd=work, env=env, capture_output=True, text=True, timeout=30, check=False)
    (documented,) = blocks("serve error")
    assert (refused.returncode, refused.stderr.strip()) == (2, documented.strip()), refused.stdout + refused.stderr

    env |= exported
    log = tmp_path / "serve.log"
    with start(command, log=log, cwd=work, env=env, ready=PortOpen(port), name="baton serve tracker.py"):
        assert f"serving 'tracker' at http://127.0.0.1:{port}/mcp" in log.read_text()

        # The command line: each transcript is run with what the reader types, and shows what they see.
        for body in blocks("cli"):
            transcript = parse_transcript(localize(body, port))
            out = run([BATON, *transcript.command[1:]], cwd=work, env=env, stdin=transcript.stdin)
            expected = as_documented(transcript.expected, port)
            assert as_documented(out, port) == expected, (
                f"`{' '.join(transcript.command)}` no longer shows what docs/tutorial.md says.\n"
                f"--- the tutorial ---\n{expected}\n--- now ---\n{as_documented(out, port)}"
            )
        # The URL-mode step went through the browser exactly once, signed in as the suggested principal.
        visits = opened.read_text().splitlines() if opened.exists() else []
        assert len(visits) == 1 and visits[0].endswith(" anonymous"), visits

        # Python: the client script, run as the reader runs it.
        (client,) = blocks("client.py")
        (shown,) = blocks("client.py output")
        (work / "client.py").write_text(localize(client, port))
        out = run([sys.executable, "client.py"], cwd=work, env=env)
        assert as_documented(out, port) == as_documented(shown, port), (
            f"client.py no longer prints what docs/tutorial.md says.\n--- now ---\n{as_documented(out, port)}"
        )
        assert len(opened.read_text().splitlines()) == 1, "the key in the vault should have been used"


def test_the_installed_entry_starts_from_anywhere_with_nothing_of_the_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 42, item 1: the reader has exported `BATON_PUBLIC_URL` (step 3); `baton install` without
    `--env` refuses, saying so, and the entry written as the tutorial says starts from `/` with only `HOME`,
    `PATH` and its own variables, as a host starts it."""
    work = tmp_path / "tracker"
    work.mkdir()
    (work / "tracker.py").write_text("\n\n".join(blocks("tracker.py")))
    home = tmp_path / "home"
    home.mkdir()
    env = {name: value for name, value in os.environ.items() if not name.startswith("BATON_")}
    env |= {"HOME": str(home), "XDG_CONFIG_HOME": str(home / ".config"), "NO_COLOR": "1"} | exported()
    assert "BATON_PUBLIC_URL" in env, "the tutorial's serve block exports BATON_PUBLIC_URL"

    (error,) = blocks("install error")
    first, _, said = error.partition("\n")
    assert first.startswith("$ baton install "), error
    refused = processes.run(
        [BATON, *shlex.split(first[2:])[1:]],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (refused.returncode, refused.stderr.strip()) == (2, said.strip()), refused.stdout + refused.stderr

    (install,) = blocks("install")
    (line,) = [line for line in install.splitlines() if line.startswith("baton install ")]
    run([BATON, *shlex.split(line)[1:]], cwd=work, env=env)
    config = json.loads((home / ".config" / "Claude" / "claude_desktop_config.json").read_text())
    entry = config["mcpServers"]["tracker"]

    async def tools() -> list[str]:
        host = {"HOME": str(home), "PATH": os.environ["PATH"], **entry.get("env", {})}
        async with Client([entry["command"], *entry["args"]], env=host) as client:
            return [tool.name for tool in await client.list_tools()]

    monkeypatch.chdir("/")
    assert "export_issues" in asyncio.run(tools())
