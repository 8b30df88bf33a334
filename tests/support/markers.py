"""What a test needs to run, as it declares it: the markers `unit`, `process`, `redis`, `nginx`, `browser`.

A test is `unit` (everything in pytest's own process: no subprocess, no socket, no system service) unless it
declares more, in one of three ways, all read by `kinds(item)` at collection:

- a fixture it uses, directly or through other fixtures, declares it with `@needs(...)` under its
  `@pytest.fixture` (tests/conftest.py's `redis_server` needs `redis`, `chromium` `browser`, `serve`
  `process`; tests/scaleout.py's `cluster` needs `nginx` and `redis`);
- a marker on the test, its class or its module (`pytestmark = pytest.mark.process`), or on a parameter
  (`pytest.param("redis", marks=pytest.mark.redis)`), a module marked so holding only such tests;
- its folder (FOLDER_MARKS: every test of tests/interop/ and tests/conformance/ runs peers in subprocesses).

A test that needs a system service starts processes too; it is marked with its services only, so that
`-m process` selects what needs nothing installed system-wide. Nothing is guessed from a test's code:
support.guard makes the declaration true instead. Around a `unit` test, starting a process or using a network
socket fails, naming the marker to add; around any test, starting redis-server, nginx or Chromium without
its marker fails.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import pytest

KINDS = ("unit", "process", "redis", "nginx", "browser")
SERVICES = ("redis", "nginx", "browser")
TESTS = Path(__file__).resolve().parents[1]

# Markers every test of a folder of tests/ gets: the folder's tests all do what the marker says.
FOLDER_MARKS: dict[str, tuple[str, ...]] = {
    "interop": ("process",),  # the peer SDKs, each in its venv
    "conformance": ("process",),  # the official suite's node runner, the public fuzzer
    "bench": ("bench",),  # the tests of bench/'s scripts (their kind is declared as any test's)
}

_NEEDS = "_baton_test_needs"
F = TypeVar("F", bound=Callable[..., Any])


def needs(*kinds: str) -> Callable[[F], F]:
    """Declare what a fixture needs (`@needs("redis")` under `@pytest.fixture`): every test using it gets it."""
    unknown = set(kinds) - set(KINDS[1:])
    if not kinds or unknown:
        raise ValueError(f"needs() takes some of {KINDS[1:]}, not {sorted(unknown) or 'nothing'}")

    def declare(func: F) -> F:
        setattr(func, _NEEDS, frozenset(kinds))
        return func

    return declare


def resolve(declared: Iterable[str]) -> set[str]:
    """The kind markers for what a test declared: its services if any, else `process`, else `unit`.

    `unit` declared beside anything else is kept beside it, which the suite refuses (tests/project/test_markers.py).
    """
    found = set(declared)
    services = found & set(SERVICES)
    kinds = services or ({"process"} if "process" in found else {"unit"})
    return kinds | ({"unit"} & found)


@functools.cache  # asked twice for each of 3,000 tests, of some 150 files: resolving a path walks the disk
def folder_marks(path: Path) -> tuple[str, ...]:
    """The markers FOLDER_MARKS gives the tests of the file at `path`."""
    try:
        parts = path.resolve().relative_to(TESTS).parts
    except ValueError:
        return ()
    return FOLDER_MARKS.get(parts[0], ()) if len(parts) > 1 else ()


def kinds(item: pytest.Item) -> set[str]:
    """The kind markers `item` gets (the ones it carries included): see the module's docstring."""
    declared = {mark.name for mark in item.iter_markers() if mark.name in KINDS}
    declared |= set(folder_marks(item.path)) & set(KINDS)
    fixtureinfo = getattr(item, "_fixtureinfo", None)
    if fixtureinfo is None:
        return resolve(declared or {"process"})  # not a test function (a plugin's item): nothing read, nothing promised
    for name in fixtureinfo.names_closure:
        for fixturedef in fixtureinfo.name2fixturedefs.get(name, ()):
            declared |= getattr(fixturedef.func, _NEEDS, frozenset())
    return resolve(declared)
