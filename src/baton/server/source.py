"""A handler's own source, read with `ast`: its calls on the Context parameter, and where things are in it.

The start-up checks look for `ctx.secret` / `ctx.connect` here, the registration check for the forms
passed to `ctx.elicit`, and registration problems are located by it (`file:line`). A handler without
readable source (a builtin, a lambda inside an expression, a `functools.partial`) has none.
"""

from __future__ import annotations

import ast
import inspect
import os
import textwrap
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Source:
    """A handler's parsed source: its tree, its file, and the line its source starts at."""

    tree: ast.Module
    file: str
    first_line: int

    def where(self, node: ast.AST | None = None) -> str:
        """`file:line` of a node of the tree (of the handler's first line without one)."""
        line = self.first_line + getattr(node, "lineno", 1) - 1
        return f"{self.file}:{line}"

    def context_calls(self, context_param: str, methods: tuple[str, ...]) -> Iterator[tuple[str, ast.Call | None]]:
        """Each use of `context_param.<method>` for these methods, as (method, the call when it is called)."""
        calls = {id(node.func): node for node in ast.walk(self.tree) if isinstance(node, ast.Call)}
        for node in ast.walk(self.tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr in methods
                and isinstance(node.value, ast.Name)
                and node.value.id == context_param
            ):
                yield node.attr, calls.get(id(node))

    def parameter(self, name: str) -> ast.arg | None:
        """The handler's parameter `name` (the first function of the tree is the handler)."""
        for node in ast.walk(self.tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                args = node.args
                for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                    if arg is not None and arg.arg == name:
                        return arg
                return None
        return None


def handler_source(fn: Callable[..., Any]) -> Source | None:
    """The parsed source of `fn` (unwrapped), or None when it cannot be read."""
    try:
        target = inspect.unwrap(fn)
        lines, first = inspect.getsourcelines(target)
        tree = ast.parse(textwrap.dedent("".join(lines)))
        file = inspect.getsourcefile(target) or "<unknown>"
    except (OSError, TypeError, SyntaxError, ValueError):
        return None
    return Source(tree, shown_path(file), max(first, 1))


def shown_path(file: str) -> str:
    """A file as a user names it: relative to the working directory when it is under it."""
    try:
        relative = os.path.relpath(file)
    except ValueError:  # another drive (Windows)
        return file
    return file if relative.startswith(os.pardir) else relative


def location(fn: Callable[..., Any]) -> str:
    """`file:line` where `fn` is defined (its first decorator's line), or its qualified name."""
    source = handler_source(fn)
    return source.where() if source is not None else getattr(fn, "__qualname__", repr(fn))
