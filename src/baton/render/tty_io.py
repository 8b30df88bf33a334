"""Terminal plumbing for the terminal renderer: is a stream a terminal, reading a line straight from its
descriptor, dropping typed-ahead keys, and the line mode a dialog runs in (termios, POSIX only)."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO


def isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def tty_fd(stream: TextIO) -> int | None:
    """The descriptor of a terminal input stream, read directly; None for pipes, files and StringIO."""
    try:
        fd = stream.fileno()
    except (AttributeError, ValueError, OSError):
        return None
    return fd if os.isatty(fd) else None


def read_line(fd: int, encoding: str) -> str:
    """A line read straight from a terminal descriptor, ended by a newline or Ctrl-C (see `line_mode`); "" at end."""
    data = b""
    while True:
        chunk = os.read(fd, 4096)
        if not chunk:
            return ""
        data += chunk
        if data.endswith((b"\n", b"\x03")):
            return data.decode(encoding, errors="replace")


def flush_typeahead(fd: int) -> None:
    """Drop keys typed so far, so that an earlier Enter cannot answer the next prompt."""
    if sys.platform == "win32":
        return
    import termios  # noqa: PLC0415 (POSIX only)

    with contextlib.suppress(termios.error):
        termios.tcflush(fd, termios.TCIFLUSH)


@contextlib.contextmanager
def line_mode(fd: int) -> Iterator[None]:
    """Line mode with echo; Ctrl-C becomes an end-of-line character instead of a signal; restored after."""
    if sys.platform == "win32":
        yield
        return
    import termios  # noqa: PLC0415 (POSIX only)

    try:
        saved = termios.tcgetattr(fd)
    except termios.error:
        yield
        return
    mode = list(saved)
    mode[0] |= termios.ICRNL
    mode[3] = (mode[3] | termios.ICANON | termios.ECHO) & ~termios.ISIG
    cc = list(saved[6])
    cc[termios.VEOL] = b"\x03"
    mode[6] = cc
    termios.tcsetattr(fd, termios.TCSANOW, mode)
    try:
        yield
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)
