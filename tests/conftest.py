"""Shared pytest configuration: markers, an isolated data directory, and real servers on loopback.

Every test gets one of the markers `unit`, `process`, `redis`, `nginx`, `browser` (registered in
pyproject.toml) from what it declares: the fixtures it uses (`@needs`), its own markers and its folder's
(support.markers); a `unit` test that starts a process or uses a network socket fails, and so does a test that
starts a system service it is not marked with (support.guard). The tests of bench/'s scripts (tests/bench/) are
marked `bench` besides, and run on one worker, one after the other (support.scheduling).

The tests mirror the package: tests/PKG/test_*.py test src/baton/PKG/, tests/test_X.py the top-level module
src/baton/X.py; tests/bench/, conformance/, interop/, scaleout/ and project/ hold what no one package owns
(tests/project/test_tests_layout.py holds the layout).

`./dev test` runs the suite on several pytest-xdist workers (README, "Tests"): everything a test starts is on a
port of its worker's own (support.processes.free_port) and in its own temporary directory.

Only fixtures and hooks live here; the helpers they use are in tests/support/ (imported as `support.*`).

A suite started in the background by a non-interactive shell (`./dev test &`) inherits SIGINT ignored, and so
would every process it starts: the tests that press Ctrl-C on a `baton` command would wait for nothing.
`pytest_configure` gives SIGINT its default handler back, which a started process sees as SIGINT not ignored.
"""

from __future__ import annotations

import gc
import os
import signal
import sys
import tracemalloc
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from support.browser import launched_chromium
from support.cpu_ledger import Ledger
from support.guard import in_process_only, services_only
from support.markers import SERVICES, folder_marks, kinds, needs
from support.paths import ROOT
from support.processes import free_port
from support.redis_server import RedisServer
from support.scheduling import ModuleScheduling, scope_of
from support.serve import RunningServer, start_for_module, start_server
from support.slow import slow_modules

# The test modules stay one flat namespace, as when they sat side by side in tests/: pytest imports each by its
# basename (its "prepend" import mode: no __init__.py, so basenames are unique, tests/project/test_tests_layout.py),
# and a few take helpers from another folder's module (`from test_http_handshake import rpc`).
TESTS = Path(__file__).parent
sys.path[1:1] = [str(folder) for folder in sorted(TESTS.iterdir()) if any(folder.glob("test_*.py"))]

# The suite runs on 8 workers sharing two cores, often beside other load: hypothesis's timing checks (an input
# drawn slowly, an example over a deadline) would then fail a property that holds. The properties still run in
# full; only the clock is not held against them.
settings.register_profile("baton", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("baton")


# Every node the tests start (the conformance harness, the Inspector, the TypeScript SDK, Playwright's driver)
# keeps V8's compiled code here between processes: a conformance harness start costs 0.42 s of CPU, not 0.55.
os.environ.setdefault("NODE_COMPILE_CACHE", str(ROOT / ".cache" / "node-compile-cache"))
# A data directory or keys of the shell's never reach a test or a server it starts: each test gets its own
# (`_isolated_data_dir`), and a server a module fixture starts before that keeps its files beside its log
# (support.serve.server_environment), never in the developer's ~/.local/share/baton.
for _inherited in ("BATON_DATA_DIR", "BATON_STATE_KEYS"):
    os.environ.pop(_inherited, None)


def pytest_configure(config: pytest.Config) -> None:
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    if os.environ.get("BATON_TEST_CPU"):
        config.pluginmanager.register(Ledger(Path(os.environ["BATON_TEST_CPU"])), "baton-cpu-ledger")
    if os.environ.get("BATON_TEST_GC"):
        config.pluginmanager.register(CollectAfterEachTest(), "baton-collect-after-each-test")


@pytest.hookimpl(tryfirst=True)
def pytest_runtestloop(session: pytest.Session) -> None:
    # In each xdist worker too (pytest_collection_finish ran in none of them), once collection is over.
    if os.environ.get("BATON_TEST_TRACEMALLOC"):  # where a leaked file, socket or loop was made (pyproject.toml)
        tracemalloc.start(int(os.environ["BATON_TEST_TRACEMALLOC"]))  # not during collection, which it slows tenfold


class CollectAfterEachTest:
    """`BATON_TEST_GC=1`: a leak is collected, so reported, in the test that made it (CONTRIBUTING, "Test")."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield
        gc.collect()


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    # The modules whose tests took longest (tests/slow_tests.txt) go to the xdist workers first, each module's
    # tests kept together and in order (support.scheduling hands a worker a module at a time).
    weight = slow_modules()
    items.sort(key=lambda item: -weight.get(scope_of(item.nodeid), 0.0))
    for item in items:
        for kind in sorted(kinds(item) | set(folder_marks(item.path))):
            if item.get_closest_marker(kind) is None:
                item.add_marker(kind)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> ModuleScheduling:
    """Under `-n N`, a worker takes a module (or a group of them) at a time (support.scheduling)."""
    return ModuleScheduling(config, log)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, object, object]:
    if item.get_closest_marker("unit") is not None:
        guard = in_process_only(item.nodeid)
    else:
        guard = services_only(item.nodeid, {kind for kind in SERVICES if item.get_closest_marker(kind) is not None})
    with guard:
        return (yield)


@pytest.fixture(autouse=True)
def _isolated_data_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every test gets its own data directory, so no key file is shared by accident."""
    monkeypatch.setenv("BATON_DATA_DIR", str(tmp_path_factory.mktemp("baton-data")))
    monkeypatch.delenv("BATON_STATE_KEYS", raising=False)


@pytest.fixture(scope="module")
@needs("redis")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisServer]:
    """A real redis-server on a loopback port, one per test module (the ledger and store tests)."""
    server = RedisServer(tmp_path_factory.mktemp("redis"))
    server.start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
@needs("browser")
def chromium() -> Iterator[Any]:
    """Debian's headless Chromium, one per test module (each test opens its own contexts)."""
    with launched_chromium() as browser:
        yield browser


@pytest.fixture(scope="module")
@needs("process")
def everything(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    """examples/everything.py on loopback, one for the module's tests, which only call, read and list: it keeps
    nothing between requests (a test that changes a server starts its own with `serve`)."""
    with start_for_module(tmp_path_factory, "examples/everything.py") as server:
        yield server


@pytest.fixture
@needs("process")
def serve(tmp_path: Path) -> Iterator[Callable[..., RunningServer]]:
    """Start `baton serve TARGET --http 127.0.0.1:PORT` (stopped after the test)."""
    started: list[RunningServer] = []

    def start(target: str, *args: str, env: dict[str, str] | None = None) -> RunningServer:
        port = free_port()
        server = start_server(target, *args, port=port, log=tmp_path / f"server-{port}.log", env=env)
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()
