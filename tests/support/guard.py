"""The markers' guards: a test that does what its markers say it does not fails, naming the marker it needs.

`in_process_only(nodeid)` is around every `unit` test: it replaces what every way of starting a process
ends in (`subprocess.Popen`, which asyncio's subprocesses use too, `os.fork`, `os.posix_spawn*`) and
`socket.socket.listen` and `connect` (every server and client, asyncio's included; uvloop's are not seen).
`services_only(nodeid, marked)` is around every other test: a subprocess that is redis-server, nginx,
Chromium or Playwright's driver must be one of the services the test is marked with.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest


class WrongMarker(AssertionError):
    """A test did what its markers say it does not: a `unit` test started a process, or a test started a service."""


def service_of(argv: Any) -> str | None:
    """The marker of the system service a command line starts (redis, nginx, browser), if it starts one."""
    parts = [os.fsdecode(part) for part in ([argv] if isinstance(argv, (str, bytes, os.PathLike)) else argv)]
    program = os.path.basename(parts[0].split()[0]) if parts and parts[0].strip() else ""
    if program == "redis-server":
        return "redis"
    if program == "nginx":
        return "nginx"
    if program == "chromium" or any("playwright" in part for part in parts[:2]):  # Playwright's driver
        return "browser"
    return None


@contextmanager
def in_process_only(nodeid: str) -> Iterator[None]:
    def refuse(what: str) -> Any:
        def refused(*args: Any, **kwargs: Any) -> Any:
            raise WrongMarker(
                f"{nodeid} is marked `unit` but {what}: mark it `process` (or redis, nginx, browser), "
                "or keep it in this process (tests/support/markers.py says how tests declare it)"
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


@contextmanager
def services_only(nodeid: str, marked: set[str]) -> Iterator[None]:
    """Refuse, for the block, a subprocess that starts a system service `marked` does not name."""
    start = subprocess.Popen._execute_child  # type: ignore[attr-defined]

    def checked(self: subprocess.Popen[Any], args: Any, *rest: Any, **kwargs: Any) -> Any:
        service = service_of(args)
        if service is not None and service not in marked:
            raise WrongMarker(
                f"{nodeid} starts {service} but is not marked `{service}`: mark it "
                "(tests/support/markers.py says how tests declare it)"
            )
        return start(self, args, *rest, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess.Popen, "_execute_child", checked)
        yield
