"""`./dev fuzz --list | TARGET | --all`, with `--seconds N` and `--runs R`: run the fuzz targets under atheris.

One target runs in this process (libFuzzer ends it); `--all` runs each in a process of its own, in
turn, and prints per target the executions, the coverage libFuzzer counts (`cov:` edges, `ft:`
features) and the finding, if any. New inputs go to `.cache/fuzz/<target>/corpus`, findings to
`.cache/fuzz/<target>/` (crash-*, timeout-*, oom-*); the seed corpus in `fuzz/corpus/<target>` is read, never written.
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import logging
import os
import re
import subprocess
import sys
from pathlib import Path

from .harness import ROOT, RSS_LIMIT_MB, SLOW_S, Target, load, names

WORK = ROOT.parent / ".cache" / "fuzz"
MAX_LEN = 8192
_STATS = re.compile(r"^#(\d+)\s+\w+\s+cov: (\d+) ft: (\d+).*?exec/s: (\d+)", re.M)
_ARTIFACT = re.compile(r"Test unit written to (\S+)")


def fuzz_one(name: str, seconds: int, runs: int | None) -> None:
    """Fuzz one target for `seconds` (or until `runs` executions) in this process; libFuzzer exits (non-zero on a
    finding)."""
    import atheris

    logging.disable(logging.CRITICAL)  # the parsers' log lines for refused input, once per execution
    with atheris.instrument_imports(include=["baton"]):
        target = load(name)
    work = WORK / name
    (work / "corpus").mkdir(parents=True, exist_ok=True)
    argv = [
        sys.argv[0],
        f"-max_total_time={seconds}",
        *([f"-runs={runs}"] if runs is not None else []),
        f"-timeout={SLOW_S:.0f}",
        f"-rss_limit_mb={RSS_LIMIT_MB}",
        f"-max_len={MAX_LEN}",
        f"-artifact_prefix={work}/",
        "-print_final_stats=1",
        str(work / "corpus"),
        str(target.corpus),
    ]
    atheris.Setup(argv, functools.partial(_run_keeping_findings, target, work))
    atheris.Fuzz()


def _run_keeping_findings(target: Target, work: Path, data: bytes) -> None:
    """`target.run`, writing the input of a finding to `work` before libFuzzer's crash handler runs: on a busy
    machine libFuzzer's one-second alarm can end the process in that handler, before it writes the input."""
    try:
        target.run(data)
    except BaseException:
        path = work / f"crash-{hashlib.sha1(data).hexdigest()}"  # libFuzzer's name for the same input
        path.write_bytes(data)
        print(f"Test unit written to {path}", file=sys.stderr, flush=True)
        raise


def fuzz_all(seconds: int, runs: int | None) -> int:
    """Each target in turn, in its own process; a summary line each. 1 if any had a finding."""
    failed = 0
    print(f"{'target':<20} {'execs':>10} {'exec/s':>7} {'cov':>6} {'ft':>7}  finding")
    for name in names():
        log = WORK / name / "last-run.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w") as out:
            rc = subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "fuzz",
                    name,
                    "--seconds",
                    str(seconds),
                    *(["--runs", str(runs)] if runs else []),
                ],
                cwd=ROOT.parent,
                stdout=out,
                stderr=subprocess.STDOUT,
                check=False,
            ).returncode
        text = log.read_text(errors="replace")
        stats = _STATS.findall(text)
        execs, cov, ft, rate = stats[-1] if stats else ("?", "?", "?", "?")
        artifact = _ARTIFACT.search(text)
        finding = "none" if rc == 0 else (artifact.group(1) if artifact else f"exit {rc}, see {log}")
        failed |= rc != 0
        print(f"{name:<20} {execs:>10} {rate:>7} {cov:>6} {ft:>7}  {finding}", flush=True)
    return 1 if failed else 0


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="./dev fuzz", description="coverage-guided fuzzing of Baton's parsers")
    parser.add_argument("target", nargs="?", help="one target (see --list)")
    parser.add_argument("--list", action="store_true", help="list the targets")
    parser.add_argument("--all", action="store_true", help="run every target in turn")
    parser.add_argument("--seconds", type=int, default=60, help="how long each target runs at most (default 60)")
    parser.add_argument("--runs", type=int, help="stop a target after this many executions (if sooner than --seconds)")
    args = parser.parse_args(argv)
    if args.list:
        for name in names():
            print(f"{name:<20} {load(name).about}")
        return 0
    if args.seconds < 1:
        parser.error("--seconds must be at least 1")
    if args.runs is not None and args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.all:
        return fuzz_all(args.seconds, args.runs)
    if args.target is None:
        parser.error("name a target (see --list), or give --all")
    if args.target not in names():
        parser.error(f"no fuzz target {args.target!r}; ./dev fuzz --list lists them")
    print(f"fuzzing {args.target} for {args.seconds} s (findings are written under {WORK / args.target})", flush=True)
    fuzz_one(args.target, args.seconds, args.runs)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except KeyboardInterrupt:
        sys.exit(130)
    except BrokenPipeError:  # the list piped into a reader that stopped early (`| head`)
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(1)
