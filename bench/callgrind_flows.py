"""Instructions per two-round MRTR flow of the live server process, counted by callgrind: deterministic.

CPU time on a shared machine moves by a factor of two from minute to minute; the instructions a server runs
for the same requests do not. This starts Baton (`examples/everything.py`, as `baton serve` serves it) or the
floor (`bench/floor.py`) under `valgrind --tool=callgrind --instr-atstart=no`, drives it with `load.py` (`-c`
lanes, `--warmup` flows, then `--flows` flows), and counts what the whole server process runs (uvicorn, uvloop,
httptools, the app, the kernel's share excepted) from the end of the last warmup request to the end of the last
measured one (`callgrind_serve.py` marks that window from inside the server). The figure is the instructions
(`Ir`) of that window over `--flows`. Python's hash seed is fixed (`PYTHONHASHSEED=0`), so two runs of the same
code read the same to well under 1 %.

    .venv/bin/python bench/callgrind_flows.py                    # Baton and the floor, c=1, 200 flows each
    .venv/bin/python bench/callgrind_flows.py --server baton --json
    .venv/bin/python bench/callgrind_flows.py --server baton --keep /tmp/cg   # keep callgrind.out for annotate
    .venv/bin/python bench/callgrind_flows.py -c 16 --cache-sim   # also simulated cache misses per flow

It needs valgrind and its `callgrind.h` (Debian: `apt-get install valgrind`) and a C compiler, for the two-function
library that marks the window (built once into `.cache/bench/`). `--json` prints one object:
`{"baton": {"ir_per_flow": ..., "ir": ..., "flows": ...}, "floor": {...}, "ratio": ...}`. Exit 2 when valgrind,
the header or the compiler is missing (the message says which), 1 when a run fails.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from options import OneLineParser
from processes import ROOT, free_port, server_environment

HERE = Path(__file__).resolve().parent
MARKS_C = """#include <valgrind/callgrind.h>
void bench_start(void) { CALLGRIND_START_INSTRUMENTATION; CALLGRIND_ZERO_STATS; }
void bench_stop(void) { CALLGRIND_DUMP_STATS_AT("measured"); CALLGRIND_STOP_INSTRUMENTATION; }
"""
TOTALS = re.compile(rb"^(?:summary|totals):\s*(\d[\d ]*)$", re.MULTILINE)  # one count per event, Ir first
EVENTS = re.compile(rb"^events:\s*(.+)$", re.MULTILINE)


class Missing(Exception):
    """What this machine lacks to count instructions; the message says what to install."""


def marks_library(cache: Path) -> Path:
    """The shared library with `bench_start` and `bench_stop`, built once (again when its source changes)."""
    if shutil.which("valgrind") is None:
        raise Missing("valgrind is not installed (apt-get install valgrind)")
    if not Path("/usr/include/valgrind/callgrind.h").exists():
        raise Missing("valgrind's callgrind.h is missing (apt-get install valgrind)")
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        raise Missing("no C compiler (cc) to build the library that marks the window")
    cache.mkdir(parents=True, exist_ok=True)
    source = cache / "callgrind_marks.c"
    library = cache / "callgrind_marks.so"
    if not library.exists() or not source.exists() or source.read_text() != MARKS_C:
        source.write_text(MARKS_C)
        subprocess.run([compiler, "-O1", "-shared", "-fPIC", "-o", str(library), str(source)], check=True)
    return library


def count(
    server: str, flows: int, warmup: int, concurrency: int, marks: Path, out_dir: Path, cache_sim: bool = False
) -> dict[str, Any]:
    """One server under callgrind, driven by load.py: the instructions of the measured window (with `cache_sim`,
    also callgrind's simulated cache misses: every event per flow)."""
    port = free_port()
    python = Path(sys.executable)
    env = {k: v for k, v in server_environment(out_dir).items() if not k.startswith("OTEL_")}
    env["PYTHONHASHSEED"] = "0"
    argv = [
        "valgrind",
        "--tool=callgrind",
        "--instr-atstart=no",
        *(["--cache-sim=yes"] if cache_sim else []),
        f"--callgrind-out-file={out_dir}/{server}.%p",
        str(python),
        str(HERE / "callgrind_serve.py"),
        f"--server={server}",
        f"--port={port}",
        f"--marks={marks}",
        f"--start={2 * warmup}",
        f"--stop={2 * (warmup + flows)}",
    ]
    log = out_dir / f"{server}.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        load = [
            str(python),
            str(HERE / "load.py"),
            f"--url=http://127.0.0.1:{port}/mcp",
            f"-n={flows}",
            f"-c={concurrency}",
            f"--warmup={warmup}",
            "--timeout=120",
            "--time-limit=1200",
            "--json",
        ]
        _wait_listening(proc, port, log)
        done = subprocess.run(load, cwd=ROOT, capture_output=True, check=False)
        report = json.loads(done.stdout or b"{}")
        if done.returncode != 0 or report.get("flows_failed"):
            raise RuntimeError(f"load.py against {server} failed: {done.stderr.decode()[-400:]} {report.get('errors')}")
        dump = _wait_dump(out_dir, server, proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    data = dump.read_bytes()
    found = TOTALS.search(data)
    if found is None:
        raise RuntimeError(f"no totals in {dump}")
    counts = [int(count) for count in found.group(1).split()]
    ir = counts[0]
    result: dict[str, Any] = {"ir": ir, "flows": flows, "ir_per_flow": round(ir / flows), "dump": str(dump)}
    names = EVENTS.search(data)
    if cache_sim and names:
        pairs = zip(names.group(1).decode().split(), counts, strict=False)  # callgrind may leave trailing zeros out
        result["per_flow"] = {name: round(n / flows) for name, n in pairs}
    return result


def _wait_listening(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    import socket

    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"the server exited at start: {log.read_text(errors='replace')[-600:]}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.5)
    raise RuntimeError(f"the server did not listen within 300 s (see {log})")


def _wait_dump(out_dir: Path, server: str, pid: int) -> Path:
    """The dump `bench_stop` wrote (`<server>.<pid>.1`), once complete."""
    path = out_dir / f"{server}.{pid}.1"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if path.exists() and TOTALS.search(path.read_bytes()):
            return path
        time.sleep(0.2)
    raise RuntimeError(f"callgrind wrote no dump at {path}")


def main() -> int:
    parser = OneLineParser(description="Instructions per two-round flow of the live server, counted by callgrind.")
    parser.add_argument("--server", choices=("baton", "floor", "both"), default="both")
    parser.add_argument("--flows", type=int, default=200, help="measured flows (default 200)")
    parser.add_argument("--warmup", type=int, default=60, help="flows before the window (default 60)")
    parser.add_argument("-c", "--concurrency", type=int, default=1, help="load.py lanes (default 1)")
    parser.add_argument("--keep", type=Path, help="keep callgrind's files here (for callgrind_annotate)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--cache-sim", action="store_true", help="also simulate the caches: misses per flow (D1mr, DLmr, ...)"
    )
    opts = parser.parse_args()
    if opts.flows < 1 or opts.warmup < 1 or opts.concurrency < 1:
        parser.error("--flows, --warmup and --concurrency must be >= 1")
    try:
        marks = marks_library(ROOT / ".cache" / "bench")
    except Missing as exc:
        print(f"callgrind_flows.py: {exc}", file=sys.stderr)
        return 2
    servers = ("baton", "floor") if opts.server == "both" else (opts.server,)
    result: dict[str, Any] = {"concurrency": opts.concurrency}
    with tempfile.TemporaryDirectory(prefix="callgrind-") as scratch:
        out_dir = opts.keep or Path(scratch)
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            for server in servers:
                result[server] = count(
                    server, opts.flows, opts.warmup, opts.concurrency, marks, out_dir, cache_sim=opts.cache_sim
                )
                if not opts.keep:
                    del result[server]["dump"]
        except (RuntimeError, subprocess.CalledProcessError) as exc:
            print(f"callgrind_flows.py: {exc}", file=sys.stderr)
            return 1
    if "baton" in result and "floor" in result:
        result["ratio"] = round(result["baton"]["ir_per_flow"] / result["floor"]["ir_per_flow"], 3)
    if opts.json:
        print(json.dumps(result))
    else:
        for server in servers:
            print(f"{server}: {result[server]['ir_per_flow']:,} instructions per flow (c={opts.concurrency})")
            for name, value in result[server].get("per_flow", {}).items():
                print(f"  {name}: {value:,} per flow")
        if "ratio" in result:
            print(f"baton / floor: {result['ratio']:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
