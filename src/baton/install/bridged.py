"""A URL server as a stdio entry that runs `baton bridge URL` (protocol.md P159).

For a host whose file takes no URL (Claude Desktop: the default there), or with `--bridge` for any host:
the entry starts this environment's Baton as `baton bridge URL`, which speaks either MCP version to the
host and forwards to the server over Streamable HTTP. A `--header NAME=VALUE` goes into the entry's
arguments only as a reference, `$VAR` or `${VAR}`, which the bridge reads from its environment when it
starts: a header's value itself is never written into the host's config.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence

from .host_apps import Entry, InstallError

_REFERENCE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")


def bridge_entry(url: str, headers: Sequence[str], env: dict[str, str]) -> Entry:
    """The stdio entry for `url`; InstallError for a header not given as NAME=...$VAR..."""
    args = ["-m", "baton", "bridge", url]
    for pair in headers:
        name, eq, value = pair.partition("=")
        if not eq or not name.strip() or any(c in name for c in " :\t"):
            raise InstallError(f"--header takes NAME=VALUE, with a header name before '=' (got {name[:40]!r})")
        if not _REFERENCE.search(value):
            raise InstallError(
                f"--header {name}: give the value as $VAR (a variable of the host's environment, or --env VAR=...), "
                "never the value itself: the host's config file would hold it"
            )
        args += ["--header", f"{name}={value}"]
    return Entry(command=sys.executable, args=tuple(args), env=tuple(env.items()))
