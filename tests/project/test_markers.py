"""The test markers: what a test declares it needs (support.markers) and the guards that hold it to that
(support.guard).

These run in process (marked `unit` by hand), inside the guard that conftest.py puts around every `unit` test.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from support.guard import WrongMarker, in_process_only, service_of, services_only
from support.markers import KINDS, TESTS, folder_marks, needs, resolve
from support.paths import BATON

pytestmark = pytest.mark.unit


# -- what a test declares ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("declared", "expected"),
    [
        (set(), {"unit"}),
        ({"process"}, {"process"}),
        ({"redis"}, {"redis"}),
        ({"process", "redis"}, {"redis"}),  # a service test starts processes too: its service says it
        ({"process", "nginx", "redis"}, {"nginx", "redis"}),  # scale-out: nginx in front, sharing a redis-server
        ({"browser", "process"}, {"browser"}),
        ({"unit", "process"}, {"unit", "process"}),  # a contradiction is kept, and refused below
    ],
)
def test_what_is_declared_gives_the_markers(declared: set[str], expected: set[str]) -> None:
    assert resolve(declared) == expected


def test_a_fixture_declares_what_it_needs_and_nothing_else() -> None:
    @needs("nginx", "redis")
    def cluster() -> None: ...

    assert cluster.__name__ == "cluster"
    with pytest.raises(ValueError, match="needs"):
        needs("unit")
    with pytest.raises(ValueError, match="needs"):
        needs()


def test_a_folders_marks_are_its_own_and_not_its_neighbours() -> None:
    assert folder_marks(TESTS / "interop" / "test_interop.py") == ("process",)
    assert folder_marks(TESTS / "bench" / "test_bench_kit.py") == ("bench",)
    assert folder_marks(TESTS / "forms" / "test_forms.py") == ()
    assert folder_marks(TESTS / "test_paths.py") == ()
    assert folder_marks(Path("/elsewhere/interop/test_x.py")) == ()


def test_every_test_of_the_run_has_one_kind_or_its_services(request: pytest.FixtureRequest) -> None:
    for item in request.session.items:
        marked = {kind for kind in KINDS if item.get_closest_marker(kind) is not None}
        assert marked in ({"unit"}, {"process"}) or (marked and marked <= {"redis", "nginx", "browser"}), (
            item.nodeid,
            marked,
        )


def test_the_fixtures_that_start_services_declare_them(request: pytest.FixtureRequest) -> None:
    needs_of = {"redis_server": {"redis"}, "chromium": {"browser"}, "serve": {"process"}}
    for item in request.session.items:
        for name in set(needs_of) & set(getattr(item, "fixturenames", ())):
            marked = {kind for kind in KINDS if item.get_closest_marker(kind) is not None}
            assert marked == needs_of[name] or (marked - {"process"} and "unit" not in marked), (item.nodeid, name)


# -- the guard -------------------------------------------------------------------------------------------


def test_a_subprocess_is_refused_and_names_the_test() -> None:
    with in_process_only("tests/x.py::test_y"), pytest.raises(WrongMarker, match=r"tests/x.py::test_y.*mark it"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)


def test_an_asyncio_subprocess_is_refused() -> None:
    async def start() -> None:
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")

    with in_process_only("t"), pytest.raises(WrongMarker, match="subprocess"):
        asyncio.run(start())


def test_listening_and_connecting_are_refused_and_put_back_after() -> None:
    before = (socket.socket.listen, socket.socket.connect, subprocess.Popen._execute_child)  # type: ignore[attr-defined]
    with in_process_only("t"):
        with socket.socket() as sock, pytest.raises(WrongMarker, match="listened"):
            sock.bind(("127.0.0.1", 0))
            sock.listen()
        with socket.socket() as sock, pytest.raises(WrongMarker, match="connect"):
            sock.connect(("127.0.0.1", 9))
    assert (socket.socket.listen, socket.socket.connect, subprocess.Popen._execute_child) == before  # type: ignore[attr-defined]


def test_in_process_work_is_not_disturbed() -> None:
    with in_process_only("t"):
        assert asyncio.run(asyncio.sleep(0, "done")) == "done"  # the loop's self-pipe is a socketpair


@pytest.mark.parametrize(
    ("argv", "service"),
    [
        (["/usr/bin/redis-server", "--port", "0"], "redis"),
        ("redis-server --port 0", "redis"),
        ([b"/usr/sbin/nginx", b"-c", b"x"], "nginx"),
        (["/usr/bin/chromium", "--headless"], "browser"),
        (["/venv/lib/python3.11/site-packages/playwright/driver/node", "cli.js", "run-driver"], "browser"),
        ([BATON, "serve", "examples/everything.py"], None),
        ([sys.executable, "-c", "print('nginx redis-server')"], None),
    ],
)
def test_the_services_a_command_line_starts(argv: Any, service: str | None) -> None:
    assert service_of(argv) == service


def test_a_service_the_test_is_not_marked_with_is_refused() -> None:
    with services_only("tests/x.py::test_y", {"nginx"}), pytest.raises(WrongMarker, match=r"starts redis.*`redis`"):
        subprocess.run(["redis-server", "--version"], check=False)
