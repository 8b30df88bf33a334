"""Scale-out harness: independent `baton serve` instances behind a real nginx, sharing a key file and Redis.

`Cluster` starts a redis-server, N instances of tests/servers/scaleout_server.py (each with its own
BATON_INSTANCE and data directory, the same BATON_KEY_FILE and BATON_LEDGER) and nginx in front of
them, all on loopback ports. nginx runs examples/deploy/nginx.conf itself, with only its addresses
and log path rewritten, inside a small main configuration whose pid, logs and temp paths are in the
test's directory. `Cluster.close()` stops every process it started, whatever state the test left.

What the scale-out tests share besides: their fixtures `cluster` and `report` (from `fixtures`) and `run` (a
coroutine on uvloop).
"""

from __future__ import annotations

import asyncio
import collections
import os
import re
import shutil
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest
import uvloop
from support import processes
from support.markers import needs
from support.paths import BATON, ROOT, SERVERS
from support.processes import PortOpen, Process, free_port, spawn, start
from support.redis_server import RedisServer

from baton import Key

NGINX_EXAMPLE = ROOT / "examples" / "deploy" / "nginx.conf"
TARGET = str(SERVERS / "scaleout_server.py")
T = TypeVar("T")
NGINX_HINT = "install Debian's nginx with `apt-get install -y nginx` (./dev test does it when it is missing)"


def nginx_binary() -> str:
    found = shutil.which("nginx") or next((p for p in ("/usr/sbin/nginx",) if os.access(p, os.X_OK)), None)
    if found is None:
        pytest.fail(f"nginx is not installed, and the scale-out tests need a real one: {NGINX_HINT}")
    return found


def _substitute(text: str, pattern: str, replace: str, count: int) -> str:
    """Replace `pattern` (multiline regex) exactly `count` times, or fail: the example must not drift."""
    new, made = re.subn(pattern, replace, text, flags=re.MULTILINE)
    if made != count:
        pytest.fail(f"{NGINX_EXAMPLE} no longer has {count} line(s) matching {pattern!r} (found {made})")
    return new


def render_site(
    example: str, listen_port: int, upstream_ports: list[int], access_log: Path, *, round_robin: bool = False
) -> str:
    """examples/deploy/nginx.conf with loopback addresses: its three upstream servers become ours. With
    `round_robin`, its `hash` line goes: nginx's default, every request to the next instance in turn."""
    params = re.search(r"^\s*server 10\.0\.0\.11:8000( [^;]*);$", example, flags=re.MULTILINE)
    if params is None:
        pytest.fail(f"{NGINX_EXAMPLE} no longer starts its upstream with `server 10.0.0.11:8000 ...;`")
    servers = "\n".join(f"    server 127.0.0.1:{port}{params.group(1)};" for port in upstream_ports)
    text = _substitute(example, r"^    server 10\.0\.0\.1[23]:8000 [^;]*;\n", "", 2)
    text = _substitute(text, r"^    server 10\.0\.0\.11:8000 [^;]*;$", servers.replace("\\", "\\\\"), 1)
    text = _substitute(text, r"^(\s*)listen 80;", rf"\g<1>listen 127.0.0.1:{listen_port};", 1)
    if round_robin:
        text = _substitute(text, r"^    hash \$baton_affinity consistent;\n", "", 1)
    log = r"access_log /var/log/nginx/baton\.access\.log baton;"
    return _substitute(text, log, f"access_log {access_log} baton;", 1)


def render_main(prefix: Path, site: Path) -> str:
    """The main configuration around the site: foreground, one process, everything in `prefix`.

    `master_process off` keeps nginx to one process (as any user, nothing to reap if the test dies);
    the proxying, balancing and retry logic under test is the same as with workers.
    """
    temp = prefix / "temp"
    return f"""daemon off;
master_process off;
worker_processes 1;
pid {prefix}/nginx.pid;
error_log {prefix}/error.log notice;
events {{ worker_connections 1024; }}
http {{
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    include {site};
}}
"""


class Nginx:
    """nginx in the foreground on a loopback port, proxying to `upstream_ports` as examples/deploy/nginx.conf does."""

    def __init__(self, prefix: Path, upstream_ports: list[int], *, round_robin: bool = False) -> None:
        self.binary = nginx_binary()
        self.round_robin = round_robin
        self.prefix = prefix
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/mcp"
        self.access_log = prefix / "access.log"
        self.error_log = prefix / "error.log"
        self.upstream_ports = upstream_ports
        self.process: Process | None = None

    def start(self) -> None:
        (self.prefix / "temp").mkdir(parents=True, exist_ok=True)
        site = self.prefix / "baton.conf"
        example = NGINX_EXAMPLE.read_text()
        site.write_text(
            render_site(example, self.port, self.upstream_ports, self.access_log, round_robin=self.round_robin)
        )
        conf = self.prefix / "nginx.conf"
        conf.write_text(render_main(self.prefix, site))
        self.process = start(
            [self.binary, "-p", f"{self.prefix}/", "-c", str(conf), "-e", "stderr"],
            log=self.prefix / "stderr.log",
            append=True,
            ready=PortOpen(self.port),
            name="nginx",
        )

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()
        self.process = None

    def retried_requests(self) -> int:
        """Access-log lines of requests that nginx passed to more than one upstream (`upstream=a, b`)."""
        if not self.access_log.exists():
            return 0
        return sum(", " in line.partition("upstream=")[2].partition(" status=")[0] for line in self._lines())

    def logged_instances(self) -> collections.Counter[str]:
        """Requests per instance as nginx's access log names them (`instance=` is the baton-instance header)."""
        return collections.Counter(line.rpartition(" instance=")[2] for line in self._lines() if " instance=" in line)

    def _lines(self) -> list[str]:
        return self.access_log.read_text(errors="replace").splitlines()


class Instance:
    """One `baton serve` process: its own name, port and data directory; the shared key file and ledger."""

    def __init__(
        self, name: str, workdir: Path, env: dict[str, str], args: tuple[str, ...] = (), target: str = TARGET
    ) -> None:
        self.name = name
        self.args = args
        self.target = target
        self.port = free_port()
        self.log = workdir / f"instance-{name}.log"
        data = workdir / f"data-{name}"
        data.mkdir(parents=True, exist_ok=True)
        self.env = {**env, "BATON_INSTANCE": name, "BATON_DATA_DIR": str(data)}
        self.process: Process | None = None

    def spawn(self) -> None:
        self.process = spawn(
            [BATON, "serve", self.target, "--http", f"127.0.0.1:{self.port}", *self.args],
            log=self.log,
            append=True,
            cwd=ROOT,
            env=self.env,
            name=f"instance {self.name}",
        )

    def wait(self) -> None:
        assert self.process is not None
        self.process.wait_ready(PortOpen(self.port))

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def rss_kib(self) -> int:
        """Resident set size now, from /proc/<pid>/status."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
        raise RuntimeError(f"no VmRSS for instance {self.name} (pid {self.pid})")

    def kill(self) -> None:
        """SIGKILL: the instance dies at once, as in a crash (no graceful shutdown)."""
        assert self.process is not None
        self.process.kill()

    def stop(self) -> None:
        if self.process is not None:
            self.process.stop()

    def log_text(self) -> str:
        return self.log.read_text(errors="replace") if self.log.exists() else ""


class Cluster:
    """Redis, `count` instances (each `baton serve ... *args`) and nginx (`round_robin`: without the shipped
    config's `hash`); `url` is nginx's MCP endpoint."""

    def __init__(
        self,
        workdir: Path,
        count: int = 3,
        *,
        persistent_redis: bool = True,
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
        round_robin: bool = False,
        target: str = TARGET,
        public_url: bool = False,
    ) -> None:
        self.workdir = workdir
        self.target = target
        self.public_url = public_url  # the instances' public URL is nginx's address; their connect store, Redis
        self.args = args
        self.round_robin = round_robin
        self.extra_env = env or {}
        self.key_file = workdir / "state-keys"
        self.runlog = workdir / "runs.log"
        self.redis = RedisServer(workdir, persistent=persistent_redis)
        self.instances: list[Instance] = []
        self.nginx: Nginx | None = None
        self.count = count

    def start(self) -> None:
        self.redis.start()
        fd = os.open(self.key_file, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(Key.generate("k0").encode() + "\n")
        env = {k: v for k, v in os.environ.items() if k not in ("BATON_STATE_KEYS", "BATON_DATA_DIR")}
        env |= {
            "BATON_KEY_FILE": str(self.key_file),
            "BATON_LEDGER": self.redis.url,
            "BATON_TEST_RUNLOG": str(self.runlog),
            **self.extra_env,
        }
        self.instances = [
            Instance(name, self.workdir, env, self.args, self.target) for name in "abcdefgh"[: self.count]
        ]
        self.nginx = Nginx(self.workdir / "nginx", [i.port for i in self.instances], round_robin=self.round_robin)
        if self.public_url:
            public = self.nginx.url.removesuffix("/mcp")
            for instance in self.instances:
                # The pages' tickets are shared through the same Redis as the ledger.
                instance.env |= {
                    "BATON_TEST_PUBLIC_URL": public,
                    "BATON_PUBLIC_URL": public,
                    "BATON_CONNECT_STORE": self.redis.url,
                }
        for instance in self.instances:
            instance.spawn()
        for instance in self.instances:
            instance.wait()
        self.nginx.start()

    @property
    def url(self) -> str:
        assert self.nginx is not None
        return self.nginx.url

    def instance(self, name: str) -> Instance:
        return next(i for i in self.instances if i.name == name)

    def executions(self) -> collections.Counter[str]:
        """How many times the transfer of each flow id ran, from the O_APPEND run log."""
        return collections.Counter(flow for flow, _ in self._runs())

    def executed_on(self) -> dict[str, str]:
        """The instance that ran each flow's transfer (the last one, if it ran more than once)."""
        return dict(self._runs())

    def _runs(self) -> list[tuple[str, str]]:
        if not self.runlog.exists():
            return []
        return [(words[0], words[1]) for words in (line.split() for line in self.runlog.read_text().splitlines())]

    def rotate_keys(self) -> str:
        """`BATON_KEY_FILE=F baton keys rotate`; returns the new sealing key id."""
        env = {**os.environ, "BATON_KEY_FILE": str(self.key_file)}
        command = [BATON, "keys", "rotate"]
        done = processes.run(command, check=False, capture_output=True, text=True, timeout=30, env=env)
        assert done.returncode == 0, done.stderr
        return self.key_file.read_text().split(":", 1)[0]

    def logs(self) -> str:
        """Every instance's log, for assertion messages."""
        return "\n".join(f"--- instance {i.name}\n{i.log_text()[-4000:]}" for i in self.instances)

    def close(self) -> None:
        if self.nginx is not None:
            self.nginx.stop()
        for instance in self.instances:
            instance.stop()
        self.redis.stop()


def running_cluster(tmp_path: Path, **options: Any) -> Iterator[Cluster]:
    """A `Cluster(**options)` in the test's tmp_path, started; closed after the test, whatever it did."""
    workdir = tmp_path / "cluster"
    workdir.mkdir()
    running = Cluster(workdir, **options)
    try:
        running.start()
        yield running
    finally:
        running.close()


def fixtures(tag: str) -> tuple[Any, Any]:
    """The fixtures `cluster` (three instances in the test's tmp_path, started; closed after the test, whatever it
    did) and `report` (prints a measured figure after `[tag]`, even when pytest captures output), for a test
    module to take as `cluster, report = fixtures(TAG)`."""

    @pytest.fixture
    @needs("nginx", "redis")
    def cluster(tmp_path: Path) -> Iterator[Cluster]:
        yield from running_cluster(tmp_path)

    @pytest.fixture
    def report(capsys: pytest.CaptureFixture[str]) -> Callable[[str], None]:
        def say(line: str) -> None:
            with capsys.disabled():
                print(f"\n    [{tag}] {line}")

        return say

    return cluster, report


def run(main: Callable[[], Awaitable[T]]) -> T:
    """`main()` to its end on a uvloop event loop."""
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        return runner.run(main())  # type: ignore[arg-type]
