"""The pytest plugin of `baton.testing`, registered by the `pytest11` entry point `baton.testing.plugin` (P77).

Fixtures:
- `scripted_user`: a fresh `ScriptedUser` with no script (add one with `.on(key, ...)` / `.when(...)`);
- `fake_clock`: a `FakeClock` in force for the test, the real clock put back after it;
- `baton_era`: the era `baton_client` speaks, `"2026-07-28"`; parametrize it to run a test in both
  (`@pytest.mark.parametrize("baton_era", ["2026-07-28", "2025-11-25"])`);
- `baton_client`: a `baton.Client` bound in memory to the `Server` the test's own `baton_server`
  fixture returns, answering through `scripted_user`, closed after the test.

Imports of Baton happen inside the fixtures, so that loading the plugin costs a pytest run nothing.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from ..client import Client
    from .clock import FakeClock
    from .user import ScriptedUser


@pytest.fixture
def scripted_user() -> ScriptedUser:
    """A scripted user with no script yet."""
    from .user import ScriptedUser  # noqa: PLC0415 (pytest loads this plugin in every session; a fixture loads the kit when used)

    return ScriptedUser()


@pytest.fixture
def fake_clock() -> Iterator[FakeClock]:
    """A fake wall clock for the test's expiries, starting at the real time now."""
    from .clock import FakeClock  # noqa: PLC0415 (pytest loads this plugin in every session; a fixture loads the kit when used)

    with FakeClock() as clock:
        yield clock


@pytest.fixture
def baton_era() -> str:
    """The era `baton_client` speaks (parametrize it to run a test in both)."""
    return "2026-07-28"


@pytest.fixture
def baton_server() -> Any:
    """Define this fixture in your tests: it returns the `Server` that `baton_client` talks to."""
    raise pytest.UsageError("baton_client needs a `baton_server` fixture that returns your baton.Server")


@pytest.fixture
def baton_client(baton_server: Any, scripted_user: ScriptedUser, baton_era: Any) -> Iterator[Client]:
    """A client of `baton_server` in this process, in `baton_era`, answering through `scripted_user`."""
    from .memory import memory_client  # noqa: PLC0415 (pytest loads this plugin in every session; a fixture loads the kit when used)

    client = memory_client(baton_server, scripted_user, protocol=baton_era)
    yield client
    if client.era is not None:  # it ran in a loop that has ended: close its session in a new one
        asyncio.run(client.close())
