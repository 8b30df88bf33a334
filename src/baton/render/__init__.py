"""Renderers that put a server's elicitation in front of a person and bring back the answer."""

from .terminal import QuestionLike, TerminalRenderer

__all__ = ["QuestionLike", "TerminalRenderer"]
