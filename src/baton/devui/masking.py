"""What `baton dev` hides in the raw exchange it shows: bearer tokens, and answers to secret-looking fields.

The page shows every JSON-RPC message of a call, to read and to copy into a bug report, so nothing
in it may be a credential. A copy of each message is masked: any string that starts with `Bearer `,
the value of any member named like an authorization header, and, in the content of an elicitation
answer (MRTR `inputResponses`, or a 2025-11-25 response to `elicitation/create`), every field whose
name looks secret by `baton.forms.secret_names.looks_secret`, the one rule for that. The answers the
timeline says were sent (`shown_answer`) hide every field the form showed as a password input.
"""

from __future__ import annotations

from typing import Any

from ..forms.fields import FormSpec
from ..forms.secret_names import field_looks_secret, looks_secret

MASK = "••••••"
_AUTH_KEYS = frozenset({"authorization", "proxy-authorization", "access_token", "refresh_token", "id_token"})


def masked(message: dict[str, Any]) -> dict[str, Any]:
    """A copy of `message` with every credential in it replaced by `MASK`."""
    out = _scrub(message)
    assert isinstance(out, dict)
    params = out.get("params")
    if isinstance(params, dict) and isinstance(params.get("inputResponses"), dict):
        params["inputResponses"] = {k: _answer(v) for k, v in params["inputResponses"].items()}
    if "result" in out and "id" in out:
        out["result"] = _answer(out["result"])
    return out


def _scrub(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: MASK if _auth_key(k) and isinstance(v, str) else _scrub(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub(v) for v in value]
    if isinstance(value, str) and value[:7].lower() == "bearer ":
        return MASK
    return value


def _auth_key(key: Any) -> bool:
    return isinstance(key, str) and key.lower() in _AUTH_KEYS


def _answer(value: Any) -> Any:
    """An ElicitResult with its secret-looking fields masked (anything else as it is)."""
    if not isinstance(value, dict) or value.get("action") != "accept" or not isinstance(value.get("content"), dict):
        return value
    content = {k: MASK if looks_secret(k) else v for k, v in value["content"].items()}
    return {**value, "content": content}


def shown_answer(form: FormSpec, content: dict[str, Any] | None) -> dict[str, Any]:
    """The answer to `form` as the timeline shows it: each field's value, a secret-looking one masked."""
    secret = {f.name for f in form.fields if field_looks_secret(f)}
    return {k: MASK if k in secret or looks_secret(k) else v for k, v in (content or {}).items()}
