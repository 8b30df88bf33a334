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
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

from options import OneLineParser
from processes import (
    ROOT,
    Server,
    Skip,
    Stopped,
    baton_command,
    script_command,
    start,
    start_sink,
    stop,
    stop_on_signals,
    stop_sinks,
    traced_env,
    untraced_env,
)

FRAME = re.compile(r"(?P<fn>.*) \((?P<path>.*?):(?P<line>\d+)\)")
COMPONENTS = (  # py-spy is asked for full file names: namespace packages (opentelemetry) lose their root otherwise
    ("baton tracing", re.compile(r"(^|/)baton/(server/tracing\.py|telemetry/)")),
    ("baton", re.compile(r"(^|/)baton/")),
    ("OpenTelemetry SDK", re.compile(r"(^|/)(opentelemetry|google/protobuf)/")),
    ("OTLP export HTTP", re.compile(r"(^|/)(requests|urllib3|http/client\.py|email/)")),
    ("tool", re.compile(r"everything\.py$")),
    ("floor", re.compile(r"floor\.py$")),
    ("uvicorn", re.compile(r"(^|/)uvicorn/")),
    ("asyncio", re.compile(r"(^|/)asyncio/")),
    ("json", re.compile(r"(^|/)json/")),
)


IDLE = re.compile(r"^(Condition\.wait|Event\.wait|Thread\.join|_wait_for_tstate_lock) \(.*threading\.py:\d+\)$")
"""A leaf frame that is a thread waiting, not working."""


def short(path: str) -> str:
    for marker in ("site-packages/", "/src/", f"{ROOT}/"):
        if marker in path:
            return path.rsplit(marker, maxsplit=1)[-1]
    return path


def component(path: str) -> str:
    return next((name for name, pattern in COMPONENTS if pattern.search(path)), "other")


def summarize(raw: Path, top: int, lines: bool, us_per_round_trip: float | None = None) -> str:
    own: collections.Counter[str] = collections.Counter()
    inclusive: collections.Counter[str] = collections.Counter()
    parts: collections.Counter[str] = collections.Counter()
    total = 0
    for row in raw.read_text().splitlines():
        stack, _, count = row.rpartition(" ")
        if IDLE.search(stack.rpartition(";")[2]):
            continue  # a thread asleep (the exporters' between batches): py-spy cannot always tell
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
    if us_per_round_trip is not None:
        out.append(f"-- by component, server CPU µs per round trip (of {us_per_round_trip:.1f} during sampling)")
        out += [f"{us_per_round_trip * n / total:7.1f}  {name}" for name, n in parts.most_common()]
    out += table("self time", own)
    out += table("inclusive time", inclusive)
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(description=__doc__.partition("\n\n")[0] if __doc__ else None)
    parser.add_argument("--floor", action="store_true", help="profile bench/floor.py instead of Baton")
    parser.add_argument("-c", "--concurrency", type=int, default=16, help="load driver lanes (default 16)")
    parser.add_argument("-n", "--n", type=int, default=8000, help="measured flows (default 8000)")
    parser.add_argument("--rate", type=int, default=1000, help="py-spy samples per second (default 1000)")
    parser.add_argument("--top", type=int, default=30, help="rows per table (default 30)")
    parser.add_argument("--lines", action="store_true", help="rank source lines, not functions")
    parser.add_argument("--raw", type=Path, help="keep py-spy's raw samples in this file")
    parser.add_argument(
        "--trace",
        type=float,
        metavar="RATIO",
        help="serve traced: OTLP/HTTP to a bench/otlp_sink.py process, sampling RATIO of flows (1: every request)",
    )
    opts = parser.parse_args(argv)
    if opts.trace is not None and not 0 <= opts.trace <= 1:
        parser.error("--trace takes a ratio from 0 to 1")
    if opts.trace is not None and opts.floor:
        parser.error("--trace profiles Baton, not the floor")
    spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    if not Path(spy).exists():
        print("profile: py-spy not found; pip install py-spy", file=sys.stderr)
        return 2
    python = Path(sys.executable)
    server: Server
    if opts.floor:
        server = Server("floor", python, script_command(python, "bench/floor.py"))
    else:
        server = Server("baton", python, baton_command(python.with_name("baton")))
    try:
        with stop_on_signals():
            return measure(opts, spy, server)
    except Stopped as exc:  # the servers, the receiver and py-spy are stopped on the way out
        print(f"profile: stopped by {signal.Signals(exc.signum).name}", file=sys.stderr)
        return 128 + exc.signum
    except subprocess.CalledProcessError as exc:
        print(f"profile: the load driver failed (exit {exc.returncode}): {exc.stderr or b''!r:.300}", file=sys.stderr)
        return 1


def measure(opts: argparse.Namespace, spy: str, server: Server) -> int:
    """Serve, load, sample and print the tables; stops what it started however it ends."""
    python = Path(sys.executable)
    alone = {"start_new_session": True}  # a Ctrl-C at the terminal reaches this script alone, which stops them
    with tempfile.TemporaryDirectory() as tmp:
        raw = opts.raw or Path(tmp) / "samples.raw"
        os.environ.setdefault("BATON_DATA_DIR", tmp)  # the server's key file, unless one is configured
        sampler: subprocess.Popen[bytes] | None = None
        sink: subprocess.Popen[bytes] | None = None
        try:
            if opts.trace is not None:
                try:
                    sink, endpoint = start_sink(python, Path(tmp), "profile")
                except Skip as exc:
                    print(f"profile: {exc}", file=sys.stderr)
                    return 1
                traced(server, endpoint, opts.trace)
            try:
                start(server, Path(tmp), 30.0)
            except Skip as exc:
                print(f"profile: the server {exc}", file=sys.stderr)
                return 1
            assert server.proc is not None
            load = [sys.executable, str(ROOT / "bench" / "load.py"), "--url", server.url, "-c", str(opts.concurrency)]
            subprocess.run([*load, "-n", "1000", "--warmup", "0"], check=True, stdout=subprocess.DEVNULL, **alone)
            record = ["record", "--rate", str(opts.rate), "--format", "raw", "--output", str(raw), "--full-filenames"]
            sampler = subprocess.Popen(
                [spy, *record, "--pid", str(server.proc.pid)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                **alone,
            )
            if not attached(sampler):
                print("profile: py-spy did not attach to the server (it needs ptrace: root, or", file=sys.stderr)
                print("         kernel.yama.ptrace_scope=0)", file=sys.stderr)
                return 1
            measured = [*load, "-n", str(opts.n), "--warmup", "0", "--server-pid", str(server.proc.pid), "--json"]
            report = json.loads(subprocess.run(measured, check=True, capture_output=True, **alone).stdout)
            sampler.send_signal(signal.SIGINT)  # py-spy writes its output on SIGINT
            sampler.wait(30)
        finally:
            if sampler is not None and sampler.poll() is None:
                sampler.kill()
            if sampler is not None and sampler.stdout is not None:
                sampler.stdout.close()
            stop(server)
            if sink is not None:
                stop_sinks({"profile": (sink, endpoint)})
        print(f"load: {report['flows_ok']} flows ok, {report['flows_failed']} failed, c={opts.concurrency}")
        cpu_ms = report.get("server_cpu_ms_per_flow")
        flows = report["flows_ok"] + report["flows_failed"]
        per_rt = cpu_ms * flows / report["requests"] * 1000 if cpu_ms is not None and report.get("requests") else None
        print(summarize(raw, opts.top, opts.lines, per_rt))
    return 0


def attached(sampler: subprocess.Popen[bytes]) -> bool:
    """Wait until py-spy says it samples, which it says once attached; False if it ends first. A fixed wait was
    too short on a busy machine: the measured load could end before py-spy attached, leaving few samples or none.
    """
    assert sampler.stdout is not None
    # The lines it writes after (when it stops) are few: the pipe never fills.
    return any(line.startswith(b"py-spy> Sampling process") for line in sampler.stdout)


def traced(server: Server, endpoint: str, ratio: float) -> None:
    """Start `server` traced: every request at 1, else head sampling at `ratio`, exporting to `endpoint`."""
    sampler = ("parentbased_always_on", "") if ratio >= 1 else ("parentbased_traceidratio", str(ratio))
    variables = [*untraced_env(), *traced_env(endpoint, *sampler), "OTEL_SERVICE_NAME=baton-profile"]
    command = server.argv
    server.argv = lambda port: [*variables, *command(port)]


if __name__ == "__main__":
    sys.exit(main())
