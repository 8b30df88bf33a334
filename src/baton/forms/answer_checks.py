"""Answer checkers: how the answer to each kind of question is checked (raw wire answer -> validated) and read
(validated -> what the author's `await ctx...` returns), by the forms rules they apply. `Context` asks with them."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, cast

from .answers import Accepted, Cancelled, Declined
from .fields import FormSpec, InvalidAnswer


def same(answer: dict[str, Any]) -> Any:
    return answer


def check_action(raw: dict[str, Any]) -> str:
    action = raw.get("action")
    if action not in ("accept", "decline", "cancel"):
        raise InvalidAnswer('the answer needs "action": "accept", "decline" or "cancel"')
    return cast(str, action)


def form_request(
    spec: FormSpec, message: str
) -> tuple[dict[str, Any], Callable[[Any], dict[str, Any]], Callable[[dict[str, Any]], Any], bytes]:
    """The params, answer checker, answer reader and canonical bytes of a form elicitation."""
    params = {"mode": "form", "message": message, "requestedSchema": spec.schema}
    # The form's canonical schema is computed once, so pinning costs one hash per ask.
    canonical = b"form\0" + message.encode() + b"\0" + spec.schema_json
    check, read = form_answers(spec)
    return params, check, read, canonical


@functools.lru_cache(maxsize=1024)
def form_answers(spec: FormSpec) -> tuple[Callable[[Any], dict[str, Any]], Callable[[dict[str, Any]], Any]]:
    """How a form's answers are checked (raw wire answer -> validated) and read (validated -> author's value)."""

    def check(raw: dict[str, Any]) -> dict[str, Any]:
        action = check_action(raw)
        if action != "accept":
            return {"action": action}
        return {"action": "accept", "content": spec.validate(raw.get("content"))}

    def read(answer: dict[str, Any]) -> Any:
        action = answer["action"]
        if action == "accept":
            return Accepted(spec.to_python(answer["content"]))
        return Declined() if action == "decline" else Cancelled()

    return check, read


def url_checker(raw: dict[str, Any]) -> dict[str, Any]:
    return {"action": check_action(raw)}


def action_reader(data: Any) -> Callable[[dict[str, Any]], Any]:
    def read(answer: dict[str, Any]) -> Any:
        action = answer["action"]
        if action == "accept":
            return Accepted(data)
        return Declined() if action == "decline" else Cancelled()

    return read


def sampling_checker(raw: dict[str, Any]) -> dict[str, Any]:
    if raw.get("role") not in ("user", "assistant"):
        raise InvalidAnswer('a sampling answer needs "role": "user" or "assistant"')
    if not isinstance(raw.get("content"), (dict, list)):
        raise InvalidAnswer("a sampling answer needs content")
    if not isinstance(raw.get("model"), str):
        raise InvalidAnswer('a sampling answer needs "model"')
    return {k: v for k, v in raw.items() if k in ("role", "content", "model", "stopReason")}


def roots_checker(raw: dict[str, Any]) -> dict[str, Any]:
    roots = raw.get("roots")
    if not isinstance(roots, list) or not all(isinstance(r, dict) and isinstance(r.get("uri"), str) for r in roots):
        raise InvalidAnswer('a roots answer needs "roots": a list of {"uri": ...}')
    return {"roots": [{k: v for k, v in r.items() if k in ("uri", "name")} for r in roots]}
