"""Loading a serve target (`path/to/file.py[:attr]` or `module:attr`), with errors a user can act on.

Every failure is a `TargetError` whose message says what to fix, for `baton serve` to print as is
(exit 2, protocol.md P97): a missing file or attribute (with the closest name: "did you mean"), a
file that cannot be read (one line naming it, with the system's reason), a module that raised while
importing (its traceback, with Baton's own frames and the import machinery cut, so only the user's
lines show), and every handler Baton cannot serve, each at its `file:line`, all at once
(`baton.server.problems.gathering`).
"""

from __future__ import annotations

import difflib
import importlib
import importlib.util
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

from ..server.core import Server
from ..server.problems import gathering
from ..targets import split_target

_BATON_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # the baton package


class TargetError(Exception):
    """A serve target that cannot be loaded; the message says what to fix."""


def load_server(target: str) -> Server:
    """Load `path/to/file.py[:attr]` or `module:attr` (attr defaults to the module's only Server)."""
    spec, attr = split_target(target)
    with gathering() as problems:
        module = _import(spec)
    if problems:
        count = len(problems.problems)
        raise TargetError(
            f"cannot serve {spec}: {count} problem{'s' if count > 1 else ''} with its handlers:\n{problems}"
        )
    if attr:
        obj = getattr(module, attr, None)
        if obj is None:
            raise TargetError(f"{spec} has no attribute {attr!r}{_did_you_mean(attr, _server_names(module))}")
        if callable(obj) and not isinstance(obj, Server):
            try:
                obj = obj()
            except Exception as exc:
                raise TargetError(f"{target}() raised an error:\n{_users_traceback(exc)}") from None
        if not isinstance(obj, Server):
            raise TargetError(f"{target} is a {type(obj).__name__}, not a baton.Server")
        return obj
    servers = [v for v in vars(module).values() if isinstance(v, Server)]
    if len(servers) != 1:
        found = "no Server" if not servers else f"{len(servers)} Servers"
        raise TargetError(f"{spec} defines {found}; name one as {spec}:ATTRIBUTE")
    return servers[0]


def _import(spec: str) -> ModuleType:
    if spec.endswith(".py") or os.sep in spec:
        path = Path(spec).resolve()
        try:
            path.open("rb").close()
        except FileNotFoundError:
            raise TargetError(f"no such file: {spec}{_did_you_mean(path.name, _nearby(path))}") from None
        except OSError as exc:  # an unreadable file or folder: one line, not a traceback
            raise TargetError(f"cannot read {spec}: {exc.strerror or exc}") from None
        sys.path.insert(0, str(path.parent))
        module_spec = importlib.util.spec_from_file_location(f"baton_target_{path.stem}", path)
        if module_spec is None or module_spec.loader is None:
            raise TargetError(f"cannot import {spec}")
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_spec.name] = module
        try:
            module_spec.loader.exec_module(module)
        except Exception as exc:
            raise TargetError(f"{spec} cannot be loaded; the error is in its code:\n{_users_traceback(exc)}") from None
        return module
    try:
        return importlib.import_module(spec)
    except ModuleNotFoundError as exc:
        if exc.name is not None and spec.startswith(exc.name):  # the target itself, not one it imports
            raise TargetError(f"cannot import module {spec!r}: {exc}") from None
        raise TargetError(f"{spec} cannot be loaded; the error is in its code:\n{_users_traceback(exc)}") from None
    except Exception as exc:
        raise TargetError(f"{spec} cannot be loaded; the error is in its code:\n{_users_traceback(exc)}") from None


def _nearby(path: Path) -> list[str]:
    """The Python files beside `path`, for a "did you mean"; none where its folder cannot be listed."""
    try:
        return [p.name for p in path.parent.glob("*.py")]
    except OSError:
        return []


def _users_traceback(exc: BaseException) -> str:
    """The traceback of an error raised in the user's code, without Baton's frames or the import machinery."""
    shown = traceback.TracebackException.from_exception(exc)
    for part in _chain(shown):
        frames = [f for f in part.stack if not _ours(f.filename)]
        part.stack = traceback.StackSummary.from_list(frames)
    return "".join(shown.format()).rstrip("\n")


def _chain(shown: traceback.TracebackException) -> list[traceback.TracebackException]:
    parts, seen = [], set()
    part: traceback.TracebackException | None = shown
    while part is not None and id(part) not in seen:
        seen.add(id(part))
        parts.append(part)
        part = part.__cause__ or (None if part.__suppress_context__ else part.__context__)
    return parts


def _ours(filename: str) -> bool:
    """A frame of Baton itself, or of Python's import machinery."""
    return filename.startswith(_BATON_DIR) or filename.startswith("<frozen importlib")


def _server_names(module: ModuleType) -> list[str]:
    """The names a target may give: the module's Servers first, then its other public names."""
    names = vars(module)
    servers = [k for k, v in names.items() if isinstance(v, Server)]
    return servers + [k for k in names if not k.startswith("_") and k not in servers]


def _did_you_mean(name: str, candidates: list[str]) -> str:
    close = difflib.get_close_matches(name, candidates, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""
