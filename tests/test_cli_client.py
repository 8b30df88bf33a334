"""`baton tools` and `baton call` against real servers, over HTTP and over a stdio subprocess."""

from __future__ import annotations

import subprocess

import pytest
from support.paths import BATON, ROOT

from baton.cli_client import show
from baton.client import Tool


def run_cli(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [BATON, *args], cwd=ROOT, input=stdin, capture_output=True, text=True, timeout=60, check=False
    )


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
