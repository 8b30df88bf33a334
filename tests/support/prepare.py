"""Make, before the tests run, what they would otherwise make on first use: `./dev test` runs this beside its
lint step, whose mypy leaves the second core idle.

- pytest's rewritten test modules: each xdist worker rewrote and compiled every test module itself on a fresh
  clone (8.9 s of CPU to collect instead of 3.8 s, nine times over); one collection writes them for all.
- the peers' venvs (`peer_venvs.ensure_venv`) and npm packages (the Inspector, the TypeScript SDK, the MCPB
  command line, the MCP Apps example), each under the lock a test takes, so a test that needs one still
  being made waits for it.

A failure here is not reported here: the test that needs what failed makes it again and fails with the
installer's output. Run from the project root: `.venv/bin/python tests/support/prepare.py`.
"""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TESTS))

from support import processes  # noqa: E402 (the tests folder is on the path only now)
from support.app_example import ensure_app_example  # noqa: E402
from support.mcpb import ensure_mcpb  # noqa: E402
from support.peer_venvs import REQUIREMENTS, ensure_inspector, ensure_venv  # noqa: E402
from support.ts_sdk import ensure_ts_sdk  # noqa: E402


def collect() -> None:
    """One collection, so that pytest's cache of rewritten test modules is there for the workers."""
    processes.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q"],
        cwd=TESTS.parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        stdin=subprocess.DEVNULL,
        check=False,
    )


def jobs() -> dict[str, Callable[[], object]]:
    made: dict[str, Callable[[], object]] = {"pytest's rewritten test modules": collect}
    made.update({f"the {name} venv": (lambda name=name: ensure_venv(name)) for name in REQUIREMENTS})
    made.update(
        {
            "the MCP Inspector": ensure_inspector,
            "the TypeScript SDK": ensure_ts_sdk,
            "the MCPB command line": ensure_mcpb,
            "the MCP Apps example": ensure_app_example,
        }
    )
    return made


def main() -> int:
    started = time.monotonic()
    failed = []
    with ThreadPoolExecutor(2) as pool:
        futures = {what: pool.submit(job) for what, job in jobs().items()}
        for what, future in futures.items():
            try:
                future.result()
            except KeyboardInterrupt:
                raise
            except BaseException:  # pytest.fail's Failed too: the test that needs it says why
                failed.append(what)
    took = f"in {time.monotonic() - started:.0f} s"
    print(f"prepare: made what the tests need {took}" + (f"; not made: {', '.join(failed)}" if failed else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
