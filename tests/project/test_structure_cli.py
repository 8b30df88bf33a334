"""The command line's shape: every `baton` command lives in `baton/cli/`, one module per command, added to one
argparse parser as a subparser and run by the function its subparser names; nothing reads the words first."""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect

from support.paths import ROOT
from support.source_tree import parsed

SRC = ROOT / "src" / "baton"
# the module (`baton.cli.main` as an attribute is the function `baton.cli` re-exports)
cli_main = importlib.import_module("baton.cli.main")
CLI = SRC / "cli"


def _subparsers() -> dict[str, argparse.ArgumentParser]:
    top = cli_main.parser()
    [commands] = [a for a in top._actions if isinstance(a, argparse._SubParsersAction)]
    return dict(commands.choices)


def test_every_command_is_a_subparser_run_from_its_own_module_in_baton_cli() -> None:
    commands = _subparsers()
    assert {"serve", "install", "bridge", "dev", "keys", "tools", "call", "skills"} <= set(commands)
    for name, sub in commands.items():
        run = sub.get_default("run")
        assert callable(run), f"baton {name}: its subparser sets no run function"
        assert sub.get_default("command_parser") is sub, name
        module = inspect.getmodule(run)
        assert module is not None and module.__file__ is not None
        path = inspect.getfile(module)
        assert path.startswith(str(CLI)), f"baton {name} runs from {path}, outside src/baton/cli/"
        # one module per command: named after it, or the client commands' package (one parser shape for all)
        assert module.__name__ in (f"baton.cli.{name}", "baton.cli.client_commands"), (name, module.__name__)


def test_main_dispatches_through_argparse_only() -> None:
    """No word of the command line is compared with a command's name before (or instead of) argparse."""
    tree = ast.parse((CLI / "main.py").read_text())
    names = set(_subparsers())
    literals = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not names & literals, f"baton.cli.main names commands itself: {sorted(names & literals)}"
    main = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "main")
    calls = {n.func.attr for n in ast.walk(main) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)}
    assert "parse_known_args" in calls and "run" in calls


def test_nothing_outside_baton_cli_parses_a_command_line() -> None:
    outside = [
        path.relative_to(SRC).as_posix()
        for path in sorted(SRC.rglob("*.py"))
        if CLI not in path.parents
        and any(
            isinstance(node, ast.Import | ast.ImportFrom)
            and "argparse" in ([a.name for a in node.names] if isinstance(node, ast.Import) else [node.module])
            for node in ast.walk(parsed(path))
        )
    ]
    assert outside == [], f"argparse used outside src/baton/cli/: {outside}"
