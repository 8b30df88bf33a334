"""Profile a live MRTR server with py-spy while bench/load.py drives it, and print where its CPU goes.

Starts the server (Baton's `examples/everything.py` by default, or the floor with `--floor`) on a
free 127.0.0.1 port, warms it up, samples it with `py-spy record` during one measured load run, and
prints the functions with the most samples: by self time, by inclusive time, and by component
(Baton, the tool, uvicorn, asyncio, JSON, the rest). Sampling slows the server a little; compare
shares, not absolute figures. The raw samples (py-spy's collapsed-stack format) are kept with `--raw`.

    .venv/bin/python bench/profile.py                  # Baton at c=16
    .venv/bin/python bench/profile.py --floor -c 1     # the floor, one lane
    .venv/bin/python bench/profile.py --lines          # hottest source lines instead of functions

py-spy must be on PATH or in the venv (`pip install py-spy`); it needs ptrace (root, or
`kernel.yama.ptrace_scope=0`).
"""

from __future__ import annotations

import argparse
import collections
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from processes import ROOT, Server, Skip, baton_command, script_command, start, stop

FRAME = re.compile(r"(?P<fn>.*) \((?P<path>.*?):(?P<line>\d+)\)")
COMPONENTS = (  # py-spy names files relative to sys.path where it can ("baton/state/seal.py")
    ("baton", re.compile(r"(^|/)baton/")),
    ("tool", re.compile(r"everything\.py$")),
    ("floor", re.compile(r"floor\.py$")),
    ("uvicorn", re.compile(r"(^|/)uvicorn/")),
    ("asyncio", re.compile(r"(^|/)asyncio/")),
    ("json", re.compile(r"(^|/)json/")),
)


def short(path: str) -> str:
    for marker in ("site-packages/", "/src/", f"{ROOT}/"):
        if marker in path:
            return path.rsplit(marker, maxsplit=1)[-1]
    return path


def component(path: str) -> str:
    return next((name for name, pattern in COMPONENTS if pattern.search(path)), "other")


def summarize(raw: Path, top: int, lines: bool) -> str:
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    parts: collections.Counter[str] = collections.Counter()
    total = 0
    for row in raw.read_text().splitlines():
        stack, _, count = row.rpartition(" ")
        n = int(count)
        total += n
        names = []
        for frame in stack.split(";"):
            m = FRAME.match(frame)
            if m is None:
                names.append(frame)
                continue
            where = f"{short(m['path'])}:{m['line']}" if lines else short(m["path"])
            names.append(f"{m['fn']} ({where})")
        leaf = FRAME.match(stack.split(";")[-1])
        parts[component(leaf["path"]) if leaf else "other"] += n
        own[names[-1]] += n
        for name in set(names):
            inclusive[name] += n
    if not total:
        return "profile: no samples (was the server busy?)"

    def table(title: str, counts: collections.Counter[str]) -> list[str]:
        return [f"-- {title}"] + [f"{100 * n / total:6.1f}%  {name}" for name, n in counts.most_common(top)]

    out = [f"{total} samples"]
    out += table("by component (self time)", parts)
    out += table("self time", own)
    out += table("inclusive time", inclusive)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n\n")[0] if __doc__ else None)
    parser.add_argument("--floor", action="store_true", help="profile bench/floor.py instead of Baton")
    parser.add_argument("-c", "--concurrency", type=int, default=16, help="load driver lanes (default 16)")
    parser.add_argument("-n", "--n", type=int, default=8000, help="measured flows (default 8000)")
    parser.add_argument("--rate", type=int, default=1000, help="py-spy samples per second (default 1000)")
    parser.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    parser.add_argument("--lines", action="store_true", help="rank source lines, not functions")
    parser.add_argument("--raw", type=Path, help="keep py-spy's raw samples in this file")
    opts = parser.parse_args(argv)
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("profile: py-spy not found; pip install py-spy", file=sys.stderr)
        return 2
    python = Path(sys.executable)
    if opts.floor:
        server = Server("floor", python, script_command(python, "bench/floor.py"))
    else:
        server = Server("baton", python, baton_command(python.with_name("baton")))
    with tempfile.TemporaryDirectory() as tmp:
        raw = opts.raw or Path(tmp) / "samples.raw"
        os.environ.setdefault("BATON_DATA_DIR", tmp)  # the server's key file, unless one is configured
        sampler: subprocess.Popen[bytes] | None = None
        try:
            try:
                start(server, Path(tmp), 30.0)
            except Skip as exc:
                print(f"profile: the server {exc}", file=sys.stderr)
                return 1
            assert server.proc is not None
            load = [sys.executable, str(ROOT / "bench" / "load.py"), "--url", server.url, "-c", str(opts.concurrency)]
            subprocess.run([*load, "-n", "1000", "--warmup", "0"], check=True, stdout=subprocess.DEVNULL)
            record = ["record", "--rate", str(opts.rate), "--format", "raw", "--output", str(raw)]
            sampler = subprocess.Popen(
                [spy, *record, "--pid", str(server.proc.pid)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
            )
            time.sleep(1.0)  # py-spy attaches
            measured = [*load, "-n", str(opts.n), "--warmup", "0", "--server-pid", str(server.proc.pid)]
            subprocess.run(measured, check=True)
            sampler.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
            sampler.wait(30)
        finally:
            if sampler is not None and sampler.poll() is None:
                sampler.kill()
            stop(server)
        print(summarize(raw, opts.top, opts.lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
