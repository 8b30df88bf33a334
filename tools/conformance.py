#!/usr/bin/env python3
"""Run the official MCP conformance suite (pinned npm harness, cached in .cache/conformance) offline.

Subcommands: install | list server|client | server URL [SCENARIO ...] | client [SCENARIO ...] -- COMMAND ...
`list`, `server` and `client` take `--spec-version` (2026-07-28, the default, or 2025-11-25: the
`initialize` era, protocol.md P28), passed to the harness as its own `--spec-version`, which picks
the scenarios applicable at that revision and the wire version they speak; or `extension`: the
extension scenarios (tasks, skills, auth extensions; SEP-2133), which carry no revision and run one by
one without it (protocol.md P143). Loopback only.
Exit 0 if every scenario passed, 1 if not, 2 on setup errors.
"""

from __future__ import annotations

import argparse
import contextlib
import fnmatch
import ipaddress
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any
from urllib.parse import urlsplit

PROJECT_ROOT = Path(__file__).resolve().parent.parent
CACHE_DIR = PROJECT_ROOT / ".cache" / "conformance"
RESULTS_DIR = CACHE_DIR / "results"

HARNESS_PKG = "@modelcontextprotocol/conformance"
HARNESS_VERSION = "0.2.0-alpha.12"
SPEC_VERSIONS = ("2026-07-28", "2025-11-25")  # the revisions Baton speaks; the first is the default
EXTENSION = "extension"  # not a revision: the scenarios the harness marks [extension] (protocol.md P143)
DEFAULT_SPEC_VERSION = SPEC_VERSIONS[0]
NODE_MIN_MAJOR = 22
LOOPBACK = "127.0.0.1"
MAX_IDS_PER_LINE = 8
KEEP_RUNS = 20  # result directories kept under .cache/conformance/results

# Time limits (seconds) for every subprocess this script starts.
PROBE_TIMEOUT = 30
LIST_TIMEOUT = 120
INSTALL_TIMEOUT = 900
DEFAULT_SCENARIO_TIMEOUT = 30

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2

# The harness names result directories "<prefix>-<scenario>-<ISO timestamp with : and . replaced by ->".
_TIMESTAMP_SUFFIX = re.compile(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_CLIENT_EXIT = re.compile(r"Client exited with code (-?\d+)")
_CLIENT_TIMEOUT = re.compile(r"Client timed out after (\d+)ms")

# Preloaded into every harness process (NODE_OPTIONS=--require) so that its mock servers, which call
# listen(0) without a host and would therefore bind every interface, bind 127.0.0.1 instead.
SHIM_PATH = Path(__file__).resolve().parent / "listen_loopback.cjs"


class SetupError(Exception):
    """Installation or usage problem: reported on stderr, exit status 2."""


def log(message: str) -> None:
    print(f"conformance: {message}", file=sys.stderr, flush=True)


# --------------------------------------------------------------------------------------------------------
# Processes


def run_bounded(
    argv: Sequence[str],
    *,
    timeout: float,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    log_path: Path | None = None,
    echo: bool = False,
) -> tuple[int, str]:
    """Run argv in its own process group, killing the whole group after `timeout` seconds.

    Returns (exit status, combined stdout+stderr); exit status is -1 when the time limit was hit.
    With `log_path` the output also goes to that file; with `echo` it is streamed to stderr.
    """
    with tempfile.TemporaryFile() as sink:
        try:
            proc = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if echo else sink,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            raise SetupError(f"cannot run {argv[0]}: {exc}") from exc
        copier = None
        if echo:
            copier = threading.Thread(target=_tee, args=(proc, sink), daemon=True)
            copier.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
        finally:
            _kill_group(proc)
            if copier is not None:
                copier.join(timeout=5)
        sink.seek(0)
        output = _ANSI.sub("", sink.read().decode(errors="replace"))
    if timed_out:
        output += f"\n[conformance.py: killed after the {timeout:.0f}s time limit]\n"
    if log_path is not None:
        log_path.write_text(output)
    return (-1 if timed_out else proc.returncode), output


def _tee(proc: subprocess.Popen[bytes], sink: IO[bytes]) -> None:
    assert proc.stdout is not None
    for line in iter(proc.stdout.readline, b""):
        sink.write(line)
        sys.stderr.write(line.decode(errors="replace"))
        sys.stderr.flush()
    proc.stdout.close()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """Stop the process group we created for `proc` (leftover children included)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGTERM if proc.poll() is None else signal.SIGKILL)
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=5)


# --------------------------------------------------------------------------------------------------------
# Installation


def node_major(node: str) -> int | None:
    """Major version of a node binary, or None if it does not run."""
    try:
        out = subprocess.run(
            [node, "-p", "process.versions.node"],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT,
            check=False,
            env=_env_without_node_options(),
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if out.returncode != 0:
        return None
    try:
        return int(out.stdout.strip().split(".")[0])
    except ValueError:
        return None


def _env_without_node_options() -> dict[str, str]:
    env = dict(os.environ)
    env.pop("NODE_OPTIONS", None)
    return env


def node_package() -> str:
    """npm package that ships a node binary for this machine (node-<os>-<arch>)."""
    system = {"Linux": "linux", "Darwin": "darwin"}.get(platform.system())
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(platform.machine().lower())
    if system is None or arch is None:
        raise SetupError(f"no node package known for {platform.system()}/{platform.machine()}")
    return f"node-{system}-{arch}"


def harness_js() -> Path:
    return CACHE_DIR / "node_modules" / HARNESS_PKG / "dist" / "index.js"


def installed_harness_version() -> str | None:
    try:
        meta = json.loads((CACHE_DIR / "node_modules" / HARNESS_PKG / "package.json").read_text())
    except (OSError, ValueError):
        return None
    version = meta.get("version") if isinstance(meta, dict) else None
    return version if isinstance(version, str) else None


def system_node() -> str | None:
    """The system node if it is recent enough for the harness."""
    node = shutil.which("node")
    if node is not None and (node_major(node) or 0) >= NODE_MIN_MAJOR:
        return node
    return None


def cached_node() -> str | None:
    """The node binary installed from the npm registry into the cache, if usable."""
    try:
        binary = CACHE_DIR / "node_modules" / node_package() / "bin" / "node"
    except SetupError:
        return None
    if binary.is_file() and (node_major(str(binary)) or 0) >= NODE_MIN_MAJOR:
        return str(binary)
    return None


def ensure_npm() -> str:
    npm = shutil.which("npm")
    if npm is not None:
        return npm
    apt = shutil.which("apt-get")
    if apt is None or os.geteuid() != 0:
        raise SetupError(
            "npm is not installed and cannot be installed automatically (needs apt-get as root); "
            "install Node.js and npm, then rerun `python tools/conformance.py install`"
        )
    log("npm not found: installing nodejs and npm with apt-get")
    env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
    for argv in ([apt, "update"], [apt, "install", "-y", "--no-install-recommends", "nodejs", "npm"]):
        code, output = run_bounded(argv, timeout=INSTALL_TIMEOUT, env=env)
        if code != 0:
            raise SetupError(f"`{' '.join(argv)}` failed (exit {code}):\n{output[-2000:]}")
    npm = shutil.which("npm")
    if npm is None:
        raise SetupError("apt-get installed npm but it is still not on PATH")
    return npm


def ensure_installed() -> str:
    """Install the pinned harness (and node >= 22 if needed) unless present; return the node to use."""
    node = system_node() or cached_node()
    if node is not None and installed_harness_version() == HARNESS_VERSION and harness_js().is_file():
        return node

    CACHE_DIR.mkdir(parents=True, exist_ok=True)
    manifest = CACHE_DIR / "package.json"
    if not manifest.is_file():
        manifest.write_text(json.dumps({"name": "baton-conformance-cache", "private": True}, indent=2) + "\n")
    packages = [f"{HARNESS_PKG}@{HARNESS_VERSION}"]
    if node is None:
        packages.append(f"{node_package()}@{NODE_MIN_MAJOR}")
    npm = ensure_npm()
    log(f"installing {' '.join(packages)} into {CACHE_DIR}")
    argv = [npm, "install", "--no-audit", "--no-fund", "--no-update-notifier", "--loglevel=error"]
    code, output = run_bounded(
        [*argv, "--save-exact", *packages],
        timeout=INSTALL_TIMEOUT,
        cwd=CACHE_DIR,
        env=_env_without_node_options(),
    )
    if code != 0:
        reason = "timed out" if code == -1 else f"exit {code}"
        raise SetupError(f"npm install failed ({reason}):\n{output[-3000:]}")

    node = system_node() or cached_node()
    if node is None:
        raise SetupError(f"no usable node >= {NODE_MIN_MAJOR} after installing {node_package()}")
    version = installed_harness_version()
    if version != HARNESS_VERSION or not harness_js().is_file():
        raise SetupError(f"{HARNESS_PKG} is at {version!r} after npm install, expected {HARNESS_VERSION}")
    return node


# --------------------------------------------------------------------------------------------------------
# Harness invocation


@dataclass
class Harness:
    node: str
    spec_version: str = DEFAULT_SPEC_VERSION

    def env(self) -> dict[str, str]:
        if not SHIM_PATH.is_file():
            raise SetupError(f"{SHIM_PATH} is missing: it keeps the harness's servers on loopback")
        env = dict(os.environ)
        require = f'--require "{SHIM_PATH}"'
        env["NODE_OPTIONS"] = f"{env['NODE_OPTIONS']} {require}" if env.get("NODE_OPTIONS") else require
        env["NO_COLOR"] = "1"
        # V8's compiled code for the harness, kept between runs: a harness start costs 0.42 s of CPU, not 0.55.
        # The same folder the tests give every node they start (tests/conftest.py), so one cache serves both.
        env.setdefault("NODE_COMPILE_CACHE", str(CACHE_DIR.parent / "node-compile-cache"))
        return env

    def run(
        self, args: Sequence[str], *, timeout: float, log_path: Path | None = None, echo: bool = False
    ) -> tuple[int, str]:
        return run_bounded(
            [self.node, str(harness_js()), *args],
            timeout=timeout,
            env=self.env(),
            log_path=log_path,
            echo=echo,
        )

    def spec_args(self) -> list[str]:
        """The harness's `--spec-version` option; none for the extension scenarios, which carry no revision."""
        return [] if self.spec_version == EXTENSION else ["--spec-version", self.spec_version]

    def scenarios(self, mode: str) -> list[str]:
        code, output = self.run(["list", f"--{mode}", *self.spec_args()], timeout=LIST_TIMEOUT)
        pattern = r"^  - (\S+) \[extension\]" if self.spec_version == EXTENSION else r"^  - (\S+)"
        names = re.findall(pattern, output, flags=re.MULTILINE)
        if code != 0 or not names:
            raise SetupError(f"cannot list {mode} scenarios (exit {code}):\n{output[-2000:]}")
        return names


def select(all_names: list[str], patterns: Sequence[str], mode: str, spec_version: str) -> list[str]:
    """Scenario names matching any of the patterns (exact names or globs), in listing order."""
    chosen: set[str] = set()
    for pattern in patterns:
        hits = [name for name in all_names if fnmatch.fnmatchcase(name, pattern)]
        if not hits:
            raise SetupError(
                f"no {mode} scenario at {spec_version} matches {pattern!r} "
                f"(see `python tools/conformance.py list {mode} --spec-version {spec_version}`)"
            )
        chosen.update(hits)
    return [name for name in all_names if name in chosen]


# --------------------------------------------------------------------------------------------------------
# Results


@dataclass
class ScenarioResult:
    name: str
    checks: list[dict[str, Any]] = field(default_factory=list)
    error: str | None = None  # a failure not expressed as a check (no results, client crash, ...)
    note: str | None = None

    def count(self, status: str) -> int:
        return sum(1 for check in self.checks if check.get("status") == status)

    @property
    def skipped(self) -> bool:
        """Whether the harness skipped every check of the scenario itself (a placeholder, such as
        tasks-status-notifications in this harness): nothing was tested, so neither a pass nor a failure."""
        return self.error is None and bool(self.checks) and self.count("SKIPPED") == len(self.checks)

    @property
    def status(self) -> str:
        """PASS, WARN (only warnings), SKIP (the harness skipped every check) or FAIL."""
        if self.error is not None or self.count("FAILURE") > 0:
            return "FAIL"
        if self.skipped:
            return "SKIP"
        return "WARN" if self.count("WARNING") > 0 else "PASS"

    def passed(self, allow_warnings: bool) -> bool:
        return self.status == "PASS" or (self.status == "WARN" and allow_warnings)

    def problems(self) -> list[dict[str, Any]]:
        return [check for check in self.checks if check.get("status") in ("FAILURE", "WARNING")]


def check_message(check: dict[str, Any], limit: int = 300) -> str:
    text = str(check.get("errorMessage") or check.get("description") or "")
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


def read_checks(directory: Path) -> list[dict[str, Any]] | None:
    try:
        data = json.loads(directory.joinpath("checks.json").read_text())
    except (OSError, ValueError):
        return None
    if not isinstance(data, list):
        return None
    return [item for item in data if isinstance(item, dict)]


def collect(out: Path, prefix: str) -> dict[str, list[dict[str, Any]] | None]:
    """Map scenario name -> checks for every checks.json under `out` (names from directory names)."""
    found: dict[str, list[dict[str, Any]] | None] = {}
    for checks_file in sorted(out.rglob("checks.json")):
        name = _TIMESTAMP_SUFFIX.sub("", checks_file.parent.relative_to(out).as_posix())
        if prefix and name.startswith(prefix):
            name = name[len(prefix) :]
        found[name] = read_checks(checks_file.parent)
    return found


def new_run_dir(mode: str) -> Path:
    RESULTS_DIR.mkdir(parents=True, exist_ok=True)
    runs = sorted((p for p in RESULTS_DIR.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime)
    for old in runs[: max(0, len(runs) - (KEEP_RUNS - 1))]:
        shutil.rmtree(old, ignore_errors=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return Path(tempfile.mkdtemp(prefix=f"{mode}-{stamp}-", dir=RESULTS_DIR))


def safe_name(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def format_scenario(result: ScenarioResult) -> str:
    ok, bad, warn = result.count("SUCCESS"), result.count("FAILURE"), result.count("WARNING")
    counts = f"{ok}/{ok + bad} checks"
    if warn:
        counts += f", {warn} warning{'s' if warn != 1 else ''}"
    line = f"{result.status} {result.name} ({counts})"
    ids = list(dict.fromkeys(str(check.get("id")) for check in result.problems()))
    if ids:
        line += ": " + ", ".join(ids[:MAX_IDS_PER_LINE])
        if len(ids) > MAX_IDS_PER_LINE:
            line += f" (+{len(ids) - MAX_IDS_PER_LINE} more)"
    if result.error:
        line += f" - {result.error}"
    if result.note:
        line += f" [{result.note}]"
    for check in result.problems():
        line += f"\n    {check.get('status')} {check.get('id')}: {check_message(check)}"
    return line


@dataclass
class Report:
    mode: str
    target: str
    node: str
    allow_warnings: bool
    results_dir: Path
    spec_version: str
    results: list[ScenarioResult] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def passed(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.passed(self.allow_warnings)]

    def failed(self) -> list[ScenarioResult]:
        return [r for r in self.results if not r.passed(self.allow_warnings) and not r.skipped]

    def skipped(self) -> list[ScenarioResult]:
        return [r for r in self.results if r.skipped]

    def check_totals(self) -> dict[str, int]:
        totals = dict.fromkeys(("SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"), 0)
        for result in self.results:
            for status in totals:
                totals[status] += result.count(status)
        return totals

    def ok(self) -> bool:
        return not self.errors and bool(self.results) and not self.failed()

    def print_text(self, stream: Any) -> None:
        totals = self.check_totals()
        warned = sum(1 for r in self.results if r.count("WARNING"))
        lines = [
            f"checks: {totals['SUCCESS']} passed, {totals['FAILURE']} failed, {totals['WARNING']} warnings, "
            f"{totals['SKIPPED']} skipped, {totals['INFO']} info (results in {self.results_dir})",
            *(f"error: {error}" for error in self.errors),
        ]
        failed = self.failed()
        if failed:
            lines.append("failed scenarios: " + " ".join(r.name for r in failed))
        skipped = self.skipped()
        if skipped:
            lines.append("skipped by the harness: " + " ".join(r.name for r in skipped))
        policy = "allowed" if self.allow_warnings else "count as failures"
        lines.append(f"warnings: {totals['WARNING']} in {warned} scenarios ({policy})")
        lines.append(f"{len(self.passed())} passed, {len(failed)} failed, {len(skipped)} skipped by the harness")
        print("\n".join(lines), file=stream, flush=True)

    def as_json(self) -> dict[str, Any]:
        totals = self.check_totals()
        scenarios: dict[str, Any] = {}
        for result in self.results:
            scenarios[result.name] = {
                "status": result.status,
                "passed": result.passed(self.allow_warnings),
                "checks_passed": result.count("SUCCESS"),
                "checks_failed": result.count("FAILURE"),
                "checks_warnings": result.count("WARNING"),
                "error": result.error,
                "note": result.note,
                "problems": [
                    {"id": c.get("id"), "status": c.get("status"), "message": check_message(c, 2000)}
                    for c in result.problems()
                ],
                "checks": [
                    {
                        "id": c.get("id"),
                        "name": c.get("name"),
                        "status": c.get("status"),
                        "description": c.get("description"),
                        "message": c.get("errorMessage"),
                    }
                    for c in result.checks
                ],
            }
        return {
            "mode": self.mode,
            "target": self.target,
            "spec_version": self.spec_version,
            "harness": f"{HARNESS_PKG}@{HARNESS_VERSION}",
            "node": self.node,
            "allow_warnings": self.allow_warnings,
            "results_dir": str(self.results_dir),
            "ok": self.ok(),
            "summary": {
                "scenarios": len(self.results),
                "passed": len(self.passed()),
                "failed": len(self.failed()),
                "skipped": [r.name for r in self.skipped()],
                "warnings": totals["WARNING"],
                "warned_scenarios": sum(1 for r in self.results if r.count("WARNING")),
                "checks": totals,
            },
            "errors": self.errors,
            "scenarios": scenarios,
        }


def finish(report: Report, args: argparse.Namespace) -> int:
    as_json = report.as_json()
    if args.json_file:
        Path(args.json_file).write_text(json.dumps(as_json, indent=2) + "\n")
    report.print_text(sys.stderr if args.json else sys.stdout)
    if args.json:
        print(json.dumps(as_json, indent=2))
    return EXIT_OK if report.ok() else EXIT_FAILED


def finalize_result(result: ScenarioResult) -> ScenarioResult:
    # The harness calls a scenario with no checks at all "passed" (e.g. a client that never sent what the
    # scenario waits for); nothing was verified, so it fails here.
    if result.error is None and not result.checks:
        result.error = "the harness recorded no checks: the scenario never saw what it tests"
    elif result.error is None and result.count("SUCCESS") == 0 and not result.problems() and not result.skipped:
        result.error = "no check succeeded"
    return result


def emit(result: ScenarioResult, args: argparse.Namespace) -> None:
    print(format_scenario(result), file=sys.stderr if args.json else sys.stdout, flush=True)


def run_suite(
    harness: Harness, report: Report, args: argparse.Namespace, names: list[str], argv: list[str], limit: float
) -> int:
    """Run `argv` (a `server` or `client` harness command) with `--suite all` in one harness process, and
    report each listed scenario by the checks it left in the output directory."""
    out = report.results_dir / "suite"
    code, output = harness.run(
        [*argv, "--suite", "all", "-o", str(out)],
        timeout=limit,
        log_path=report.results_dir / "harness.log",
        echo=args.verbose,
    )
    found = collect(out, "server-" if report.mode == "server" else "")  # the harness's own directory names
    for name in names:
        result = ScenarioResult(name)
        checks = found.get(name)
        if checks is None:
            result.error = "no results (scenario crashed or did not run; see harness.log)"
        else:
            result.checks = checks
        emit(finalize_result(result), args)
        report.results.append(result)
    extra = sorted(set(found) - set(names))
    if extra:
        report.errors.append(f"harness ran scenarios missing from the listing: {', '.join(extra)}")
    if code == -1:
        report.errors.append(f"harness killed after {limit:.0f}s (see {report.results_dir / 'harness.log'})")
    elif code != 0 and not report.failed():
        report.errors.append(f"harness exited {code} although every scenario passed: {output[-500:]}")
    return finish(report, args)


# --------------------------------------------------------------------------------------------------------
# Commands


def check_loopback_url(url: str) -> tuple[str, int]:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SetupError(f"not an http(s) URL: {url!r}")
    host = parts.hostname
    try:
        loopback = host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise SetupError(f"refusing to test {host!r}: only loopback targets (127.0.0.1) are allowed")
    try:
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError as exc:
        raise SetupError(f"bad port in {url!r}") from exc
    return host, port


def wait_for_port(host: str, port: int, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with socket.create_connection((host, port), timeout=2):
                return
        except OSError as exc:
            if time.monotonic() >= deadline:
                raise SetupError(f"nothing listens on {host}:{port} after {seconds:.0f}s ({exc})") from exc
            time.sleep(0.25)


def cmd_install(_args: argparse.Namespace) -> int:
    node = ensure_installed()
    code, output = Harness(node).run(["--version"], timeout=PROBE_TIMEOUT)
    if code != 0 or output.strip() != HARNESS_VERSION:
        raise SetupError(f"installed harness does not run (exit {code}):\n{output[-2000:]}")
    node_version = subprocess.run(
        [node, "--version"], capture_output=True, text=True, timeout=PROBE_TIMEOUT, check=False
    ).stdout.strip()
    print(f"{HARNESS_PKG}@{HARNESS_VERSION} with node {node_version} ({node}) in {CACHE_DIR}")
    return EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    names = Harness(ensure_installed(), args.spec_version).scenarios(args.kind)
    print("\n".join(names))
    log(f"{len(names)} {args.kind} scenarios at {args.spec_version}")
    return EXIT_OK


def cmd_server(args: argparse.Namespace) -> int:
    host, port = check_loopback_url(args.url)
    spec = args.spec_version
    harness = Harness(ensure_installed(), spec)
    all_names = harness.scenarios("server")
    names = select(all_names, args.scenarios, "server", spec) if args.scenarios else all_names
    wait_for_port(host, port, args.wait)
    run_dir = new_run_dir("server")
    report = Report("server", args.url, harness.node, args.allow_warnings, run_dir, spec)
    per_scenario = args.timeout * 1000
    common = ["--url", args.url, *harness.spec_args(), "--timeout", str(per_scenario)]
    log(f"{len(names)} server scenario(s) at {spec} against {args.url}")

    if not args.scenarios and spec != EXTENSION:  # `--suite all` leaves the extension scenarios out
        # The whole suite in one harness process (what `--suite all` runs == the listing above).
        return run_suite(harness, report, args, names, ["server", *common], len(names) * (args.timeout + 15) + 60)

    for name in names:
        out = run_dir / safe_name(name)
        code, _ = harness.run(
            ["server", *common, "--scenario", name, "-o", str(out)],
            timeout=args.timeout + 60,
            log_path=run_dir / f"{safe_name(name)}.log",
            echo=args.verbose,
        )
        result = ScenarioResult(name)
        runs = list(collect(out, "server-").values())
        checks = runs[0] if len(runs) == 1 else None
        if checks is None:
            result.error = "no results (harness failed; see its log)"
            if code == -1:
                result.error = f"harness killed after {args.timeout + 60}s"
        else:
            result.checks = checks
            if code not in (0, 1) or (code == 1 and not result.count("FAILURE")):
                result.error = f"harness exited {code}"
        emit(finalize_result(result), args)
        report.results.append(result)
    return finish(report, args)


def cmd_client(args: argparse.Namespace) -> int:
    command: list[str] = args.command
    if not command:
        raise SetupError("client mode needs the client command after `--`")
    # The harness splits the string on single spaces, appends the mock URL and runs it through a shell,
    # so shell quoting survives the round trip. `exec` makes the harness's timeout signal reach the client
    # itself instead of the wrapping shell.
    command_line = " ".join(shlex.quote(part) for part in command)
    harness_command = f"exec {command_line}"
    spec = args.spec_version
    harness = Harness(ensure_installed(), spec)
    all_names = harness.scenarios("client")
    run_dir = new_run_dir("client")
    report = Report("client", command_line, harness.node, args.allow_warnings, run_dir, spec)
    if not args.scenarios:
        if spec == EXTENSION:
            raise SetupError("name the extension scenarios to run: `--suite all` leaves them out")
        # Every scenario at this revision in one harness process, which runs them side by side: one node
        # start instead of one per scenario. A client's exit status is not told apart there; its checks are.
        log(f"{len(all_names)} client scenario(s) at {spec}, side by side; command: {command_line}")
        client = ["client", "--command", harness_command, *harness.spec_args(), "--timeout", str(args.timeout * 1000)]
        return run_suite(harness, report, args, all_names, client, 2 * args.timeout + 120)
    names = select(all_names, args.scenarios, "client", spec)
    log(f"{len(names)} client scenario(s) at {spec}, one at a time; command: {command_line}")

    for name in names:
        out = run_dir / safe_name(name)
        limit = args.timeout + 30
        code, output = harness.run(
            [
                "client",
                "--command",
                harness_command,
                "--scenario",
                name,
                *harness.spec_args(),
                "--timeout",
                str(args.timeout * 1000),
                "-o",
                str(out),
            ],
            timeout=limit,
            log_path=run_dir / f"{safe_name(name)}.log",
            echo=args.verbose,
        )
        result = ScenarioResult(name)
        runs = list(collect(out, "").values())
        checks = runs[0] if len(runs) == 1 else None
        if checks is not None:
            result.checks = checks
        exit_match = _CLIENT_EXIT.search(output)
        client_exit = int(exit_match.group(1)) if exit_match else 0
        if code == -1:
            # The harness only signals the process it spawned; a client whose children keep the output
            # pipes open stalls it, so our own limit ended the whole process group.
            result.error = f"client did not finish within {args.timeout}s; everything killed after {limit}s"
        elif _CLIENT_TIMEOUT.search(output):
            result.error = f"client timed out after {args.timeout}s"
        elif client_exit != 0 and code != 0:
            result.error = f"client exited with code {client_exit} (stdout/stderr in {out})"
        elif client_exit != 0:
            # Scenarios where the client is expected to refuse (auth rejections, invalid tool headers)
            # let it exit non-zero; the harness then still reports success.
            result.note = f"client exited {client_exit}, accepted by this scenario"
        elif checks is None:
            result.error = "no results (harness failed; see its log)"
        elif code != 0 and not result.problems():
            result.error = f"harness exited {code}"
        emit(finalize_result(result), args)
        report.results.append(result)
    return finish(report, args)


# --------------------------------------------------------------------------------------------------------
# CLI


def build_parser() -> tuple[argparse.ArgumentParser, dict[str, argparse.ArgumentParser]]:
    parser = argparse.ArgumentParser(
        prog="conformance.py",
        description=f"Run {HARNESS_PKG}@{HARNESS_VERSION} at spec {' or '.join(SPEC_VERSIONS)}, loopback only.",
    )
    sub = parser.add_subparsers(dest="mode", required=True)

    installer = sub.add_parser("install", help="install the pinned harness (and node >= 22) into .cache")

    def versioned(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--spec-version",
            choices=(*SPEC_VERSIONS, EXTENSION),
            default=DEFAULT_SPEC_VERSION,
            help="protocol revision whose scenarios run, at its wire version (default %(default)s), "
            f"or {EXTENSION!r}: the extension scenarios",
        )

    lister = sub.add_parser("list", help="list scenario names applicable at the spec version")
    lister.add_argument("kind", choices=("server", "client"))
    versioned(lister)

    def reporting(p: argparse.ArgumentParser, timeout_help: str) -> None:
        p.add_argument("--allow-warnings", action="store_true", help="WARNING checks do not fail a scenario")
        p.add_argument("--json", action="store_true", help="JSON summary on stdout (human report on stderr)")
        p.add_argument("--json-file", metavar="PATH", help="also write the JSON summary to PATH")
        p.add_argument("--timeout", type=int, default=DEFAULT_SCENARIO_TIMEOUT, metavar="SECONDS", help=timeout_help)
        p.add_argument("--verbose", action="store_true", help="stream the harness output to stderr")
        versioned(p)

    server = sub.add_parser("server", help="test the MCP server at URL")
    server.add_argument("url", help="e.g. http://127.0.0.1:3101/mcp (loopback only)")
    server.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="names or globs (default: all)")
    server.add_argument("--wait", type=float, default=15, metavar="SECONDS", help="wait for the port to open")
    reporting(server, "per-scenario harness timeout (default %(default)s)")

    client = sub.add_parser(
        "client",
        help="test a client: [SCENARIO...] -- COMMAND [ARG...]",
        usage="%(prog)s [options] [SCENARIO ...] -- COMMAND [ARG ...]",
        description="The harness runs `COMMAND ARG... <mock-server-url>` once per scenario: the named ones one "
        "at a time, or, when none is named, every scenario of the revision side by side in one harness process.",
    )
    client.add_argument("scenarios", nargs="*", metavar="SCENARIO", help="names or globs (default: all, side by side)")
    reporting(client, "time limit for each client run (default %(default)s)")
    return parser, {"install": installer, "list": lister, "server": server, "client": client}


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # Everything after the first `--` is the client command (argparse cannot keep it apart itself).
    command: list[str] = []
    if "--" in argv:
        split = argv.index("--")
        argv, command = argv[:split], argv[split + 1 :]
    parser, modes = build_parser()
    if not argv or argv[0] not in modes:
        parser.parse_args(argv)  # prints help or the usage error and exits
        return EXIT_USAGE
    # Per-mode parsing with intermixed options: `server URL --wait 5 tools-list` keeps tools-list.
    mode_parser = modes[argv[0]]
    args = mode_parser.parse_intermixed_args(argv[1:])
    args.mode = argv[0]
    if args.mode != "client" and command:
        mode_parser.error("`-- COMMAND` is only used in client mode")
    args.command = command
    if getattr(args, "timeout", 1) <= 0:
        mode_parser.error("--timeout must be positive")
    handlers = {"install": cmd_install, "list": cmd_list, "server": cmd_server, "client": cmd_client}
    try:
        return handlers[args.mode](args)
    except SetupError as exc:
        log(f"error: {exc}")
        return EXIT_USAGE
    except KeyboardInterrupt:
        log("interrupted")
        return 130


if __name__ == "__main__":
    sys.exit(main())
