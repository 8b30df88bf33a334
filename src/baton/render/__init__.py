"""Renderers that put a server's elicitation in front of a person and bring back the answer: a terminal
one (`TerminalRenderer`), and HTML forms for a page (`baton.render.html`)."""

from .html import form_html, form_values
from .terminal import QuestionLike, TerminalRenderer

__all__ = ["QuestionLike", "TerminalRenderer", "form_html", "form_values"]
