"""How a server target is written on a command line: `path/to/file.py[:ATTR]` or `module:attr`.

`split_target(target)` is the one place it is split into what to load and the attribute to take (""
when none is named): on the first `:`, except that a Windows drive (`C:\\srv\\app.py`, `C:/srv/app.py`)
is part of the path, whose own `:ATTR` then follows it. `baton serve`, `baton dev`, `baton install` and
`--reload` (which folder to watch) all read a target through it.
"""

from __future__ import annotations


def split_target(target: str) -> tuple[str, str]:
    """`(spec, attr)`: the file or module to load, and the attribute named after its `:` ("" if none)."""
    drive = target[:2] if len(target) > 2 and target[1] == ":" and target[2] in "\\/" else ""
    spec, _, attr = target[len(drive) :].partition(":")
    return drive + spec, attr
