"""Forms carry every constraint written on a field, or refuse it: none is silently dropped (issue 13).

Constraints come from Baton's `Field`, pydantic (`Field`, `json_schema_extra`, `constr`/`conint`/`confloat`,
`EmailStr`, `AnyUrl`/`HttpUrl`, model_config), annotated-types and `datetime` types, through pydantic models,
pydantic dataclasses, dataclasses and TypedDicts. Every compiled property is checked against the official
2026-07-28 `PrimitiveSchemaDefinition` (vendored under tests/schemas/2026-07-28/), both as published and in
a strict copy that refuses keys a variant does not list, so a key the wire cannot carry fails here.

No `from __future__ import annotations`: forms read type hints, and classes defined inside test functions
must resolve without the module globals.
"""

import copy
import dataclasses
import datetime as dt
import enum
import json
import math
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, TypedDict

import annotated_types as at
import jsonschema
import pydantic
import pytest
from pydantic import AnyUrl, HttpUrl, StringConstraints, conint, constr

from baton.forms import Field, FormError, FormSpec, NumberField, compile_form, form
from baton.forms.fields import InvalidAnswer

OFFICIAL: dict[str, Any] = json.loads(
    (Path(__file__).parents[1] / "schemas" / "2026-07-28" / "schema.json").read_text(encoding="utf-8")
)
VARIANTS = (
    "StringSchema",
    "NumberSchema",
    "BooleanSchema",
    "UntitledSingleSelectEnumSchema",
    "TitledSingleSelectEnumSchema",
    "UntitledMultiSelectEnumSchema",
    "TitledMultiSelectEnumSchema",
    "LegacyTitledEnumSchema",
)


def _closed(schema: Any) -> Any:
    """The schema with `additionalProperties: false` wherever it lists properties (the official one is open)."""
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _closed(v) for k, v in schema["properties"].items()}
        out["additionalProperties"] = False
    if "items" in schema:
        out["items"] = _closed(schema["items"])
    return out


def _validator(ref: str, closed: bool = False) -> jsonschema.Draft202012Validator:
    root = copy.deepcopy(OFFICIAL)
    if closed:
        root["$defs"] = {k: _closed(v) if k in VARIANTS else v for k, v in root["$defs"].items()}
    root["$ref"] = f"#/$defs/{ref}"
    return jsonschema.Draft202012Validator(root)


PRIMITIVE = _validator("PrimitiveSchemaDefinition")
PRIMITIVE_CLOSED = _validator("PrimitiveSchemaDefinition", closed=True)
FORM_PARAMS = _validator("ElicitRequestFormParams")


def wire(spec: FormSpec) -> dict[str, Any]:
    """The form's properties, each checked against the official restricted schema (open and closed)."""
    FORM_PARAMS.validate({"mode": "form", "message": "Please answer", "requestedSchema": spec.schema})
    props: dict[str, Any] = spec.schema["properties"]
    for prop in props.values():
        PRIMITIVE.validate(prop)
        PRIMITIVE_CLOSED.validate(prop)
    return props


def refused(source: Any, *fragments: str) -> str:
    with pytest.raises(FormError) as info:
        compile_form(source)
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, message
    return message


def bad(spec: FormSpec, content: dict[str, Any]) -> str:
    with pytest.raises(InvalidAnswer) as info:
        spec.validate(content)
    return str(info.value)


# --------------------------------------------------------------------------------------------------
# The checker itself: a key the wire cannot carry fails it
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": "^a"},
        {"type": "string", "format": "phone"},
        {"type": "integer", "exclusiveMinimum": 0},
        {"type": "number", "multipleOf": 2},
        {"type": "string", "examples": ["a"]},
        {"type": "object", "properties": {}},
    ],
)
def test_closed_checker_refuses_what_the_wire_cannot_carry(prop: dict[str, Any]) -> None:
    assert not PRIMITIVE_CLOSED.is_valid(prop)


# --------------------------------------------------------------------------------------------------
# One set of constraints, written four ways
# --------------------------------------------------------------------------------------------------


class Plan(enum.Enum):
    FREE = "free"
    PRO = "pro"


EXPECTED: dict[str, Any] = {
    "notify_email": {"type": "string", "format": "email", "title": "Notify", "description": "Where we write"},
    "homepage": {"type": "string", "format": "uri"},
    "name": {"type": "string", "minLength": 2, "maxLength": 40},
    "age": {"type": "integer", "minimum": 18, "maximum": 130},
    "seats": {"type": "integer", "minimum": 1, "maximum": 9, "default": 1},
    "ratio": {"type": "number", "minimum": 0, "maximum": 1, "default": 0.5},
    "size": {"type": "string", "enum": ["s", "m", "l"], "default": "m"},
    "plan": {"type": "string", "enum": ["free", "pro"]},
    "born": {"type": "string", "format": "date"},
    "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}, "minItems": 1, "maxItems": 2},
}
REQUIRED = ["notify_email", "homepage", "name", "age", "plan", "born", "tags"]


class Everything(pydantic.BaseModel):
    notify_email: str = pydantic.Field(
        title="Notify", description="Where we write", json_schema_extra={"format": "email"}
    )
    homepage: AnyUrl
    name: constr(min_length=2, max_length=40)  # type: ignore[valid-type]
    age: conint(ge=18, le=130)  # type: ignore[valid-type]
    seats: int = pydantic.Field(default=1, gt=0, lt=10)
    ratio: float = pydantic.Field(default=0.5, ge=0, le=1)
    size: Literal["s", "m", "l"] = "m"
    plan: Plan
    born: dt.date
    tags: list[Literal["a", "b", "c"]] = pydantic.Field(min_length=1, max_length=2)


@dataclasses.dataclass
class EverythingDC:
    notify_email: Annotated[str, Field(format="email", title="Notify", description="Where we write")]
    homepage: Annotated[str, pydantic.Field(json_schema_extra={"format": "uri"})]
    name: Annotated[str, at.MinLen(2), at.MaxLen(40)]
    age: Annotated[int, at.Interval(ge=18, le=130)]
    plan: Plan
    born: dt.date
    tags: Annotated[list[Literal["a", "b", "c"]], at.Len(1, 2)]
    seats: Annotated[int, at.Gt(0), at.Lt(10)] = 1
    ratio: Annotated[float, pydantic.Field(ge=0, le=1)] = 0.5
    size: Literal["s", "m", "l"] = "m"


class EverythingTD(TypedDict):
    notify_email: Annotated[
        str, pydantic.Field(title="Notify", description="Where we write", json_schema_extra={"format": "email"})
    ]
    homepage: Annotated[str, Field(format="uri")]
    name: Annotated[str, StringConstraints(min_length=2, max_length=40)]
    age: Annotated[int, pydantic.Field(ge=18), at.Le(130)]
    seats: NotRequired[
        Annotated[int, pydantic.Field(json_schema_extra={"exclusiveMinimum": 0, "exclusiveMaximum": 10})]
    ]
    ratio: NotRequired[Annotated[float, Field(minimum=0, maximum=1)]]
    size: NotRequired[Literal["s", "m", "l"]]
    plan: Plan
    born: dt.date
    tags: Annotated[list[Literal["a", "b", "c"]], Field(min_items=1, max_items=2)]


def test_pydantic_model_carries_every_constraint() -> None:
    spec = compile_form(Everything)
    assert wire(spec) == EXPECTED
    assert spec.schema["required"] == REQUIRED


def test_dataclass_with_annotated_carries_the_same() -> None:
    spec = compile_form(EverythingDC)
    assert wire(spec) == EXPECTED
    assert sorted(spec.schema["required"]) == sorted(REQUIRED)


def test_typeddict_with_annotated_carries_the_same() -> None:
    props = wire(compile_form(EverythingTD))
    defaults_only_in_classes = {"seats", "ratio", "size"}  # a TypedDict has no defaults
    for name, prop in EXPECTED.items():
        expected = {k: v for k, v in prop.items() if not (k == "default" and name in defaults_only_in_classes)}
        assert props[name] == expected, name


def test_pydantic_model_with_email_str() -> None:

    class WithEmailStr(pydantic.BaseModel):
        email: pydantic.EmailStr
        name: constr(min_length=2, max_length=40)  # type: ignore[valid-type]
        age: conint(ge=18, le=130)  # type: ignore[valid-type]
        plan: Plan
        size: Literal["s", "m", "l"] = "m"
        born: dt.date

    spec = compile_form(WithEmailStr)
    props = wire(spec)
    assert props["email"] == {"type": "string", "format": "email"}
    assert props["name"] == EXPECTED["name"]
    assert props["age"] == EXPECTED["age"]
    assert props["born"] == EXPECTED["born"]
    answer = {"email": "ann@example.org", "name": "Ann", "age": 30, "plan": "pro", "born": "1990-05-17"}
    model = spec.to_python(spec.validate(answer))
    assert isinstance(model, WithEmailStr)
    assert model.email == "ann@example.org"
    # email-validator refuses reserved domains the wire's format cannot name: asked again, not a crash later
    assert "email: is not accepted" in bad(spec, {**answer, "email": "ann@example.invalid"})
    assert "email: must be a valid email" in bad(spec, {**answer, "email": "ann"})


@pytest.mark.parametrize("container", ["dataclass", "typeddict"])
def test_email_str_and_urls_in_dataclass_and_typeddict(container: str) -> None:
    if container == "dataclass":

        @dataclasses.dataclass
        class Links:
            email: pydantic.EmailStr
            site: HttpUrl
            other: Annotated[AnyUrl, Field(title="Other")] | None = None

        source: type = Links
    else:

        class LinksTD(TypedDict):
            email: pydantic.EmailStr
            site: HttpUrl
            other: NotRequired[Annotated[AnyUrl, Field(title="Other")]]

        source = LinksTD
    spec = compile_form(source)
    assert wire(spec) == {
        "email": {"type": "string", "format": "email"},
        "site": {"type": "string", "format": "uri", "maxLength": 2083},
        "other": {"type": "string", "format": "uri", "title": "Other"},
    }
    values = spec.to_python(spec.validate({"email": "a@b.co", "site": "https://x.example/a"}))
    site = values.site if container == "dataclass" else values["site"]
    assert isinstance(site, HttpUrl)
    assert str(site) == "https://x.example/a"
    assert "email: must be a valid email" in bad(spec, {"email": "nope", "site": "https://x.example"})


# --------------------------------------------------------------------------------------------------
# The original bug, and the answers that enforce what is carried
# --------------------------------------------------------------------------------------------------


def test_the_reported_case_keeps_its_format() -> None:
    class Settings(pydantic.BaseModel):
        notify_email: str = pydantic.Field(json_schema_extra={"format": "email"})
        retries: int = pydantic.Field(default=3, ge=0, le=10, title="Retries", description="How many times")

    spec = compile_form(Settings)
    assert wire(spec) == {
        "notify_email": {"type": "string", "format": "email"},
        "retries": {
            "type": "integer",
            "minimum": 0,
            "maximum": 10,
            "title": "Retries",
            "description": "How many times",
            "default": 3,
        },
    }
    assert "notify_email: must be a valid email" in bad(spec, {"notify_email": "not an address"})
    assert spec.to_python(spec.validate({"notify_email": "a@b.co"})) == Settings(notify_email="a@b.co")


def test_answers_are_checked_against_what_was_carried() -> None:
    spec = compile_form(Everything)
    good = {
        "notify_email": "ann@example.org",
        "homepage": "https://ann.example",
        "name": "Ann",
        "age": 18,
        "seats": 9,
        "plan": "free",
        "born": "2000-02-29",
        "tags": ["a"],
    }
    model = spec.to_python(spec.validate(good))
    assert isinstance(model, Everything)
    assert model.plan is Plan.FREE
    assert model.born == dt.date(2000, 2, 29)
    assert model.seats == 9
    message = bad(
        spec,
        {
            **good,
            "notify_email": "ann",
            "homepage": "no scheme",
            "name": "A",
            "age": 131,
            "seats": 0,
            "ratio": 1.5,
            "born": "2001-02-29",
            "tags": ["a", "b", "c"],
        },
    )
    for problem in (
        "Notify: must be a valid email",  # named by its title
        "homepage: must be a valid uri",
        "name: must be at least 2 characters",
        "age: must be at most 130",
        "seats: must be at least 1",
        "ratio: must be at most 1",
        "born: must be a valid date",
        "tags: choose at most 2",
    ):
        assert problem in message, problem
    assert "seats: must be at most 9" in bad(spec, {**good, "seats": 10})


def test_http_url_scheme_is_checked_on_the_answer() -> None:
    class Site(pydantic.BaseModel):
        site: HttpUrl = HttpUrl("https://example.com")

    spec = compile_form(Site)
    assert wire(spec)["site"] == {
        "type": "string",
        "format": "uri",
        "maxLength": 2083,
        "default": "https://example.com/",
    }
    assert "site: is not accepted: URL scheme should be 'http' or 'https'" in bad(spec, {"site": "mailto:a@b.co"})
    assert str(spec.to_python(spec.validate({"site": "https://x.example"})).site) == "https://x.example/"


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_numbers_must_be_finite(value: float) -> None:
    spec = compile_form([NumberField("n")])
    assert "n: expected a number" in bad(spec, {"n": value})


# --------------------------------------------------------------------------------------------------
# Exclusive bounds: converted on whole numbers, refused on floats
# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        (at.Gt(0), {"minimum": 1}),
        (at.Lt(10), {"maximum": 9}),
        (at.Gt(0.5), {"minimum": 1}),
        (at.Lt(2.5), {"maximum": 2}),
        (at.Gt(-3), {"minimum": -2}),
        (pydantic.Field(gt=0, ge=5), {"minimum": 5}),
        (pydantic.Field(ge=0, gt=3), {"minimum": 4}),
        (pydantic.Field(json_schema_extra={"exclusiveMaximum": 5, "maximum": 3}), {"maximum": 3}),
    ],
)
def test_exclusive_bounds_on_int_become_inclusive(meta: Any, expected: dict[str, Any]) -> None:
    @dataclasses.dataclass
    class One:
        x: Annotated[int, meta]

    spec = compile_form(One)
    assert wire(spec)["x"] == {"type": "integer", **expected}
    if "minimum" in expected:
        assert "x: must be at least" in bad(spec, {"x": expected["minimum"] - 1})
        assert spec.validate({"x": expected["minimum"]}) == {"x": expected["minimum"]}


@pytest.mark.parametrize("meta", [at.Gt(0), at.Lt(1), pydantic.Field(json_schema_extra={"exclusiveMinimum": 0})])
def test_exclusive_bounds_on_float_are_refused(meta: Any) -> None:
    @dataclasses.dataclass
    class One:
        x: Annotated[float, meta]

    refused(One, "One.x", "exclusive bound", "ge/le")


def test_tightest_bound_wins_and_formats_must_agree() -> None:
    @dataclasses.dataclass
    class Twice:
        n: Annotated[int, Field(minimum=1, maximum=100), at.Ge(5), pydantic.Field(le=50)]
        s: Annotated[str, Field(max_length=10), at.MaxLen(20), at.MinLen(3), Field(format="email")]

    assert wire(compile_form(Twice)) == {
        "n": {"type": "integer", "minimum": 5, "maximum": 50},
        "s": {"type": "string", "minLength": 3, "maxLength": 10, "format": "email"},
    }

    @dataclasses.dataclass
    class TwoFormats:
        s: Annotated[str, Field(format="email"), pydantic.Field(json_schema_extra={"format": "uri"})]

    refused(TwoFormats, "TwoFormats.s", "two formats", "'email'", "'uri'")


# --------------------------------------------------------------------------------------------------
# Other sources: json_schema_extra texts, pydantic dataclasses, model_config
# --------------------------------------------------------------------------------------------------


def test_json_schema_extra_texts_and_lengths() -> None:
    class Extra(pydantic.BaseModel):
        code: str = pydantic.Field(
            title="old",
            json_schema_extra={"title": "Code", "description": "Six letters", "minLength": 6, "maxLength": 6},
        )
        picks: list[Literal["a", "b"]] = pydantic.Field(default=["a"], json_schema_extra={"minItems": 1})
        date_again: dt.date = pydantic.Field(json_schema_extra={"format": "date"})

    assert wire(compile_form(Extra)) == {
        "code": {"type": "string", "minLength": 6, "maxLength": 6, "title": "Code", "description": "Six letters"},
        "picks": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "minItems": 1, "default": ["a"]},
        "date_again": {"type": "string", "format": "date"},
    }


def test_annotated_types_doc_is_the_description() -> None:
    assert wire(compile_form(_dc(Annotated[str, at.doc("Your name"), at.MinLen(1)])))["x"] == {
        "type": "string",
        "minLength": 1,
        "description": "Your name",
    }


def test_pydantic_dataclass() -> None:
    @pydantic.dataclasses.dataclass
    class Booking:
        guests: int = pydantic.Field(ge=1, le=8, title="Guests")
        email: Annotated[str, pydantic.Field(json_schema_extra={"format": "email"})] = "a@b.co"

    spec = compile_form(Booking)
    assert wire(spec) == {
        "guests": {"type": "integer", "minimum": 1, "maximum": 8, "title": "Guests"},
        "email": {"type": "string", "format": "email", "default": "a@b.co"},
    }
    assert spec.schema["required"] == ["guests"]
    booking = spec.to_python(spec.validate({"guests": 2}))
    assert isinstance(booking, Booking)
    assert (booking.guests, booking.email) == (2, "a@b.co")


def test_model_config_string_lengths_apply_to_text_fields() -> None:
    class Short(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(str_max_length=9)
        word: str
        longer_allowed: Annotated[str, Field(max_length=20)]  # the tighter one is what pydantic enforces
        count: int

    assert wire(compile_form(Short)) == {
        "word": {"type": "string", "maxLength": 9},
        "longer_allowed": {"type": "string", "maxLength": 9},
        "count": {"type": "integer"},
    }


def test_the_documented_example_compiles() -> None:
    @form
    @dataclasses.dataclass
    class Signup:
        email: Annotated[str, Field(format="email", title="Email")]
        name: Annotated[str, Field(min_length=1, max_length=50)]
        age: Annotated[int, Field(minimum=18, maximum=130)]
        seats: Annotated[int, pydantic.Field(gt=0, le=10)] = 1
        plan: Annotated[Literal["free", "pro"], Field(titles={"free": "Free", "pro": "Pro"})] = "free"

    @form
    class SignupModel(pydantic.BaseModel):
        notify_email: str = pydantic.Field(json_schema_extra={"format": "email"})
        name: constr(min_length=1, max_length=50)  # type: ignore[valid-type]
        site: HttpUrl | None = None

    assert wire(compile_form(Signup))["seats"] == {"type": "integer", "minimum": 1, "maximum": 10, "default": 1}
    assert wire(compile_form(SignupModel)) == {
        "notify_email": {"type": "string", "format": "email"},
        "name": {"type": "string", "minLength": 1, "maxLength": 50},
        "site": {"type": "string", "format": "uri", "maxLength": 2083},
    }


# --------------------------------------------------------------------------------------------------
# Refused at compile time, naming the field and the constraint
# --------------------------------------------------------------------------------------------------


class Address(pydantic.BaseModel):
    street: str


def test_nested_object_is_refused_naming_the_field() -> None:
    class Order(pydantic.BaseModel):
        item: str
        ship_to: Address

    refused(Order, "Order.ship_to", "'Address' cannot be asked in a form")


def _dc(hint: Any, default: Any = dataclasses.MISSING) -> type:
    """A dataclass `One` with one field `x`."""
    fields = [("x", hint)] if default is dataclasses.MISSING else [("x", hint, dataclasses.field(default=default))]
    return dataclasses.make_dataclass("One", fields)


def _model(hint: Any, field: Any = ..., **config: Any) -> type:
    """A pydantic model `One` with one field `x`."""
    return pydantic.create_model("One", __config__=pydantic.ConfigDict(**config), x=(hint, field))  # type: ignore[typeddict-item]


@pytest.mark.parametrize(
    ("source", "fragments"),
    [
        (lambda: _model(str, pydantic.Field(pattern="^a")), ["pattern='^a'"]),
        (lambda: _model(constr(pattern="^a")), ["pattern='^a'"]),
        (lambda: _model(int, pydantic.Field(multiple_of=5)), ["multiple_of=5"]),
        (lambda: _dc(Annotated[float, pydantic.Field(max_digits=3)]), ["max_digits=3"]),
        (lambda: _model(constr(strip_whitespace=True)), ["strip_whitespace=True"]),
        (lambda: _model(constr(to_lower=True)), ["to_lower=True"]),
        (lambda: _model(Annotated[str, pydantic.AfterValidator(str.strip)]), ["AfterValidator"]),
        (lambda: _dc(Annotated[str, at.Predicate(str.isdigit)]), ["Predicate"]),
        (lambda: _dc(Annotated[str, "a note"]), ["'a note'"]),
        (lambda: _model(str, pydantic.Field(examples=["x"])), ["examples"]),
        (lambda: _model(str, pydantic.Field(default="x", deprecated=True)), ["deprecated"]),
        (lambda: _model(str, pydantic.Field(json_schema_extra={"pattern": "^a"})), ["json_schema_extra['pattern']"]),
        (lambda: _model(str, pydantic.Field(json_schema_extra={"x-widget": "big"})), ["json_schema_extra['x-widget']"]),
        (lambda: _model(str, pydantic.Field(json_schema_extra=lambda s: None)), ["json_schema_extra", "function"]),
        (
            lambda: _model(str, pydantic.Field(json_schema_extra={"format": "phone"})),
            ["format must be one of", "phone"],
        ),
        (lambda: _dc(Annotated[str, Field(format="hostname")]), ["format must be one of", "hostname"]),
        (lambda: _model(int, pydantic.Field(json_schema_extra={"minLength": 1})), ["minLength", "an int field"]),
        (lambda: _dc(Annotated[int, Field(min_length=1)]), ["min_length=1", "an int field"]),
        (lambda: _dc(Annotated[str, Field(minimum=1)]), ["minimum=1", "a text field"]),
        (lambda: _dc(Annotated[bool, Field(max_length=1)]), ["max_length=1", "a yes/no field"]),
        (lambda: _dc(Annotated[Literal["a"], Field(format="email")]), ["format='email'", "a choice field"]),
        (lambda: _dc(Annotated[Literal["a"], at.MinLen(1)]), ["min_length=1", "a choice field"]),
        (lambda: _dc(Annotated[Plan, Field(min_items=1)]), ["min_items=1", "a choice field"]),
        (lambda: _dc(Annotated[str, Field(min_items=1)]), ["min_items=1", "a text field"]),
        (lambda: _dc(Annotated[dt.date, Field(format="email")]), ["format='email'", "date field"]),
        (lambda: _dc(Annotated[dt.date, at.Ge(dt.date(2020, 1, 1))]), ["ge=datetime.date(2020, 1, 1)"]),
        (lambda: _dc(Annotated[dt.datetime, Field(max_length=30)]), ["max_length=30", "a datetime field"]),
        (lambda: _dc(Annotated[HttpUrl, Field(format="email")]), ["format='email'", "HttpUrl field"]),
        (lambda: _dc(Annotated[float, Field(min_length=2)]), ["min_length=2", "a float field"]),
        (lambda: _dc(Annotated[list[Literal["a"]], Field(maximum=2)]), ["maximum=2", "a multi-select field"]),
        (lambda: _dc(str, Field(format="email")), ["goes inside Annotated"]),
        (lambda: _model(str, Field(format="email")), ["goes inside Annotated"]),
        (lambda: _dc(str, pydantic.Field(json_schema_extra={"format": "email"})), ["pydantic dataclass"]),
        (lambda: _dc(Annotated[str, pydantic.Field(default="a")]), ["default inside Annotated"]),
        (lambda: _dc(Annotated[str, Field(min_length=-1)]), ["min_length=-1", "0 or more"]),
        (lambda: _dc(Annotated[int, pydantic.Field(json_schema_extra={"minimum": "1"})]), ["['minimum']"]),
        (lambda: _dc(Annotated[int, at.MultipleOf(2)]), ["multiple_of=2"]),
        (lambda: _dc(Annotated[dt.datetime, at.Timezone(None)]), ["tz=None"]),
    ],
    ids=lambda v: v[0] if isinstance(v, list) else None,
)
def test_refused_naming_field_and_constraint(source: Any, fragments: list[str]) -> None:
    refused(source(), "One.x", *fragments)


@pytest.mark.parametrize(
    "config",
    [{"str_strip_whitespace": True}, {"str_to_lower": True}, {"str_to_upper": True}, {"json_schema_extra": {"a": 1}}],
    ids=str,
)
def test_model_settings_the_form_cannot_carry_are_refused(config: dict[str, Any]) -> None:
    (key,) = config
    refused(_model(str, **config), f"One: model_config[{key!r}]", "no equivalent in an elicitation form")


@pytest.mark.parametrize(
    "meta",
    [
        pydantic.Field(strict=True),
        pydantic.Field(allow_inf_nan=False),
        pydantic.Field(ge=1, strict=True, allow_inf_nan=False),
    ],
)
def test_settings_that_cannot_change_a_json_answer_are_accepted(meta: Any) -> None:
    prop = wire(compile_form(_dc(Annotated[float, meta])))["x"]
    assert prop["type"] == "number"
    assert set(prop) <= {"type", "minimum"}
