"""Public names a package imports on first use (PEP 562), for the packages a program often does not need.

`baton serve` and most other commands touch `baton.client`, `baton.client.oauth` or `baton.render` only for a
constant or a rule, and importing those packages whole cost a third of the command line's start-up (the client,
PyJWT, httpx); and pytest loads the `baton.testing` plugin in every run of a project that installs Baton, which,
through `baton` and `baton.testing`, imported the whole server. Such a package lists each public name with the
module it lives in and takes its module `__getattr__` and `__dir__` from here; `from baton.client import Client`
works as before, and the names stay visible to type checkers through the package's `TYPE_CHECKING` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_exports(package: str, where: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The module `__getattr__` and `__dir__` of `package`, whose public names live in the modules `where`
    maps them to (relative to `package`)."""

    def __getattr__(name: str) -> Any:
        module = where.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        setattr(sys.modules[package], name, value)  # the next lookup finds it without coming here
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(where))

    return __getattr__, __dir__
