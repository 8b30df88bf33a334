"""A program run on a real pseudo-terminal, and the user's side of it: wait for text on the screen, type keys.

The program gets the slave side as stdin, stdout and stderr (so it sees a terminal, as under a person);
the test reads the master side. Enter is sent as a carriage return, as a real terminal does.
"""

from __future__ import annotations

import os
import re
import select
import time
from collections.abc import Mapping, Sequence

from support.processes import spawn

ENTER = "\r"
CTRL_C = "\x03"
CTRL_D = "\x04"
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class Terminal:
    """`argv` on a new pty, with `env` over this process's environment (less NO_COLOR: terminals have colour)."""

    def __init__(self, argv: Sequence[str], *, env: Mapping[str, str] | None = None, cwd: str | None = None) -> None:
        master, slave = os.openpty()
        full = {k: v for k, v in os.environ.items() if k != "NO_COLOR"}
        full.update({"PYTHONUNBUFFERED": "1", "PYTHONIOENCODING": "utf-8", **(env or {})})
        self.process = spawn(
            list(argv),
            stdin=slave,
            stdout=slave,
            stderr=slave,
            start_new_session=True,
            env=full,
            cwd=cwd,
            close_fds=True,
        )
        self.proc = self.process.proc
        os.close(slave)
        self.master = master
        self.raw = b""
        self.cursor = 0  # screen text before this has been matched already

    @property
    def screen(self) -> str:
        """Everything shown so far, without colour codes and with Enter as a newline."""
        return ANSI.sub("", self.raw.decode("utf-8", errors="replace")).replace("\r\n", "\n")

    def _pump(self, deadline: float) -> bool:
        """Read what is available; False once the program has closed the terminal."""
        ready, _, _ = select.select([self.master], [], [], max(0.0, min(0.2, deadline - time.monotonic())))
        if not ready:
            return True
        try:
            chunk = os.read(self.master, 65536)
        except OSError:  # EIO: the slave side is closed
            return False
        self.raw += chunk
        return bool(chunk)

    def expect(self, text: str, timeout: float = 15.0) -> str:
        """Wait until `text` appears after the previous match; returns the screen up to and including it."""
        deadline = time.monotonic() + timeout
        while True:
            screen = self.screen
            at = screen.find(text, self.cursor)
            if at >= 0:
                seen, self.cursor = screen[self.cursor : at + len(text)], at + len(text)
                return seen
            if time.monotonic() > deadline or not self._pump(deadline):
                raise AssertionError(f"{text!r} did not appear; the screen shows:\n{self.screen[self.cursor :]}")

    def idle(self, seconds: float = 0.5) -> str:
        """The screen after the previous match, once nobody has typed for `seconds` more."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and self._pump(deadline):
            pass
        return self.screen[self.cursor :]

    def type(self, keys: str) -> None:
        os.write(self.master, keys.encode())

    def answer(self, prompt: str, keys: str) -> str:
        """Wait for `prompt`, then type `keys` and Enter; returns the screen up to the prompt."""
        seen = self.expect(prompt)
        self.type(keys + ENTER)
        return seen

    def wait(self, timeout: float = 15.0) -> int:
        """Read the screen until the program exits; its exit status."""
        deadline = time.monotonic() + timeout
        while self._pump(deadline) and time.monotonic() < deadline:
            pass
        return self.proc.wait(timeout=max(0.1, deadline - time.monotonic()))

    def close(self) -> None:
        self.process.kill()
        os.close(self.master)
