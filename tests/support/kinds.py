"""What a test needs to run, read from its code: the markers `unit`, `process`, `redis`, `nginx`, `browser`.

`kinds(item)` follows the test function, its class, its fixtures and its parameters, and every function,
class and module of tests/ they name (transitively), and returns what it found (`kinds_of(objects)` does
the same for any functions and classes):

- `redis`, `nginx`, `browser`: it reaches the helper that runs that system service (support.redis_server,
  scaleout's nginx, support.browser, or the redis/playwright libraries themselves);
- `process`: otherwise, it starts a subprocess or serves or connects on a socket (subprocess, asyncio's
  subprocesses and servers, uvicorn, socket; every helper of tests/support/ that starts one reaches these);
- `unit`: neither: everything runs in this process, with no socket and no system service.

A test that carries one of these markers itself (`pytestmark`, `pytest.param(..., marks=...)`) keeps its own.
conftest.py's guard (support.guard) makes `unit` truthful: a `unit` test that starts a process or uses a network
socket fails.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Iterable
from pathlib import Path
from types import CodeType, FunctionType, ModuleType
from typing import Any

import pytest

from support.paths import BATON

TESTS = Path(__file__).resolve().parents[1]
KINDS = ("unit", "process", "redis", "nginx", "browser")
SERVICES = ("redis", "nginx", "browser")

# Objects of tests/ that stand for a system service (a module name, or module and object name).
_SERVICE_HELPERS: dict[tuple[str, str | None], str] = {
    ("support.redis_server", None): "redis",
    ("support.browser", None): "browser",
    ("scaleout", "nginx_binary"): "nginx",
}
# Libraries whose use means the kind (the first dotted part of an object's module).
_LIBRARY_KINDS = {
    "subprocess": "process",
    "pty": "process",
    "multiprocessing": "process",
    "socket": "process",
    "socketserver": "process",
    "http.server": "process",
    "uvicorn": "process",
    "redis": "redis",
    "playwright": "browser",
}
# Attribute names that start a process or open a socket wherever they are called from (asyncio's, the loop's).
_PROCESS_NAMES = frozenset(
    {
        "Popen",
        "create_subprocess_exec",
        "create_subprocess_shell",
        "subprocess_exec",
        "subprocess_shell",
        "start_server",
        "start_unix_server",
        "create_server",
        "create_unix_server",
        "open_connection",
        "open_unix_connection",
        "create_connection",
        "create_unix_connection",
        "listen",
        "fork",
        "posix_spawn",
        "posix_spawnp",
    }
)


def _is_command(name: str, scope: dict[str, Any]) -> bool:
    """`sys.executable` or support.paths.BATON: a command line, for a subprocess or Baton's stdio client."""
    return (name == "executable" and scope.get("sys") is sys) or (name == "BATON" and scope.get(name) == BATON)


def _in_tests(obj: Any) -> bool:
    """Whether `obj` is defined under tests/; remembered per file, as every test's walk asks again."""
    code = getattr(obj, "__code__", None)
    filename = code.co_filename if isinstance(code, CodeType) else None
    if filename is None:
        try:
            filename = inspect.getsourcefile(obj)
        except TypeError:
            return False
    return filename is not None and _file_in_tests(filename)


@functools.cache
def _file_in_tests(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(TESTS)


class _Walk:
    """One test's walk; `found` collects the kinds seen (empty: unit)."""

    def __init__(self) -> None:
        self.found: set[str] = set()
        self.seen: set[int] = set()

    def visit(self, obj: Any) -> None:
        obj = getattr(obj, "__func__", obj)  # a bound method: its function
        if isinstance(obj, FunctionType):
            obj = inspect.unwrap(obj)  # what @contextmanager or @functools.wraps wraps
        if id(obj) in self.seen:
            return
        self.seen.add(id(obj))
        module = getattr(obj, "__name__", "") if isinstance(obj, ModuleType) else getattr(obj, "__module__", "")
        module = module or ""
        name = None if isinstance(obj, ModuleType) else getattr(obj, "__name__", None)
        for key in ((module, None), (module, name)):
            if key in _SERVICE_HELPERS:
                self.found.add(_SERVICE_HELPERS[key])
                return
        library = _LIBRARY_KINDS.get(module, _LIBRARY_KINDS.get(module.partition(".")[0]))
        if library is not None:
            self.found.add(library)
            return
        if isinstance(obj, ModuleType) or not _in_tests(obj):
            return  # a module is followed through the names the code takes from it (see `code`)
        if isinstance(obj, type):
            for cls in obj.__mro__:  # a subclass of a helper (class Peer(StdioPeer)) does what the helper does
                for member in vars(cls).values() if _in_tests(cls) else ():
                    self.visit(getattr(member, "__func__", getattr(member, "fget", member)))
        elif isinstance(obj, FunctionType):
            self.code(obj.__code__, obj.__globals__)

    def code(self, code: CodeType, scope: dict[str, Any]) -> None:
        modules = [v for n in code.co_names if isinstance(v := scope.get(n), ModuleType) and _in_tests(v)]
        for name in code.co_names:
            if name in _PROCESS_NAMES or _is_command(name, scope):
                self.found.add("process")
            if name in scope:
                self.visit(scope[name])
            for module in list(modules):  # `support.terminal.Terminal(...)`: what a tests/ module imported whole has
                value = vars(module).get(name)
                if isinstance(value, ModuleType) and _in_tests(value):
                    modules += [] if value in modules else [value]
                elif value is not None:
                    self.visit(value)
        for const in code.co_consts:
            if isinstance(const, CodeType):
                self.code(const, scope)


def kinds_of(objects: Iterable[Any]) -> set[str]:
    """The kinds that running `objects` (functions, classes, fixtures' functions) needs: {"unit"}, {"process"},
    or the system services among redis, nginx, browser."""
    found: set[str] = set()
    for obj in objects:
        found |= _found(obj)
    services = found & set(SERVICES)
    if services:
        return services
    return {"process"} if "process" in found else {"unit"}


# What a walk from one object finds, by the object's id (the object is kept, so the id stays its own). What
# several objects reach is the union of what each reaches, so the fixtures and helpers that thousands of tests
# share are walked once per collection, not once per test (the whole suite's marking takes well under a second).
_FOUND: dict[int, tuple[Any, frozenset[str]]] = {}


def _found(obj: Any) -> frozenset[str]:
    known = _FOUND.get(id(obj))
    if known is None or known[0] is not obj:
        walk = _Walk()
        walk.visit(obj)
        known = _FOUND[id(obj)] = (obj, frozenset(walk.found))
    return known[1]


def kinds(item: pytest.Item) -> set[str]:
    """The markers `item` should get: none when it carries one of KINDS itself, else `kinds_of` what it runs."""
    if any(item.get_closest_marker(kind) is not None for kind in KINDS):
        return set()
    if not isinstance(item, pytest.Function):
        return {"process"}  # not a test function: nothing to read, so nothing promised
    objects: list[Any] = [item.obj, item.cls, getattr(item.module, "setup_module", None)]
    objects += [fixture.func for defs in item._fixtureinfo.name2fixturedefs.values() for fixture in defs]
    callspec = getattr(item, "callspec", None)
    objects += list(callspec.params.values()) if callspec is not None else []
    return kinds_of(objects)
