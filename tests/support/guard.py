"""The `unit` marker's guard: while a `unit` test runs, starting a process or using a network socket raises.

`in_process_only(nodeid)` replaces, for the duration of its block, what every way of starting a process
ends in (`subprocess.Popen`, which asyncio's subprocesses use too, `os.fork`, `os.posix_spawn*`) and
`socket.socket.listen` and `connect` (every server and client, asyncio's included; uvloop's are not seen).
The error names the test and the fix: mark it `process` (or the service it needs), or keep it in process.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


class NotInProcess(AssertionError):
    """A `unit` test reached for a process or a listening socket."""


@contextmanager
def in_process_only(nodeid: str) -> Iterator[None]:
    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise NotInProcess(
                f"{nodeid} is marked `unit` but {what}: mark it `process` (or redis, nginx, browser), "
                "or keep it in this process (tests/support/kinds.py explains how tests are marked)"
            )

        return refused

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "_execute_child", refuse("started a subprocess"))
        for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp"):
            if hasattr(os, name):
                patch.setattr(os, name, refuse(f"called os.{name}"))
        patch.setattr(socket.socket, "listen", refuse("listened on a socket"))
        for name in ("connect", "connect_ex"):
            patch.setattr(socket.socket, name, refuse(f"called socket.{name} (a server to talk to)"))
        yield
