"""A raw stdio peer: `baton serve TARGET --stdio` as a subprocess, JSON-RPC lines written to it and read back.

`StdioPeer.read()` takes the next stdout line, which must be one JSON message, or raises TimeoutError (none
within `timeout`) or EOFError (the server closed stdout); `close()` closes stdin and returns the exit status.
Leaving `with peer.process:` stops the server whatever the test did. `launcher` runs the server through
another command (`["sh", "launch.sh"]`, which gets the server's command line as its arguments); `command`
replaces the whole command line (a server that is not started by `baton serve`, such as a bundle's).
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import time
from collections.abc import Sequence
from typing import Any

from wire import meta

from support.paths import BATON, ROOT
from support.processes import spawn


class StdioPeer:
    def __init__(
        self,
        target: str,
        env: dict[str, str] | None = None,
        *,
        launcher: Sequence[str] = (),
        command: Sequence[str] = (),
    ) -> None:
        self.process = spawn(
            list(command) or [*launcher, BATON, "serve", target, "--stdio"],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
        )
        self.proc = self.process.proc
        self.buffer = b""

    def send(self, message: dict[str, Any] | bytes) -> None:
        assert self.proc.stdin is not None
        data = message if isinstance(message, bytes) else json.dumps(message).encode() + b"\n"
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def request(self, rid: Any, method: str, params: dict[str, Any] | None = None, **meta_extra: Any) -> None:
        """A 2026-07-28 request: `params` with the `_meta` envelope (and `meta_extra` in it)."""
        body = dict(params or {})
        body["_meta"] = meta(**meta_extra)
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": body})

    def read(self, timeout: float = 10.0) -> dict[str, Any]:
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buffer:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.proc.stdout], [], [], max(left, 0))
            if not ready:
                raise TimeoutError("no message from the server")
            chunk = os.read(self.proc.stdout.fileno(), 65536)
            if not chunk:
                raise EOFError("the server closed stdout")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return dict(json.loads(line))  # every stdout line must be one JSON message

    def close(self) -> int:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        return self.proc.wait(10)
