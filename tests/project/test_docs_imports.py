"""The public API is stated truthfully: `baton`'s docstring lists the public modules, each has `__all__`
whose names resolve, and every import of Baton in the Python code of README.md, docs/*.md and
examples/*.py names a public module and a name in its `__all__` (or a public submodule).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

import baton

ROOT = Path(__file__).resolve().parents[2]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), *sorted((ROOT / "examples").glob("*.py"))]
FENCE = re.compile(r"^```(?:python|py)\s*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def public_modules() -> set[str]:
    """`baton` and the modules its docstring lists as public (a line "- `baton.x`: ...")."""
    listed = re.findall(r"^- `(baton(?:\.\w+)+)`:", baton.__doc__ or "", re.MULTILINE)
    return {"baton", *listed}


def _statements(code: str) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of `code`; for a snippet that is not whole Python, those of its own lines."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        found: list[ast.Import | ast.ImportFrom] = []
        lines = code.splitlines()
        for i, line in enumerate(lines):
            if re.match(r"\s*(from|import)\s+baton\b", line):
                for end in range(i + 1, len(lines) + 1):  # up to the line that closes its parentheses
                    try:
                        snippet = ast.parse("\n".join(x.strip() for x in lines[i:end]))
                    except SyntaxError:
                        continue
                    found += [n for n in snippet.body if isinstance(n, (ast.Import, ast.ImportFrom))]
                    break
        return found
    return [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))]


def imports_of(path: Path) -> list[ast.Import | ast.ImportFrom]:
    """Every import of `baton` in the Python of `path` (its fenced python blocks, for Markdown)."""
    text = path.read_text()
    blocks = [text] if path.suffix == ".py" else FENCE.findall(text)
    statements = [s for block in blocks for s in _statements(block)]
    return [
        s
        for s in statements
        if (isinstance(s, ast.ImportFrom) and (s.module or "").split(".")[0] == "baton" and not s.level)
        or (isinstance(s, ast.Import) and any(a.name.split(".")[0] == "baton" for a in s.names))
    ]


def problems(statement: ast.Import | ast.ImportFrom, public: set[str]) -> list[str]:
    """What is wrong with one import: a module that is not public, a name that is not in its `__all__`."""
    if isinstance(statement, ast.Import):
        return [f"import {a.name}: not a public module" for a in statement.names if a.name not in public]
    module = statement.module or ""
    if module not in public:
        return [f"from {module}: not a public module"]
    loaded = importlib.import_module(module)
    listed = getattr(loaded, "__all__", None)
    wrong = []
    for alias in statement.names:
        name = alias.name
        if f"{module}.{name}" in public:
            continue  # a public submodule
        if listed is None or name not in listed:
            wrong.append(f"from {module} import {name}: not in {module}.__all__")
        elif not hasattr(loaded, name):
            wrong.append(f"from {module} import {name}: listed but does not resolve")
    return wrong


def test_the_docstring_lists_the_public_modules_and_each_has_an_all_that_resolves() -> None:
    public = public_modules()
    assert {"baton.client", "baton.client.oauth", "baton.serve", "baton.testing"} <= public
    for name in sorted(public):
        module = importlib.import_module(name)
        listed = getattr(module, "__all__", None)
        assert isinstance(listed, list) and listed, f"{name} has no __all__"
        assert [n for n in listed if not hasattr(module, n)] == [], f"{name}.__all__ names what it lacks"


def test_every_package_says_what_it_exports() -> None:
    missing = [
        str(init.parent.relative_to(ROOT / "src"))
        for init in sorted((ROOT / "src" / "baton").rglob("__init__.py"))
        if "__all__" not in {t.id for n in ast.parse(init.read_text()).body for t in _targets(n)}
    ]
    assert missing == []


def _targets(node: ast.stmt) -> list[ast.Name]:
    if isinstance(node, ast.Assign):
        return [t for t in node.targets if isinstance(t, ast.Name)]
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return [node.target]
    return []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_import_the_docs_show_is_public(path: Path) -> None:
    public = public_modules()
    wrong = [f"{path.name}: {p}" for s in imports_of(path) for p in problems(s, public)]
    assert wrong == []


def test_the_docs_show_imports_at_all() -> None:
    shown = {s.module for p in SOURCES for s in imports_of(p) if isinstance(s, ast.ImportFrom)}
    assert {"baton", "baton.client", "baton.client.oauth", "baton.testing", "baton.serve"} <= shown


def test_the_check_catches_what_is_not_public(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text(
        "```python\nfrom baton import Server, Nonexistent\nfrom baton.server.core import Server\n"
        "import baton.state\nfrom baton.client import oauth, core\n...\n```\n"
        "```python\nfrom baton.client import (\n    Client,\n    Hidden,\n)\nnot python at all\n```\n"
    )
    found = [p for s in imports_of(page) for p in problems(s, public_modules())]
    assert found == [
        "from baton import Nonexistent: not in baton.__all__",
        "from baton.server.core: not a public module",
        "import baton.state: not a public module",
        "from baton.client import core: not in baton.client.__all__",
        "from baton.client import Hidden: not in baton.client.__all__",
    ]
