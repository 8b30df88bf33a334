"""The project's Python files parsed once per test process, for the tests that scan all of them: the structure
tests (tests/project/test_structure*.py, test_tests_layout.py) and the "built nowhere else" scans of
tests/test_web.py and tests/test_oauth_http.py.

A parse of src/baton or of tests/ costs about a second of CPU. Those modules are one unit of work
(support.scheduling's `source-scans`), so one worker parses each file once, instead of each worker parsing
every file for whichever scan it drew. The trees are shared: a scan reads them and never changes them.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of the Python file at `path` (parsed on first use in this process; do not change it)."""
    return ast.parse(path.read_bytes(), str(path))


@functools.cache
def walked(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node under `tree`, in `ast.walk`'s order, listed once per tree: the scans each walk every module."""
    return tuple(ast.walk(tree))
