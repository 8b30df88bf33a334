"""Renderers that put a server's elicitation in front of a person and bring back the answer: a terminal
one (`TerminalRenderer`), and HTML forms for a page (`baton.render.html`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..lazy_exports import lazy_exports

if TYPE_CHECKING:
    from .html import form_html, form_values
    from .terminal import QuestionLike, TerminalRenderer

# Each public name and the module it lives in, imported on first use (baton.lazy_exports).
_WHERE = {
    "form_html": ".html",
    "form_values": ".html",
    "QuestionLike": ".terminal",
    "TerminalRenderer": ".terminal",
}


__getattr__, __dir__ = lazy_exports(__name__, _WHERE)

__all__ = ["QuestionLike", "TerminalRenderer", "form_html", "form_values"]
