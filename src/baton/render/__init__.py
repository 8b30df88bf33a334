"""Renderers that put a server's elicitation in front of a person and bring back the answer: a terminal
one (`TerminalRenderer`), and HTML forms for a page (`baton.render.html`)."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .html import form_html, form_values
    from .terminal import QuestionLike, TerminalRenderer

# Each public name and the module it lives in, imported on first use (PEP 562): see baton/client/__init__.py.
_WHERE = {
    "form_html": ".html",
    "form_values": ".html",
    "QuestionLike": ".terminal",
    "TerminalRenderer": ".terminal",
}


def __getattr__(name: str) -> Any:
    module = _WHERE.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_WHERE))


__all__ = ["QuestionLike", "TerminalRenderer", "form_html", "form_values"]
