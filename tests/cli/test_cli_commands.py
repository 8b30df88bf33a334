"""The client subcommands a newcomer meets in the first hour (issue 13), run as real `baton` subprocesses.

`--help` on every subcommand; `baton resources|read|prompts|prompt` beside `tools|call`, with `read` and
`prompt` answering an MRTR question at the terminal; `--json` on all six; a server without tools,
resources or prompts says so instead of printing -32601; a stdio server after `--`; a 2025-11-25 server
(the mcp 1.30.0 peer) found by the era probe, its question asked during the call; and the questions
on a real pseudo-terminal.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

import pytest
from support import processes
from support.paths import BATON, ROOT
from support.peer_venvs import ensure_venv, peer_env
from support.serve import RunningServer, start_for_module
from support.terminal import Terminal

pytestmark = pytest.mark.process  # every test here starts processes (support.markers)

Serve = Callable[..., RunningServer]
CLIENT_COMMANDS = ("tools", "call", "resources", "read", "prompts", "prompt")
ASKING = "tests/servers/first_hour.py:asking"
STDIO_ASKING = ["--", BATON, "serve", ASKING, "--stdio"]


def run_cli(*args: str, stdin: str = "", env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return processes.run(
        [BATON, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=60, check=False, env=env
    )


# One of each server for the module: the commands list, read and call, and neither server keeps anything.
@pytest.fixture(scope="module")
def asking(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    with start_for_module(tmp_path_factory, ASKING) as server:
        yield server


@pytest.mark.parametrize("command", CLIENT_COMMANDS)
@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_help_exits_0_on_every_client_subcommand(command: str, flag: str) -> None:
    done = run_cli(command, flag)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: baton {command} [--json] URL"), done.stdout
    assert "--json" in done.stdout and "after --" in done.stdout
    assert done.stderr == ""


def test_baton_help_lists_every_client_subcommand() -> None:
    done = run_cli("--help")
    assert done.returncode == 0, done.stderr
    for command in CLIENT_COMMANDS:
        assert f"    {command} " in done.stdout, command


def test_a_server_without_tools_resources_or_prompts_says_so(serve: Serve) -> None:
    server = serve("tests/servers/first_hour.py:empty")
    for command, what in (("tools", "tools"), ("resources", "resources"), ("prompts", "prompts")):
        done = run_cli(command, server.url)
        assert done.returncode == 0, done.stderr
        assert done.stdout == f"the server 'empty' offers no {what}\n"
        assert "-32601" not in done.stdout + done.stderr and "Method not found" not in done.stderr
    assert json.loads(run_cli("tools", server.url, "--json").stdout) == {"tools": []}
    assert json.loads(run_cli("resources", "--json", server.url).stdout) == {"resources": [], "resourceTemplates": []}
    assert json.loads(run_cli("prompts", server.url, "--json").stdout) == {"prompts": []}
    done = run_cli("read", server.url, "diary://today")
    assert (done.returncode, done.stderr) == (1, "baton read: the server 'empty' offers no resources\n")
    done = run_cli("call", server.url, "anything")
    assert done.returncode == 2 and "has no tool 'anything'; it offers no tools" in done.stderr
    done = run_cli("prompt", server.url, "letter")
    assert done.returncode == 2 and "has no prompt 'letter'; it offers no prompts" in done.stderr


def test_resources_lists_resources_and_templates(asking: RunningServer) -> None:
    done = run_cli("resources", asking.url)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "diary://today  today (text/plain)",
        "    Today's page.",
        "",
        "Resource templates (read them with the variables filled in):",
        "diary://{day}  day (text/plain)",
        "    Any day's page.",
    ]
    assert "offers no tools" in run_cli("tools", asking.url).stdout


def test_read_answers_the_resources_question_at_the_terminal(asking: RunningServer) -> None:
    done = run_cli("read", asking.url, "diary://today", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert "Open today's page?" in done.stdout
    assert done.stdout.endswith("Dear diary: it rained.\n")
    done = run_cli("read", asking.url, "diary://today", stdin="n\n")
    assert done.stdout.endswith("The diary stays shut.\n"), done.stdout
    done = run_cli("read", asking.url, "diary://monday")  # a template: nothing asked
    assert (done.returncode, done.stdout) == (0, "Nothing written on monday.\n")
    done = run_cli("read", asking.url, "nope://x")
    assert done.returncode == 1 and "Resource not found" in done.stderr


def test_prompts_and_prompt_answer_the_prompts_question(asking: RunningServer) -> None:
    done = run_cli("prompts", asking.url)
    assert (done.returncode, done.stdout) == (0, "letter(to)\n    A letter, signed if you say so.\n"), done.stderr
    done = run_cli("prompt", asking.url, "letter", "to=Ada Lovelace", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert "Sign the letter?" in done.stdout
    assert done.stdout.endswith("[user]\nDear Ada Lovelace, the weather is fine. Signed.\n[assistant]\nSent.\n")
    done = run_cli("prompt", asking.url, "letter")
    assert done.returncode == 2 and "prompt 'letter' needs to: add to=..." in done.stderr
    done = run_cli("prompt", asking.url, "postcard")
    assert done.returncode == 2 and "has no prompt 'postcard'; it has: letter" in done.stderr


def test_json_on_every_subcommand_keeps_stdout_for_the_json(asking: RunningServer, everything: RunningServer) -> None:
    tools = json.loads(run_cli("tools", "--json", everything.url).stdout)
    assert {"perform", "test_simple_text"} <= {tool["name"] for tool in tools["tools"]}
    done = run_cli("call", everything.url, "test_error_handling", "--json")
    assert done.returncode == 1  # the tool's error is still the exit status
    assert json.loads(done.stdout)["isError"] is True
    listed = json.loads(run_cli("resources", asking.url, "--json").stdout)
    assert [r["uri"] for r in listed["resources"]] == ["diary://today"]
    assert [t["uriTemplate"] for t in listed["resourceTemplates"]] == ["diary://{day}"]
    prompts = json.loads(run_cli("prompts", asking.url, "--json").stdout)
    assert prompts["prompts"][0]["arguments"] == [{"name": "to", "required": True}]
    # The question goes to stderr, so the JSON on stdout parses.
    done = run_cli("read", asking.url, "diary://today", "--json", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert "Open today's page?" in done.stderr and "Open today" not in done.stdout
    assert json.loads(done.stdout)["contents"] == [
        {"uri": "diary://today", "mimeType": "text/plain", "text": "Dear diary: it rained."}
    ]
    done = run_cli("prompt", "--json", asking.url, "letter", "to=Bo", stdin="n\n")
    assert done.returncode == 0, done.stderr
    messages = json.loads(done.stdout)["messages"]
    assert messages[0] == {
        "role": "user",
        "content": {"type": "text", "text": "Dear Bo, the weather is fine. Unsigned."},
    }


def test_the_server_after_double_dash_runs_on_stdio() -> None:
    done = run_cli("read", "diary://today", *STDIO_ASKING, stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("Dear diary: it rained.\n")
    done = run_cli("prompts", "--json", *STDIO_ASKING)
    assert [p["name"] for p in json.loads(done.stdout)["prompts"]] == ["letter"]
    done = run_cli("tools", *STDIO_ASKING)
    assert done.stdout == "the server 'first-hour' offers no tools\n"


def test_the_target_is_the_first_word_so_values_may_be_urls(everything: RunningServer) -> None:
    done = run_cli("call", everything.url, "perform", "action=https://example.com/x", stdin="y\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.endswith("done: https://example.com/x\n")
    done = run_cli("call", "perform", everything.url)
    assert done.returncode == 2 and "'perform' is not an http(s) URL" in done.stderr
    done = run_cli("read", everything.url)
    assert done.returncode == 2 and "missing URI" in done.stderr
    done = run_cli("tools", everything.url, "extra")
    assert done.returncode == 2 and "unexpected words: extra" in done.stderr
    done = run_cli("tools", "--jsn", everything.url)
    assert done.returncode == 2 and "unrecognized arguments: --jsn" in done.stderr


def test_a_2025_11_25_server_asks_during_the_call(tmp_path: Path) -> None:
    """The mcp 1.30.0 peer speaks only 2025-11-25: the probe finds out, and its form comes as elicitation/create."""
    peer = [str(ensure_venv("mcp1")), str(ROOT / "peers" / "legacy_mcp1_server.py"), "--stdio"]
    env = peer_env()
    done = run_cli("call", "book", "city=Paris", "--", *peer, stdin="a\n3\ny\n\n", env=env)
    assert done.returncode == 0, done.stderr
    assert "Book a stay in Paris?" in done.stdout
    assert done.stdout.endswith("booked: Paris for 3 nights\n")
    done = run_cli("tools", "--json", "--", *peer, env=env)
    assert {tool["name"] for tool in json.loads(done.stdout)["tools"]} == {"book", "echo", "session"}
    done = run_cli("prompts", "--", *peer, env=env)
    assert (done.returncode, done.stdout) == (0, "the server 'legacy-mcp1-peer' offers no prompts\n")


def test_read_and_prompt_ask_on_a_real_terminal(asking: RunningServer) -> None:
    """On a pseudo-terminal the renderer reads the keys itself; with --json the JSON still parses."""
    term = Terminal([BATON, "read", asking.url, "diary://today"], cwd=str(ROOT))
    try:
        assert "Open today's page?" in term.answer("Confirm? [y]es / [n]o:", "y")
        term.expect("Dear diary: it rained.")
        assert term.wait() == 0
    finally:
        term.close()
    term = Terminal([BATON, "prompt", "--json", asking.url, "letter", "to=Ada"], cwd=str(ROOT))
    try:
        term.answer("Confirm? [y]es / [n]o:", "n")
        term.expect("Sent: no.")
        assert term.wait() == 0
        shown = term.screen[term.cursor :]
        messages = json.loads(shown[shown.index("{") :])["messages"]
        assert messages[0]["content"]["text"] == "Dear Ada, the weather is fine. Unsigned."
    finally:
        term.close()
