"""The package's names: one class (or type alias) per name across `baton`, and the 2025-11-25 version named by its
date or as the handshake era, never "legacy" (which the spec keeps for the deprecated `enumNames`)."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections import defaultdict
from pathlib import Path

import pytest
from support.paths import ROOT
from support.source_tree import parsed

SRC = ROOT / "src" / "baton"
# The one "legacy" the code may say: MCP's own name for titled enums through `enumNames` (LegacyTitledEnumSchema).
LEGACY_ALLOWED = {"legacy_titles"}
# This file, and the test of bench/legacy_compare (a benchmark's command name, kept as users run it).
EXEMPT = {"test_structure.py", "test_bench_legacy.py"}


def _modules() -> list[Path]:
    return sorted(SRC.rglob("*.py"))


def _top_level_names(tree: ast.Module) -> list[tuple[str, int]]:
    """Classes and capitalised type aliases defined at a module's top level (constants in capitals excluded)."""
    found: list[tuple[str, int]] = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            found.append((node.name, node.lineno))
            continue
        target = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
        elif isinstance(node, ast.AnnAssign):
            target = node.target
        if isinstance(target, ast.Name) and target.id[:1].isupper() and not target.id.isupper():
            found.append((target.id, node.lineno))
    return found


def test_each_class_name_means_one_thing_across_the_package() -> None:
    where: dict[str, list[str]] = defaultdict(list)
    for path in _modules():
        for name, line in _top_level_names(parsed(path)):
            where[name].append(f"{path.relative_to(ROOT)}:{line}")
    twice = {name: places for name, places in where.items() if len(places) > 1}
    assert not twice, "one name, several classes or aliases (rename one, or import the other):\n" + "\n".join(
        f"  {name}: {', '.join(places)}" for name, places in sorted(twice.items())
    )


@pytest.mark.parametrize("tree", ["src", "tests", "fuzz"])
def test_no_identifier_or_module_calls_2025_11_25_legacy(tree: str) -> None:
    found: list[str] = []
    for path in sorted((ROOT / tree).rglob("*.py")):
        if path.name in EXEMPT:
            continue
        if "legacy" in path.stem:
            found.append(f"{path.relative_to(ROOT)} (module name)")
        tokens = tokenize.generate_tokens(io.StringIO(path.read_text()).readline)
        for tok in tokens:
            if tok.type == tokenize.NAME and "legacy" in tok.string.lower() and tok.string not in LEGACY_ALLOWED:
                found.append(f"{path.relative_to(ROOT)}:{tok.start[0]}: {tok.string}")
    assert not found, "say 2025-11-25 or handshake, not legacy:\n" + "\n".join(found[:40])


def _imports(tree: ast.Module, module: str, is_package: bool, modules: set[str]) -> set[str]:
    """The baton modules `module` imports, at its top or inside functions alike (not under TYPE_CHECKING)."""
    typing_only = {
        id(node)
        for branch in ast.walk(tree)
        if isinstance(branch, ast.If) and isinstance(branch.test, ast.Name) and branch.test.id == "TYPE_CHECKING"
        for node in ast.walk(branch)
    }
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = module.split(".") if is_package else module.split(".")[:-1]
            if node.level:
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                found.add(f"{target}.{alias.name}" if f"{target}.{alias.name}" in modules else target)
    return {name for name in found if name in modules and name != module}


def _cycles() -> list[list[str]]:
    """Groups of baton modules that import each other, directly or around a loop (Tarjan's components)."""
    files = {}
    for path in _modules():
        parts = list(path.relative_to(SRC.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        files[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    names = set(files)
    graph = {name: _imports(parsed(path), name, pkg, names) for name, (path, pkg) in files.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for nxt in graph[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for name in sorted(graph):
        if name not in index:
            visit(name)
    return groups


def test_no_import_cycle_lazy_or_not() -> None:
    """`Server.asgi()` and `Server.run()` import the serving layer inside the methods; the serving layer and the
    connect kit name `Server` only for types, so even that goes one way."""
    cycles = _cycles()
    assert not cycles, "modules that import each other (lazily or not):\n" + "\n".join(map(str, cycles))


def test_the_deployment_example_and_guide_name_what_exists() -> None:
    """Issue 41 item 9: the nginx example names only test files that exist, and the deployment guide names the
    extra that Redis needs."""
    example = (ROOT / "examples" / "deploy" / "nginx.conf").read_text()
    named = set(re.findall(r"tests/[\w/]+\.py", example))
    assert named, "the nginx example no longer names the tests that run it"
    assert all((ROOT / name).is_file() for name in named), sorted(n for n in named if not (ROOT / n).is_file())
    assert "pip install -e '.[redis]'" in (ROOT / "docs" / "deploy.md").read_text()
