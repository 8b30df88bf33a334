"""How to install one of Baton's optional extras (`[otel]`, `[redis]`, `[oauth]`, `[pydantic]`): the one
rule every hint in `src/` follows.

Baton is on no package index: it installs from its checkout, so a hint that names a package to fetch
sends people nowhere. The hint is a command for the Python running now (`python -m pip`, so the extra lands where Baton
is). An editable install (`./dev setup`, `pip install -e .`) knows its checkout: the hint names it. Otherwise
the hint says to run it in the root of the checkout Baton was installed from.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path


def install_extra(extra: str) -> str:
    """The command that installs Baton's `extra` into this Python, e.g. for `otel`
    `/srv/baton/.venv/bin/python -m pip install -e '/srv/baton[otel]'`."""
    pip = f"{shlex.quote(sys.executable)} -m pip install"
    root = checkout()
    if root is not None:
        return f"{pip} -e {shlex.quote(f'{root}[{extra}]')}"
    return f"{pip} '.[{extra}]' in the root of the Baton checkout it was installed from"


class MissingExtra(ImportError):
    """An optional extra that a feature needs is not installed; the message says which and how to install it."""

    def __init__(self, extra: str, needed_by: str) -> None:
        super().__init__(f"{needed_by} needs Baton's [{extra}] extra, which is not installed: {install_extra(extra)}")
        self.extra = extra


def checkout() -> Path | None:
    """The checkout this Baton runs from (an editable install), or None when it was copied into site-packages."""
    root = Path(__file__).resolve().parents[2]  # <checkout>/src/baton/extras.py
    return root if (root / "pyproject.toml").is_file() and (root / "src" / "baton").is_dir() else None
