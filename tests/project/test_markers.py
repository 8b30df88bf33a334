"""The test markers: what support.kinds reads from a test's code, and the `unit` marker's guard (support.guard).

These run in process (marked `unit` by hand: their code names what they classify and refuse, and only names
it), inside the guard that conftest.py puts around every `unit` test.
"""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys
from typing import Any

import pytest
import support.terminal
from scaleout import Cluster
from support.browser import launched_chromium
from support.guard import WrongMarker, in_process_only, service_of, services_only
from support.kinds import KINDS, kinds_of
from support.paths import BATON
from support.redis_server import RedisServer
from support.serve import start_server
from support.stdio import StdioPeer
from support.stub_http import Stub

pytestmark = pytest.mark.unit


# -- what a test's code needs ------------------------------------------------------------------------------


def pure() -> int:
    return sum(range(3))


def serves(tmp: Any) -> None:
    start_server("examples/everything.py", port=1, log=tmp)


def twice_removed() -> None:  # reaches the process through a helper of this module
    serves(None)


def stubbed() -> Stub:  # a server in this process, on a real loopback socket
    return Stub({})


def on_a_terminal() -> None:  # a helper module imported whole
    support.terminal.Terminal([BATON])


class Peer(StdioPeer):  # a subclass of a helper does what the helper does
    pass


def with_redis() -> RedisServer:
    return RedisServer(None)  # type: ignore[arg-type]


def through_the_stdio_client() -> list[str]:  # a command line, for a client that starts it
    return [sys.executable, "-c", "pass"]


@pytest.mark.parametrize(
    ("objects", "expected"),
    [
        ([pure], {"unit"}),
        ([serves], {"process"}),
        ([twice_removed], {"process"}),
        ([stubbed], {"process"}),
        ([on_a_terminal], {"process"}),
        ([Peer], {"process"}),
        ([through_the_stdio_client], {"process"}),
        ([with_redis], {"redis"}),
        ([launched_chromium], {"browser"}),
        ([Cluster], {"nginx", "redis"}),  # scale-out: three instances behind nginx, sharing a redis-server
        ([pure, with_redis, serves], {"redis"}),  # a service test starts processes too: its service says it
    ],
    ids=lambda value: "+".join(getattr(o, "__name__", str(o)) for o in value) if isinstance(value, list) else None,
)
def test_kinds_read_from_the_code(objects: list[Any], expected: set[str]) -> None:
    assert kinds_of(objects) == expected


def test_every_test_of_the_run_has_one_kind_or_its_services(request: pytest.FixtureRequest) -> None:
    for item in request.session.items:
        marked = {kind for kind in KINDS if item.get_closest_marker(kind) is not None}
        assert marked in ({"unit"}, {"process"}) or (marked and marked <= {"redis", "nginx", "browser"}), (
            item.nodeid,
            marked,
        )


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
