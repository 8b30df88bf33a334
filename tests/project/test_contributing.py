"""The habits CONTRIBUTING.md describes stay true: `.pre-commit-config.yaml` runs exactly the commands of
`./dev check`, from .venv, with nothing to fetch; and every command CONTRIBUTING.md shows names a `./dev`
subcommand, a tool, a file and a fuzz target that exist."""

from __future__ import annotations

import re
import shlex

import pytest
import yaml
from support import processes
from support.paths import ROOT

CONTRIBUTING = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
DEV = (ROOT / "dev").read_text(encoding="utf-8")


def _command(text: str) -> str:
    """A command as words, without the paths and arguments the runner adds (`.`, "$@", `exec`)."""
    words = [w for w in shlex.split(text) if w not in (".", "$@")]
    return " ".join(words[1:] if words[:1] == ["exec"] else words)


def dev_check_commands() -> list[str]:
    """The tools `./dev check` runs: its `lint` function, then the tests of its `check)` case."""
    lint = DEV.split("lint() {\n", 1)[1].split("\n}", 1)[0]
    check = DEV.split("    check)\n", 1)[1].split(";;", 1)[0]
    lines = [line.split("#", 1)[0].strip() for line in (lint + "\n" + check).splitlines()]
    return [_command(line) for line in lines if line.removeprefix("exec ").startswith(".venv/bin/")]


def hook_commands() -> list[str]:
    config = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    assert [repo["repo"] for repo in config["repos"]] == ["local"]  # nothing fetched
    hooks = config["repos"][0]["hooks"]
    assert {hook["language"] for hook in hooks} == {"system"}
    return [_command(" ".join([hook["entry"], *hook.get("args", [])])) for hook in hooks]


def test_pre_commit_runs_what_dev_check_runs() -> None:
    assert dev_check_commands() == [
        ".venv/bin/ruff check",
        ".venv/bin/ruff format --check",
        ".venv/bin/mypy --strict src/",
        ".venv/bin/lint-imports",
        ".venv/bin/python -m pytest -m unit -q",
    ]
    assert hook_commands() == dev_check_commands()


@pytest.mark.process
def test_pre_commit_accepts_the_config() -> None:
    done = processes.run(
        [str(ROOT / ".venv/bin/pre-commit"), "validate-config", ".pre-commit-config.yaml"],
        cwd=ROOT,
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr


def shown_commands() -> list[list[str]]:
    """The commands of CONTRIBUTING.md's `sh` blocks, as words, comments left out."""
    blocks = re.findall(r"```sh\n(.*?)```", CONTRIBUTING, re.S)
    lines = [line.split("  #", 1)[0].strip() for block in blocks for line in block.splitlines()]
    return [shlex.split(part) for line in lines if line for part in line.split("&&")]


def test_every_command_contributing_shows_exists() -> None:
    subcommands = set(re.findall(r"^    ([a-z]+)\)$", DEV, re.M))
    commands = shown_commands()
    assert len(commands) >= 10
    for shown in commands:
        words = [w for w in shown if "=" not in w or w.startswith("-")]  # MYPYPATH=... before a command
        if words[0] == "./dev":
            assert words[1] in subcommands, words
            if words[1] == "fuzz" and not words[2].startswith("-"):
                assert (ROOT / "fuzz" / "targets" / f"{words[2]}.py").is_file(), words
        else:
            assert (ROOT / words[0]).is_file(), words  # a tool of .venv, or a script of bench/
        paths = [w for w in words[1:] if "/" in w and not w.startswith(("-", "."))]
        assert all((ROOT / p).exists() for p in paths), words
    assert set(re.findall(r"\./dev ([a-z]+)", CONTRIBUTING)) <= subcommands


def test_the_example_commit_subject_keeps_to_72_characters() -> None:
    example = CONTRIBUTING.split("## Commits", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    subject, blank, *body = example.splitlines()
    assert len(subject) <= 72 and blank == "" and body
    assert "at most 72 characters" in CONTRIBUTING
