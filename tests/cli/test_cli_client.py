"""`baton tools` and `baton call` against real servers, over HTTP and over a stdio subprocess."""

from __future__ import annotations

import subprocess
import time

import pytest
from support import processes
from support.paths import BATON, ROOT, SERVERS
from support.terminal import ENTER, Terminal

from baton.cli.client_commands import show
from baton.client import Tool


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return processes.run([BATON, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=60, check=False)


def test_tools_lists_names_and_parameters(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve("examples/projects.py")
    done = run_cli("tools", server.url)
    assert done.returncode == 0, done.stderr
    assert "delete_project(project_id: string)" in done.stdout
    assert "Delete a project after the user confirms." in done.stdout


def test_tools_marks_optional_parameters_as_prompts_does(capsys: pytest.CaptureFixture[str]) -> None:
    schema = {
        "type": "object",
        "properties": {"city": {"type": "string"}, "days": {"type": "integer"}, "units": {}},
        "required": ["city"],
    }
    show.tools([Tool({"name": "forecast", "inputSchema": schema}), Tool({"name": "now"})])
    assert capsys.readouterr().out == "forecast(city: string, days?: integer, units?: any)\nnow()\n"


def test_call_answers_questions_at_the_terminal(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve("examples/projects.py")
    # answer the form, say yes, send it
    done = run_cli("call", server.url, "delete_project", "project_id=apollo", stdin="a\ny\ns\n")
    assert done.returncode == 0, done.stderr
    assert "Delete project apollo?" in done.stdout
    assert done.stdout.rstrip().endswith("Deleted apollo.")


def test_call_decline_and_typed_arguments(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve("examples/everything.py")
    done = run_cli("call", server.url, "perform", "action=123", stdin="d\n")
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("not confirmed: 123")  # a string parameter stays a string


@pytest.mark.process
def test_call_over_stdio_and_tool_errors() -> None:
    done = run_cli("call", "test_error_handling", "--", BATON, "serve", "examples/everything.py", "--stdio")
    assert done.returncode == 1
    assert "intentionally returns an error" in done.stdout


def test_usage_errors_are_clear(serve) -> None:  # type: ignore[no-untyped-def]
    server = serve("examples/everything.py")
    done = run_cli("call", server.url, "no_such_tool")
    assert done.returncode == 2 and "has no tool 'no_such_tool'" in done.stderr
    done = run_cli("call", server.url, "perform", "oops")
    assert done.returncode == 2 and "key=value" in done.stderr
    done = run_cli("tools")
    assert done.returncode == 2 and "http(s) URL" in done.stderr


@pytest.mark.process
def test_protocol_is_chosen_on_every_client_command_and_a_bad_one_is_one_line() -> None:
    for command in ("tools", "call", "resources", "read", "prompts", "prompt", "dev"):
        words = [
            command,
            "--protocol",
            "2025",
            "http://127.0.0.1:9/mcp",
            *(["x"] if command in ("call", "read", "prompt") else []),
        ]
        done = run_cli(*words)
        assert done.returncode == 2, (command, done.stderr)
        assert done.stderr.splitlines() == [
            f"baton {command}: --protocol takes 2026-07-28, 2025-11-25 or auto, not '2025'"
        ], command
    stdio = ["--", BATON, "serve", "examples/everything.py", "--stdio"]
    done = run_cli("call", "--protocol", "2025-11-25", "perform", "action=x", "--answer", '*={"confirm": true}', *stdio)
    assert (done.returncode, done.stdout.strip()) == (0, "done: x"), done.stderr


@pytest.mark.process
def test_call_after_the_flow_expired_starts_again_with_the_answers_as_defaults() -> None:
    """A person who answers after the flow's lifetime is told so in one line, and asked again with the answers
    typed before as defaults: Enter keeps each, and the call completes (protocol.md P122)."""
    ttl = 3  # seconds (Server(state_ttl_s)); the real default is 600
    server = ["--", BATON, "serve", f"{SERVERS / 'guarded.py'}:server", "--stdio"]
    term = Terminal([BATON, "call", "profile", *server], cwd=str(ROOT), env={"BATON_TEST_TTL": str(ttl)})
    try:
        term.answer("(Enter = answer):", "")
        term.answer("> ", "30")
        term.answer("> ", "pro")
        term.answer("> ", "Zed")
        term.expect("Enter sends")
        time.sleep(ttl + 1.5)  # the person steps away: the state sealed with this round expires
        term.type(ENTER)
        notice = term.expect("(Enter = answer):")
        assert "the server no longer accepts this call's answers (its flow expired" in notice
        term.type(ENTER)
        assert "Enter keeps: 30" in term.answer("> ", "")
        assert "pro" in term.answer("> ", "").split("(default)")[0].splitlines()[-1]  # the plan chosen before
        assert "Enter keeps: Zed" in term.answer("> ", "")
        term.answer("Enter sends", "")
        term.expect("30/pro/Zed")
        assert term.wait() == 0
    finally:
        term.close()


@pytest.mark.process
def test_call_refused_again_after_starting_over_says_what_to_do() -> None:
    """The restart is once per call: a second refusal ends the command, exit 1, with what it means."""
    ttl = 2
    server = ["--", BATON, "serve", f"{SERVERS / 'guarded.py'}:server", "--stdio"]
    term = Terminal(
        [BATON, "call", "delete_project", "project=x", *server], cwd=str(ROOT), env={"BATON_TEST_TTL": str(ttl)}
    )
    try:
        for _ in range(2):
            term.expect("[y]es / [n]o")
            time.sleep(ttl + 1.5)
            term.type("y" + ENTER)
        term.expect("Invalid or expired requestState (refused again after the call started over")
        assert term.wait() == 1
        assert term.screen.count("the server no longer accepts this call's answers") == 1
    finally:
        term.close()


@pytest.mark.process
@pytest.mark.parametrize("protocol", ["2026-07-28", "2025-11-25"])
def test_call_acts_as_a_host_without_elicitation(protocol: str) -> None:
    """`--elicitation none` declares no elicitation, as claude.ai or Gemini CLI do (protocol.md P138): the
    example's delete_project takes its declared rung, the error, and nothing is asked at the terminal."""
    server = ["--", BATON, "serve", "examples/projects.py", "--stdio"]
    done = run_cli(
        "call", "--protocol", protocol, "--elicitation", "none", "delete_project", "project_id=apollo", *server
    )
    assert done.returncode == 1
    said = done.stdout + done.stderr
    assert "Tool delete_project needs the user to fill in a form, and this client cannot show one." in said
    assert "Delete project apollo?" not in said  # never asked
    # Form only is enough for a yes/no question: it is asked, and answered here.
    answered = ["--elicitation", "form", "--answer", '*={"confirm": true}']
    done = run_cli("call", "--protocol", protocol, *answered, "delete_project", "project_id=apollo", *server)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith("Deleted apollo.")
    bad = run_cli("call", "--elicitation", "some", "delete_project", "project_id=apollo", *server)
    assert bad.returncode == 2
    assert "--elicitation" in bad.stderr and "none" in bad.stderr
