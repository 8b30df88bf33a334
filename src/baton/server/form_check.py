"""The forms a tool asks, checked when it is registered wherever its own source shows the form type.

`ctx.elicit(Booking, ...)` names its form; so does an annotation such as
`answer: Accepted[Booking] | Declined | Cancelled = await ctx.elicit(form, ...)`. Where the name resolves
(a global or closure variable of the handler, or an attribute of one) to a class or a `FormSpec`, the form
is compiled now, and a form the wire cannot carry refuses the tool at registration (`HandlerProblems`,
at the line of the ask). So does a call in FastMCP's order: the message first, or `response_type=`
(protocol.md P130). Any other form is compiled when the tool asks it, and a mistake is then a tool error
that says what is wrong (protocol.md P97).
"""

from __future__ import annotations

import ast
import contextlib
import inspect
from collections.abc import Callable
from typing import Any

from ..forms import FormError, FormSpec, compile_form
from .problems import HandlerProblems
from .source import handler_source

_UNKNOWN = object()


def check_forms(fn: Callable[..., Any], context_param: str | None) -> None:
    """Compile each form `fn`'s source passes to `context_param.elicit` by a name that resolves; raise
    `HandlerProblems` for those the wire cannot carry."""
    source = handler_source(fn) if context_param is not None else None
    if source is None or context_param is None:
        return
    names = _names(fn)
    annotated = _annotated_asks(source.tree)
    problems: list[tuple[str, str]] = []
    for _, call in source.context_calls(context_param, ("elicit",)):
        if call is None:
            continue
        shape = fastmcp_shape(call, context_param)
        if shape is not None:
            problems.append((source.where(call), shape))
            continue
        allow = _literal_keyword(call, "allow_secrets", False)
        shown, form = _UNKNOWN, _UNKNOWN
        for node in ([call.args[0]] if call.args else []) + annotated.get(id(call), []):
            form = _resolve(node, names)
            if form is not _UNKNOWN:
                shown = ast.unparse(node)
                break
        if form is _UNKNOWN or not isinstance(allow, bool):
            continue
        try:
            compile_form(form, allow_secrets=allow)
        except FormError as exc:
            problems.append((source.where(call), f"the form {shown} asked with {context_param}.elicit: {exc}"))
    if problems:
        raise HandlerProblems(problems)


def fastmcp_shape(call: ast.Call, context_param: str) -> str | None:
    """What is wrong with an elicit call written in FastMCP's order (the message first, or `response_type=`,
    or `mcp`'s `schema=`), with the call as Baton spells it; None for any other call (protocol.md P130)."""
    first = call.args[0] if call.args else None
    keyword = next((k.value for k in call.keywords if k.arg in ("response_type", "schema")), None)
    message_first = isinstance(first, ast.JoinedStr) or (
        isinstance(first, ast.Constant) and isinstance(first.value, str)
    )
    if not message_first and keyword is None:
        return None
    form = keyword if keyword is not None else call.args[1] if len(call.args) > 1 else None
    message = first if message_first else next((k.value for k in call.keywords if k.arg == "message"), None)
    shown = f"{context_param}.elicit({ast.unparse(form) if form is not None else 'Form'}, "
    shown += f"{ast.unparse(message) if message is not None else '...'})"
    return (
        f"{context_param}.elicit takes the form first, then the message: write {shown} "
        "(FastMCP's ctx.elicit(message, response_type=...) order is not Baton's)"
    )


def _names(fn: Callable[..., Any]) -> dict[str, Any]:
    """The globals and closure variables `fn` can see, by name."""
    target = inspect.unwrap(fn)
    found: dict[str, Any] = dict(getattr(target, "__globals__", {}))
    with contextlib.suppress(TypeError, ValueError):
        found.update(inspect.getclosurevars(target).nonlocals)
    return found


def _resolve(node: ast.expr, names: dict[str, Any]) -> Any:
    """The class or FormSpec a name (or dotted name) stands for, else `_UNKNOWN`."""
    if isinstance(node, ast.Name):
        value = names.get(node.id, _UNKNOWN)
    elif isinstance(node, ast.Attribute):
        base = _resolve_any(node.value, names)
        value = getattr(base, node.attr, _UNKNOWN) if base is not _UNKNOWN else _UNKNOWN
    else:
        return _UNKNOWN
    return value if isinstance(value, (type, FormSpec)) else _UNKNOWN


def _resolve_any(node: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name):
        return names.get(node.id, _UNKNOWN)
    if isinstance(node, ast.Attribute):
        base = _resolve_any(node.value, names)
        return getattr(base, node.attr, _UNKNOWN) if base is not _UNKNOWN else _UNKNOWN
    return _UNKNOWN


def _annotated_asks(tree: ast.Module) -> dict[int, list[ast.expr]]:
    """For each call under an annotated assignment, the `X` of the `Accepted[X]` its annotation shows."""
    found: dict[int, list[ast.expr]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.AnnAssign) or node.value is None:
            continue
        shown = [
            sub.slice
            for sub in ast.walk(node.annotation)
            if isinstance(sub, ast.Subscript) and ast.unparse(sub.value).split(".")[-1] == "Accepted"
        ]
        for call in ast.walk(node.value):
            if isinstance(call, ast.Call) and shown:
                found[id(call)] = shown
    return found


def _literal_keyword(call: ast.Call, name: str, default: Any) -> Any:
    """A keyword argument's value when it is a literal, its default when absent, else `_UNKNOWN`."""
    for keyword in call.keywords:
        if keyword.arg == name:
            return keyword.value.value if isinstance(keyword.value, ast.Constant) else _UNKNOWN
        if keyword.arg is None:  # **options: cannot be read
            return _UNKNOWN
    return default
