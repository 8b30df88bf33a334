"""pydantic's string types that a form can ask for: `EmailStr` (format email) and its URL classes (format uri).

The wire carries the format (and the URL class's maximum length, as pydantic's own JSON schema does); the
type's own parsing also runs on every answer (`StringField.verify`), so the rules the wire has no word
for (`HttpUrl` accepts only http and https; email-validator refuses reserved domains such as `.test`) are
checked before the handler sees the answer, and an answer that breaks them is asked again.

Recognised by shape, so pydantic is imported only when such a type is met: `EmailStr` and the subclasses
of pydantic's single-host URL base (`AnyUrl`, `HttpUrl`, `AnyHttpUrl`, `FileUrl`, `FtpUrl`, ...). Other
pydantic types (`NameEmail`, multi-host DSNs, `SecretStr`, ...) are not recognised, and `baton.forms.build`
refuses them as it refuses any type it cannot ask.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class StringType:
    """How a pydantic string type is asked: its format, its length limit, its conversion and its check."""

    format: str
    max_length: int | None
    convert: Callable[[str], Any] | None  # the JSON string -> the Python value handed to the author
    verify: Callable[[str], Any] | None  # raises ValueError (with a short reason) for an answer the type refuses


def string_type(hint: Any) -> StringType | None:
    """The form reading of a pydantic string type; None for anything else."""
    if not isinstance(hint, type) or hint.__module__.split(".")[0] != "pydantic":
        return None
    if hint.__name__ == "EmailStr":
        return StringType("email", None, None, _adapter_check(hint))
    if any(base.__name__ == "_BaseUrl" for base in hint.__mro__[1:]):
        limits = getattr(hint, "_constraints", None)
        max_length = getattr(limits, "max_length", None)
        return StringType("uri", max_length if isinstance(max_length, int) else None, hint, _checking(hint))
    return None


def _adapter_check(hint: type) -> Callable[[str], Any] | None:
    """pydantic's own validation of `hint`; None when it cannot run (EmailStr without email-validator).

    Without email-validator no pydantic model can use `EmailStr` at all; a dataclass or TypedDict that
    names it then gets the form's own email check only.
    """
    from pydantic import TypeAdapter  # noqa: PLC0415 (the optional pydantic extra)

    try:
        adapter: TypeAdapter[Any] = TypeAdapter(hint)
    except ImportError:
        return None
    return _checking(adapter.validate_python)


def _checking(parse: Callable[[str], Any]) -> Callable[[str], Any]:
    def verify(value: str) -> Any:
        try:
            return parse(value)
        except ValueError as exc:  # pydantic's ValidationError is a ValueError
            raise ValueError(_first_reason(exc)) from None

    return verify


def _first_reason(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        try:
            found = errors()
            if found and isinstance(found[0].get("msg"), str):
                return str(found[0]["msg"])
        except (TypeError, AttributeError, KeyError):
            pass
    return str(exc).splitlines()[0] if str(exc) else "not accepted"
