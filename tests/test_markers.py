"""The `unit` marker's guard (tests/support/guard.py): inside it, processes and network sockets are refused."""

from __future__ import annotations

import asyncio
import socket
import subprocess
import sys

import pytest
from support.guard import NotInProcess, in_process_only


def test_a_subprocess_is_refused_and_names_the_test() -> None:
    with in_process_only("tests/x.py::test_y"), pytest.raises(NotInProcess, match=r"tests/x.py::test_y.*mark it"):
        subprocess.run([sys.executable, "-c", "pass"], check=False)


def test_an_asyncio_subprocess_is_refused() -> None:
    async def start() -> None:
        await asyncio.create_subprocess_exec(sys.executable, "-c", "pass")

    with in_process_only("t"), pytest.raises(NotInProcess, match="subprocess"):
        asyncio.run(start())


def test_listening_and_connecting_are_refused_and_restored_after() -> None:
    with in_process_only("t"):
        with socket.socket() as sock, pytest.raises(NotInProcess, match="listened"):
            sock.bind(("127.0.0.1", 0))
            sock.listen()
        with socket.socket() as sock, pytest.raises(NotInProcess, match="connect"):
            sock.connect(("127.0.0.1", 9))
    assert socket.socket.listen is not None and "refused" not in socket.socket.listen.__qualname__
    assert "refused" not in subprocess.Popen._execute_child.__qualname__  # type: ignore[attr-defined]


def test_in_process_work_is_not_disturbed() -> None:
    with in_process_only("t"):
        assert asyncio.run(asyncio.sleep(0, "done")) == "done"  # the loop's self-pipe is a socketpair
