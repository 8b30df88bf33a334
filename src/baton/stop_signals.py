"""The signals that stop a Baton command, and its exit status after each (protocol.md P98).

SIGINT (Ctrl-C, the user's interruption) and SIGTERM (a host or supervisor asking it to stop) end every
long-running command (`baton serve` over stdio or HTTP, `baton bridge`, `baton dev`) cleanly; a shell expects
128 + SIGINT after Ctrl-C, and a stop that was asked for is a clean stop, hence 0.
"""

from __future__ import annotations

import signal

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def exit_status(*received: int | None) -> int:
    """The exit status of a command stopped by the signals `received` (none, or None: it ended on its own): 130 when
    SIGINT is among them, else 0."""
    return 128 + signal.SIGINT if signal.SIGINT in received else 0
