"""Building a form from a dataclass, a TypedDict or a pydantic model whose fields (types, constraints,
defaults) the input chooses, then validating an answer the input makes and handing it to the author's type."""

from __future__ import annotations

import dataclasses
import datetime as dt
import enum
from typing import Annotated, Any, Literal, TypedDict

import atheris
import pydantic
import pydantic_core

from baton.forms import Field, FormError, compile_form
from baton.forms.fields import InvalidAnswer

from ..harness import Target

TYPED_DICT: Any = TypedDict  # called with fields made at run time


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


def _text_field(fdp: atheris.FuzzedDataProvider) -> Any:
    lo, hi = fdp.ConsumeIntInRange(0, 8), fdp.ConsumeIntInRange(0, 8)
    fmt = fdp.PickValueInList([None, "email", "uri", "date", "date-time", "color"])
    return Annotated[str, Field(min_length=lo, max_length=hi, format=fmt)]


def _number_field(fdp: atheris.FuzzedDataProvider) -> Any:
    return Annotated[int, Field(minimum=fdp.ConsumeIntInRange(-5, 5), maximum=fdp.ConsumeIntInRange(-5, 5))]


def _pattern_field(fdp: atheris.FuzzedDataProvider) -> Any:
    return Annotated[str, pydantic.Field(pattern=fdp.PickValueInList(["^a+$", "[0-9]", "(", "^x{2,3}$"]))]


TYPES: list[Any] = [
    str,
    int,
    float,
    bool,
    Literal["a", "b"],
    Color,
    list[Literal["x", "y"]],
    set[Color],
    str | None,
    int | None,
    dt.date,
    dt.datetime,
    pydantic.EmailStr,
    dict[str, str],  # refused: a form has no nested objects
    list[int],  # refused: a multi-select offers choices
    _text_field,
    _number_field,
    _pattern_field,
]


def _value(fdp: atheris.FuzzedDataProvider) -> Any:
    kind = fdp.ConsumeIntInRange(0, 6)
    if kind == 0:
        return fdp.ConsumeUnicodeNoSurrogates(12)
    if kind == 1:
        return fdp.ConsumeIntInRange(-10, 10)
    if kind == 2:
        return fdp.ConsumeRegularFloat()
    if kind == 3:
        return fdp.ConsumeBool()
    if kind == 4:
        return None
    if kind == 5:
        return [fdp.PickValueInList(["x", "y", "red", "blue", "z"]) for _ in range(fdp.ConsumeIntInRange(0, 3))]
    return fdp.PickValueInList(["a", "b", "red", "blue", "2026-01-02", "2026-01-02T03:04:05Z", "a@b.example"])


def _default(value: Any) -> Any:
    """A dataclass field with this default (a list through a factory, as dataclasses require)."""
    if isinstance(value, list):
        return dataclasses.field(default_factory=lambda: list(value))
    return dataclasses.field(default=value)


def one(data: bytes) -> None:
    fdp = atheris.FuzzedDataProvider(data)
    fields: list[tuple[str, Any, Any]] = []
    for i in range(fdp.ConsumeIntInRange(1, 4)):
        hint = fdp.PickValueInList(TYPES)
        if callable(hint) and hint.__module__ == __name__ and hint.__name__.startswith("_"):
            hint = hint(fdp)
        default = _value(fdp) if fdp.ConsumeBool() else dataclasses.MISSING
        fields.append((f"f{i}", hint, default))
    fields.sort(key=lambda f: f[2] is not dataclasses.MISSING)  # defaults last, as a dataclass needs
    kind = fdp.ConsumeIntInRange(0, 2)
    cls: type
    if kind == 0:
        specs = [(n, h) if d is dataclasses.MISSING else (n, h, _default(d)) for n, h, d in fields]
        cls = dataclasses.make_dataclass("Fuzzed", specs)
    elif kind == 1:
        cls = TYPED_DICT("Fuzzed", {n: h for n, h, _ in fields})
    else:
        model: Any = {n: (h, ... if d is dataclasses.MISSING else d) for n, h, d in fields}
        try:
            cls = pydantic.create_model("Fuzzed", **model)
        except pydantic_core.SchemaError:
            return  # pydantic refused the model (a pattern that is not a regex): Baton never sees it
    spec = compile_form(cls)
    answer = {name: _value(fdp) for name, _, _ in fields if fdp.ConsumeBool()}
    values = spec.validate(answer)
    spec.to_python(values)


TARGET = Target(
    "form_build",
    "form schemas from dataclasses, TypedDicts and pydantic models; answers to them",
    one,
    (FormError, InvalidAnswer, pydantic.PydanticUserError, pydantic.PydanticSchemaGenerationError),
)
