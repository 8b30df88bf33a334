"""What a fuzz target is, what counts as a finding, and running one: replayed (tests) or under atheris.

A target is a function of one input (bytes) and the error types its parser documents. A finding is
any other exception, a run over `SLOW_S` (1 s; in `replay`, twice in a row), or memory growth: under
atheris, libFuzzer's `-timeout` and `-rss_limit_mb` catch the last two; `replay` (what `./dev test` runs
over each corpus) times every input and measures the memory left allocated after the corpus has been run
three times.
Nothing here imports `baton`: `python -m fuzz TARGET` imports the target's module inside atheris's
instrumentation, so the parsers it reaches are instrumented for coverage.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import pkgutil
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
CORPUS = ROOT / "corpus"
SLOW_S = 1.0
RSS_LIMIT_MB = 2048  # libFuzzer's: a process over it is a finding (memory growth)
GROWTH_LIMIT_BYTES = 256 * 1024  # left allocated by two more replays of a corpus


class Finding(AssertionError):
    """An input the target must not have met that way: an undocumented exception, a slow run, or growth."""


@dataclass(frozen=True)
class Target:
    """One fuzz target: `one(data)` feeds a parser one input; `expected` are the errors it documents."""

    name: str
    about: str
    one: Callable[[bytes], None]
    expected: tuple[type[BaseException], ...] = ()

    @property
    def corpus(self) -> Path:
        return CORPUS / self.name

    def run(self, data: bytes) -> None:
        """One input; the documented errors are the parser's answer, anything else propagates (a finding)."""
        with contextlib.suppress(*self.expected):
            self.one(data)


def names() -> list[str]:
    """The targets' names: one module each under `fuzz/targets/`."""
    from . import targets

    return sorted(m.name for m in pkgutil.iter_modules(targets.__path__) if not m.name.startswith("_"))


def load(name: str) -> Target:
    """The target of `fuzz/targets/<name>.py` (its module-level `TARGET`)."""
    if name not in names():
        raise KeyError(name)
    target: Target = importlib.import_module(f"fuzz.targets.{name}").TARGET
    return target


def seeds(target: Target) -> list[tuple[Path, bytes]]:
    """The target's corpus, in name order."""
    return [(p, p.read_bytes()) for p in sorted(target.corpus.iterdir()) if p.is_file()]


def replay(target: Target) -> int:
    """Run the whole corpus through the target; raise `Finding` on the first finding. Returns the inputs run."""
    inputs = seeds(target)
    for path, data in inputs:
        try:
            took = _timed(target, data)
        except Exception as exc:
            raise Finding(f"{target.name}: {path.name}: {type(exc).__name__}: {exc}") from exc
        if took > SLOW_S:  # timed again: a first run may pay for what the parser loads on first use (idna's tables)
            again = _timed(target, data)
            if again > SLOW_S:
                raise Finding(f"{target.name}: {path.name} took {took:.2f} s, then {again:.2f} s (over {SLOW_S:.0f} s)")
    tracemalloc.start()
    try:
        for _, data in inputs:  # the first pass fills caches that are meant to fill
            target.run(data)
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(2):
            for _, data in inputs:
                target.run(data)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    if grown > GROWTH_LIMIT_BYTES:
        raise Finding(f"{target.name}: two replays of the corpus left {grown} more bytes allocated")
    return len(inputs)


def _timed(target: Target, data: bytes) -> float:
    """Seconds `target` took over `data`."""
    started = time.perf_counter()
    target.run(data)
    return time.perf_counter() - started


@functools.cache
def _loop() -> asyncio.AbstractEventLoop:
    return asyncio.new_event_loop()


def run_async(coro: Coroutine[Any, Any, Any]) -> Any:
    """Run a coroutine on one event loop kept for the whole process (a loop per input would dominate)."""
    return _loop().run_until_complete(coro)
