"""Unit tests of restricted elicitation forms: building them from types, their wire schema, answer checks.

Rules: digest §5.2 (the restricted `PrimitiveSchemaDefinition` variants), §5.3 (answers), A8 (numbers),
and design.md §3 (typed forms; anything the wire cannot express fails at registration time).
Every generated schema is validated against the official 2026-07-28 `schema.json`, vendored unchanged
under tests/schemas/2026-07-28/.

No `from __future__ import annotations` here: forms read type hints, and classes defined inside test
functions must resolve without the module globals.
"""

import copy
import dataclasses
import datetime as dt
import enum
import hashlib
import json
from pathlib import Path
from typing import Annotated, Any, Literal, NotRequired, Optional, Required, TypedDict, Union

import jsonschema
import orjson
import pydantic
import pytest

from baton.forms import (
    Accepted,
    BooleanField,
    Cancelled,
    Choice,
    Declined,
    EnumField,
    Field,
    FieldSpec,
    FormError,
    FormSpec,
    MultiSelectField,
    NumberField,
    StringField,
    compile_form,
    form,
)
from baton.forms.fields import InvalidAnswer

SCHEMA_PATH = Path(__file__).parents[1] / "schemas" / "2026-07-28" / "schema.json"
SCHEMA_SHA256 = "ef70b61f99b6d2e5e3b46863822eab08dff6a45bedc7a08914e0e5b133f40203"
OFFICIAL: dict[str, Any] = json.loads(SCHEMA_PATH.read_text())

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


def _strict(schema: Any) -> Any:
    """The same schema with `additionalProperties: false` on every object that lists its properties.

    The official definitions tolerate unknown keys, so on their own they would accept almost anything
    with a matching `type`; the strict copy makes "this is exactly variant X" checkable.
    """
    if not isinstance(schema, dict):
        return schema
    out = dict(schema)
    if isinstance(schema.get("properties"), dict):
        out["properties"] = {k: _strict(v) for k, v in schema["properties"].items()}
        out.setdefault("additionalProperties", False)
    if "items" in schema:
        out["items"] = _strict(schema["items"])
    return out


def _validator(name: str, strict: bool = False) -> jsonschema.Draft202012Validator:
    root = copy.deepcopy(OFFICIAL)
    if strict:
        root["$defs"] = {k: _strict(v) if k in VARIANTS else v for k, v in root["$defs"].items()}
    root["$ref"] = f"#/$defs/{name}"
    return jsonschema.Draft202012Validator(root)


FORM_PARAMS = _validator("ElicitRequestFormParams")
PRIMITIVE = _validator("PrimitiveSchemaDefinition")
ELICIT_RESULT = _validator("ElicitResult")
STRICT = {name: _validator(name, strict=True) for name in VARIANTS}


def matching_variants(prop: dict[str, Any]) -> set[str]:
    return {name for name, v in STRICT.items() if v.is_valid(prop)}


def check_wire(spec: FormSpec) -> dict[str, Any]:
    """Validate a compiled form's requestedSchema against the official schema; return it."""
    schema = spec.schema
    FORM_PARAMS.validate({"mode": "form", "message": "Please answer", "requestedSchema": schema})
    FORM_PARAMS.validate({"message": "mode absent", "requestedSchema": schema})
    assert schema["type"] == "object"
    assert set(schema) <= {"type", "properties", "required"}
    for name, prop in schema["properties"].items():
        PRIMITIVE.validate(prop)
        assert matching_variants(prop), f"{name}: {prop} matches no restricted variant exactly"
    for name in schema.get("required", []):
        assert name in schema["properties"]
    assert spec.schema_json == orjson.dumps(schema, option=orjson.OPT_SORT_KEYS)
    return schema


def prop_of(spec: FormSpec, name: str, variant: str) -> dict[str, Any]:
    prop: dict[str, Any] = check_wire(spec)["properties"][name]
    assert variant in matching_variants(prop), f"{name}: {prop} is not a {variant}"
    return prop


# --------------------------------------------------------------------------------------------------
# The vendored schema and the strict checker themselves
# --------------------------------------------------------------------------------------------------


def test_vendored_schema_is_the_official_one() -> None:
    assert hashlib.sha256(SCHEMA_PATH.read_bytes()).hexdigest() == SCHEMA_SHA256
    assert OFFICIAL["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert set(VARIANTS) <= set(OFFICIAL["$defs"])


@pytest.mark.parametrize(
    "prop",
    [
        {"type": "string", "pattern": "^a$"},
        {"type": "object", "properties": {}},
        {"type": "array", "items": {"type": "string"}},
        {"type": "string", "format": "phone"},
        {"type": "number", "minimum": "1"},
        {"type": "string", "oneOf": [{"const": "a"}]},
        {"type": "array", "items": {"type": "string", "enum": ["a"]}, "uniqueItems": True},
    ],
)
def test_strict_checker_rejects_what_the_wire_cannot_carry(prop: dict[str, Any]) -> None:
    assert matching_variants(prop) == set()


# --------------------------------------------------------------------------------------------------
# Types used by the tests
# --------------------------------------------------------------------------------------------------


class Size(enum.Enum):
    S = "s"
    M = "m"
    L = "l"


class Topic(enum.Enum):
    NEWS = "news"
    SPORT = "sport"
    TECH = "tech"


@dataclasses.dataclass
class Contact:
    name: Annotated[str, Field(title="Name", description="Your full name", min_length=1, max_length=50)]
    email: Annotated[str, Field(format="email")]
    birthday: dt.date
    size: Size
    topics: Annotated[set[Topic], Field(min_items=1, max_items=2)]
    age: Annotated[int, Field(minimum=18, maximum=130)] = 30
    height: Annotated[float | None, Field(minimum=0.5, maximum=2.5)] = None
    subscribe: bool = False
    color: Literal["red", "green"] = "red"
    seen_at: dt.datetime | None = None
    tags: list[Literal["a", "b", "c"]] = dataclasses.field(default_factory=list)


class ContactTD(TypedDict):
    name: str
    age: int
    ok: bool


class PartialTD(TypedDict, total=False):
    name: str
    size: Size


class Prefs(pydantic.BaseModel):
    name: str = pydantic.Field(title="Name", description="What to call you", min_length=2, max_length=20)
    age: int = pydantic.Field(ge=0, le=150)
    ratio: float = pydantic.Field(default=0.5, ge=0.0, le=1.0)
    size: Size = Size.M
    color: Literal["red", "green"]
    tags: list[Literal["x", "y"]] = ["x"]
    nickname: str | None = None
    agree: bool = True


# --------------------------------------------------------------------------------------------------
# Building forms: dataclass, TypedDict, pydantic model, explicit fields
# --------------------------------------------------------------------------------------------------


def test_dataclass_form() -> None:
    spec = compile_form(Contact)
    schema = check_wire(spec)
    assert spec.name == "Contact"
    assert list(schema["properties"]) == [
        "name",
        "email",
        "birthday",
        "size",
        "topics",
        "age",
        "height",
        "subscribe",
        "color",
        "seen_at",
        "tags",
    ]
    assert schema["required"] == ["name", "email", "birthday", "size", "topics"]
    p = schema["properties"]
    assert p["name"] == {
        "type": "string",
        "minLength": 1,
        "maxLength": 50,
        "title": "Name",
        "description": "Your full name",
    }
    assert p["email"] == {"type": "string", "format": "email"}
    assert p["birthday"] == {"type": "string", "format": "date"}
    assert p["size"] == {"type": "string", "enum": ["s", "m", "l"]}
    assert p["topics"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["news", "sport", "tech"]},
        "minItems": 1,
        "maxItems": 2,
    }
    assert p["age"] == {"type": "integer", "minimum": 18, "maximum": 130, "default": 30}
    assert p["height"] == {"type": "number", "minimum": 0.5, "maximum": 2.5}
    assert p["subscribe"] == {"type": "boolean", "default": False}
    assert p["color"] == {"type": "string", "enum": ["red", "green"], "default": "red"}
    assert p["seen_at"] == {"type": "string", "format": "date-time"}
    assert p["tags"] == {"type": "array", "items": {"type": "string", "enum": ["a", "b", "c"]}}


def test_dataclass_skips_non_init_fields() -> None:
    @dataclasses.dataclass
    class WithComputed:
        name: str
        slug: str = dataclasses.field(init=False, default="")

    assert list(compile_form(WithComputed).schema["properties"]) == ["name"]


def test_typeddict_total() -> None:
    spec = compile_form(ContactTD)
    schema = check_wire(spec)
    assert schema == {
        "type": "object",
        "properties": {"name": {"type": "string"}, "age": {"type": "integer"}, "ok": {"type": "boolean"}},
        "required": ["name", "age", "ok"],
    }
    assert spec.to_python(spec.validate({"name": "a", "age": 3, "ok": True})) == {
        "name": "a",
        "age": 3,
        "ok": True,
    }


def test_typeddict_not_total() -> None:
    spec = compile_form(PartialTD)
    schema = check_wire(spec)
    assert "required" not in schema
    assert schema["properties"] == {
        "name": {"type": "string"},
        "size": {"type": "string", "enum": ["s", "m", "l"]},
    }
    assert spec.to_python(spec.validate({})) == {}
    assert spec.to_python(spec.validate({"size": "l"})) == {"size": Size.L}


class MixedTD(TypedDict):
    name: str
    note: NotRequired[str]


class MixedPartialTD(TypedDict, total=False):
    name: Required[str]
    note: str


@pytest.mark.parametrize("cls", [MixedTD, MixedPartialTD], ids=["NotRequired", "Required"])
def test_typeddict_required_qualifiers(cls: type) -> None:
    schema = check_wire(compile_form(cls))
    assert schema["properties"] == {"name": {"type": "string"}, "note": {"type": "string"}}
    assert schema["required"] == ["name"]


def test_pydantic_model() -> None:
    spec = compile_form(Prefs)
    schema = check_wire(spec)
    assert spec.name == "Prefs"
    p = schema["properties"]
    assert p["name"] == {
        "type": "string",
        "minLength": 2,
        "maxLength": 20,
        "title": "Name",
        "description": "What to call you",
    }
    assert p["age"] == {"type": "integer", "minimum": 0, "maximum": 150}
    assert p["ratio"] == {"type": "number", "minimum": 0.0, "maximum": 1.0, "default": 0.5}
    assert p["size"] == {"type": "string", "enum": ["s", "m", "l"], "default": "m"}
    assert p["color"] == {"type": "string", "enum": ["red", "green"]}
    assert p["tags"] == {"type": "array", "items": {"type": "string", "enum": ["x", "y"]}, "default": ["x"]}
    assert p["nickname"] == {"type": "string"}
    assert p["agree"] == {"type": "boolean", "default": True}
    assert schema["required"] == ["name", "age", "color"]


def test_pydantic_alias_is_the_wire_name() -> None:
    class Aliased(pydantic.BaseModel):
        user_name: str = pydantic.Field(alias="userName")

    spec = compile_form(Aliased)
    assert check_wire(spec)["properties"] == {"userName": {"type": "string"}}
    model = spec.to_python(spec.validate({"userName": "ann"}))
    assert isinstance(model, Aliased)
    assert model.user_name == "ann"


def test_pydantic_model_with_baton_field() -> None:
    class WithBatonField(pydantic.BaseModel):
        email: Annotated[str, Field(format="email")]
        color: Annotated[Literal["r", "g"], Field(titles={"r": "Red", "g": "Green"})]
        age: Annotated[int, Field(minimum=0)]

    p = check_wire(compile_form(WithBatonField))["properties"]
    assert p["email"] == {"type": "string", "format": "email"}
    assert p["color"] == {
        "type": "string",
        "oneOf": [{"const": "r", "title": "Red"}, {"const": "g", "title": "Green"}],
    }
    assert p["age"] == {"type": "integer", "minimum": 0}


def test_pydantic_constraint_the_form_cannot_express() -> None:
    class Positive(pydantic.BaseModel):
        n: int = pydantic.Field(gt=0)

    try:
        spec = compile_form(Positive)
    except FormError:
        return  # refusing at compile time is fine
    with pytest.raises(InvalidAnswer):
        spec.validate({"n": 0})


def test_pydantic_default_factory() -> None:
    class WithFactory(pydantic.BaseModel):
        tags: list[Literal["a", "b"]] = pydantic.Field(default_factory=list)

    spec = compile_form(WithFactory)
    assert check_wire(spec)["properties"]["tags"] == {
        "type": "array",
        "items": {"type": "string", "enum": ["a", "b"]},
    }


def test_explicit_field_list() -> None:
    fields: list[FieldSpec] = [
        StringField("name", title="Name", min_length=1),
        NumberField("count", integer=True, minimum=1, required=False, default=1),
        BooleanField("ok", description="Proceed?"),
        EnumField("size", values=[Choice("s", "Small"), Choice("l", "Large")]),
        MultiSelectField("tags", values=["a", "b"], required=False),
    ]
    spec = compile_form(fields)
    schema = check_wire(spec)
    assert schema["required"] == ["name", "ok", "size"]
    assert schema["properties"]["count"] == {"type": "integer", "minimum": 1, "default": 1}
    assert schema["properties"]["ok"] == {"type": "boolean", "description": "Proceed?"}
    assert spec.to_python(spec.validate({"name": "n", "ok": True, "size": "l", "tags": ["b"]})) == {
        "name": "n",
        "ok": True,
        "size": "l",
        "tags": ["b"],
    }
    # a tuple of fields works too, and a compiled FormSpec passes through unchanged
    assert compile_form(tuple(fields)).schema == schema
    assert compile_form(spec) is spec


def test_compiled_forms_are_cached() -> None:
    assert compile_form(Contact) is compile_form(Contact)


# --------------------------------------------------------------------------------------------------
# The wire schema of every variant of digest §5.2
# --------------------------------------------------------------------------------------------------


def single(hint: Any, default: Any = dataclasses.MISSING) -> FormSpec:
    """A one-field dataclass form `x: hint [= default]`."""
    ns: dict[str, Any] = {"__annotations__": {"x": hint}}
    if default is not dataclasses.MISSING:
        ns["x"] = default
    return compile_form(dataclasses.dataclass(type("One", (), ns)))


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (str, {"type": "string"}),
        (Annotated[str, Field(min_length=2)], {"type": "string", "minLength": 2}),
        (Annotated[str, Field(max_length=9)], {"type": "string", "maxLength": 9}),
        (
            Annotated[str, Field(min_length=0, max_length=0)],
            {"type": "string", "minLength": 0, "maxLength": 0},
        ),
        (Annotated[str, Field(format="email")], {"type": "string", "format": "email"}),
        (Annotated[str, Field(format="uri")], {"type": "string", "format": "uri"}),
        (Annotated[str, Field(format="date")], {"type": "string", "format": "date"}),
        (Annotated[str, Field(format="date-time")], {"type": "string", "format": "date-time"}),
        (dt.date, {"type": "string", "format": "date"}),
        (dt.datetime, {"type": "string", "format": "date-time"}),
    ],
)
def test_string_schema(hint: Any, expected: dict[str, Any]) -> None:
    assert prop_of(single(hint), "x", "StringSchema") == expected


@pytest.mark.parametrize(
    ("hint", "expected"),
    [
        (int, {"type": "integer"}),
        (float, {"type": "number"}),
        (Annotated[int, Field(minimum=1)], {"type": "integer", "minimum": 1}),
        (Annotated[int, Field(maximum=10)], {"type": "integer", "maximum": 10}),
        (Annotated[int, Field(minimum=-5, maximum=5)], {"type": "integer", "minimum": -5, "maximum": 5}),
        (
            Annotated[float, Field(minimum=0.25, maximum=0.75)],
            {"type": "number", "minimum": 0.25, "maximum": 0.75},
        ),
    ],
)
def test_number_schema(hint: Any, expected: dict[str, Any]) -> None:
    assert prop_of(single(hint), "x", "NumberSchema") == expected


def test_boolean_schema() -> None:
    assert prop_of(single(bool), "x", "BooleanSchema") == {"type": "boolean"}
    assert prop_of(single(bool, True), "x", "BooleanSchema") == {"type": "boolean", "default": True}
    assert prop_of(single(bool, False), "x", "BooleanSchema") == {"type": "boolean", "default": False}


def test_untitled_enum_via_literal_and_enum() -> None:
    assert prop_of(single(Literal["a", "b"]), "x", "UntitledSingleSelectEnumSchema") == {
        "type": "string",
        "enum": ["a", "b"],
    }
    assert prop_of(single(Size), "x", "UntitledSingleSelectEnumSchema") == {
        "type": "string",
        "enum": ["s", "m", "l"],
    }
    # an untitled enum is not the titled variant
    assert "TitledSingleSelectEnumSchema" not in matching_variants(single(Size).schema["properties"]["x"])


TITLES = {"s": "Small", "m": "Medium", "l": "Large"}
ONE_OF = [
    {"const": "s", "title": "Small"},
    {"const": "m", "title": "Medium"},
    {"const": "l", "title": "Large"},
]


def test_titled_enum_via_field_titles() -> None:
    spec = single(Annotated[Literal["s", "m", "l"], Field(titles=TITLES)])
    assert prop_of(spec, "x", "TitledSingleSelectEnumSchema") == {"type": "string", "oneOf": ONE_OF}
    assert matching_variants(spec.schema["properties"]["x"]) == {"TitledSingleSelectEnumSchema"}
    spec = single(Annotated[Size, Field(titles=TITLES)])
    assert prop_of(spec, "x", "TitledSingleSelectEnumSchema") == {"type": "string", "oneOf": ONE_OF}


def test_titled_enum_missing_title_falls_back_to_value() -> None:
    spec = single(Annotated[Literal["s", "m"], Field(titles={"s": "Small"})])
    assert prop_of(spec, "x", "TitledSingleSelectEnumSchema")["oneOf"] == [
        {"const": "s", "title": "Small"},
        {"const": "m", "title": "m"},
    ]


def test_titled_enum_via_choice() -> None:
    spec = compile_form([EnumField("x", values=[Choice("s", "Small"), Choice("m", "Medium"), Choice("l", "Large")])])
    assert prop_of(spec, "x", "TitledSingleSelectEnumSchema") == {"type": "string", "oneOf": ONE_OF}
    # Choice and plain values mixed
    spec = compile_form([EnumField("x", values=[Choice("s", "Small"), "m"])])
    assert prop_of(spec, "x", "TitledSingleSelectEnumSchema")["oneOf"] == [
        {"const": "s", "title": "Small"},
        {"const": "m", "title": "m"},
    ]
    # the values are plain strings after construction
    assert list(spec.fields[0].values) == ["s", "m"]  # type: ignore[attr-defined]


def test_multi_select_untitled() -> None:
    spec = single(Annotated[list[Literal["a", "b", "c"]], Field(min_items=1, max_items=2)])
    assert prop_of(spec, "x", "UntitledMultiSelectEnumSchema") == {
        "type": "array",
        "items": {"type": "string", "enum": ["a", "b", "c"]},
        "minItems": 1,
        "maxItems": 2,
    }
    assert matching_variants(spec.schema["properties"]["x"]) == {"UntitledMultiSelectEnumSchema"}
    for hint in (set[Topic], frozenset[Topic], list[Topic]):
        assert prop_of(single(hint), "x", "UntitledMultiSelectEnumSchema") == {
            "type": "array",
            "items": {"type": "string", "enum": ["news", "sport", "tech"]},
        }


def test_multi_select_titled() -> None:
    spec = single(Annotated[list[Literal["s", "m", "l"]], Field(titles=TITLES, min_items=0, max_items=3)])
    assert prop_of(spec, "x", "TitledMultiSelectEnumSchema") == {
        "type": "array",
        "items": {"anyOf": ONE_OF},
        "minItems": 0,
        "maxItems": 3,
    }
    assert matching_variants(spec.schema["properties"]["x"]) == {"TitledMultiSelectEnumSchema"}
    spec = compile_form(
        [MultiSelectField("x", values=[Choice("s", "Small"), Choice("m", "Medium"), Choice("l", "Large")])]
    )
    assert prop_of(spec, "x", "TitledMultiSelectEnumSchema") == {"type": "array", "items": {"anyOf": ONE_OF}}


def test_enum_names_give_titles() -> None:
    spec = single(Annotated[Literal["s", "m", "l"], Field(titles=TITLES, legacy_titles=True)])
    prop = prop_of(spec, "x", "LegacyTitledEnumSchema")
    assert prop == {"type": "string", "enum": ["s", "m", "l"], "enumNames": ["Small", "Medium", "Large"]}
    assert matching_variants(prop) == {"LegacyTitledEnumSchema"}
    spec = compile_form([EnumField("x", values=[Choice("s", "Small"), "m"], legacy_titles=True, default="m")])
    assert prop_of(spec, "x", "LegacyTitledEnumSchema") == {
        "type": "string",
        "enum": ["s", "m"],
        "enumNames": ["Small", "m"],
        "default": "m",
    }


def test_enum_names_flag_without_titles_is_untitled() -> None:
    spec = single(Annotated[Literal["a"], Field(legacy_titles=True)])
    assert prop_of(spec, "x", "UntitledSingleSelectEnumSchema") == {"type": "string", "enum": ["a"]}


@pytest.mark.parametrize(
    ("hint", "default", "expected_default"),
    [
        (str, "hello", "hello"),
        (Annotated[str, Field(format="email")], "a@b.co", "a@b.co"),
        (int, 0, 0),
        (int, 42, 42),
        (float, 1.5, 1.5),
        (bool, False, False),
        (Literal["a", "b"], "b", "b"),
        (Size, Size.L, "l"),
        (Annotated[Size, Field(titles=TITLES)], Size.S, "s"),
        (dt.date, dt.date(2024, 2, 29), "2024-02-29"),
        (dt.datetime, dt.datetime(2024, 1, 2, 3, 4, 5, tzinfo=dt.UTC), "2024-01-02T03:04:05+00:00"),
        (frozenset[Topic], frozenset({Topic.TECH}), ["tech"]),
    ],
)
def test_defaults(hint: Any, default: Any, expected_default: Any) -> None:
    spec = single(hint, default)
    prop = check_wire(spec)["properties"]["x"]
    assert prop["default"] == expected_default
    assert type(prop["default"]) is type(expected_default)
    assert "required" not in spec.schema


def test_none_default_is_omitted() -> None:
    spec = single(Optional[str], None)  # noqa: UP045 - the spelling under test
    assert check_wire(spec)["properties"]["x"] == {"type": "string"}
    assert "required" not in spec.schema


def test_multi_select_default_explicit() -> None:
    spec = compile_form([MultiSelectField("x", values=["a", "b"], default=["a"], title="Pick", description="d")])
    assert prop_of(spec, "x", "UntitledMultiSelectEnumSchema") == {
        "type": "array",
        "items": {"type": "string", "enum": ["a", "b"]},
        "default": ["a"],
        "title": "Pick",
        "description": "d",
    }


@pytest.mark.parametrize("variant_hint", [str, int, float, bool, Size, Literal["a"], list[Topic], dt.date])
def test_title_and_description_on_every_variant(variant_hint: Any) -> None:
    spec = single(Annotated[variant_hint, Field(title="T", description="D")])
    prop = check_wire(spec)["properties"]["x"]
    assert prop["title"] == "T"
    assert prop["description"] == "D"


def test_optional_spellings_are_not_required() -> None:
    for hint in (Optional[int], Union[int, None], int | None, Annotated[int | None, Field(minimum=1)]):  # noqa: UP007, UP045
        spec = single(hint)
        assert "required" not in check_wire(spec)
        assert check_wire(spec)["properties"]["x"]["type"] == "integer"


@pytest.mark.parametrize("kind", ["dataclass", "pydantic"])
def test_optional_around_annotated(kind: str) -> None:
    if kind == "dataclass":
        spec = single(Annotated[float, Field(minimum=0.5)] | None, None)
    else:

        class Model(pydantic.BaseModel):
            x: Annotated[int, pydantic.Field(ge=1)] | None = None

        spec = compile_form(Model)
    prop = check_wire(spec)["properties"]["x"]
    assert prop["minimum"] in (0.5, 1)


# --------------------------------------------------------------------------------------------------
# Refused at compile time (design §3)
# --------------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Address:
    street: str


class AddressTD(TypedDict):
    street: str


class AddressModel(pydantic.BaseModel):
    street: str


class Level(enum.Enum):
    LOW = 1
    HIGH = 2


@pytest.mark.parametrize(
    "hint",
    [
        Address,
        AddressTD,
        AddressModel,
        dict,
        dict[str, str],
        list[str],
        list[int],
        list[Address],
        list,
        set[str],
        tuple[str, ...],
        int | str,
        Union[int, str],  # noqa: UP007
        Optional[int | str],  # noqa: UP045
        Literal[1, 2],
        Literal["a", 1],
        Literal[True],
        Level,
        list[Level],
        list[Literal[1]],
        bytes,
        Any,
        object,
    ],
    ids=str,
)
def test_refused_at_compile_time(hint: Any) -> None:
    with pytest.raises(FormError) as info:
        single(hint)
    assert "One.x" in str(info.value)


def test_form_error_is_a_type_error() -> None:
    assert issubclass(FormError, TypeError)


def test_form_decorator_raises_at_decoration_time() -> None:
    with pytest.raises(FormError, match=r"Broken\.nested"):

        @form
        @dataclasses.dataclass
        class Broken:
            ok: str
            nested: Address

    with pytest.raises(FormError, match="union"):

        @form
        class BrokenTD(TypedDict):
            either: int | str

    with pytest.raises(FormError):

        @form
        class BrokenModel(pydantic.BaseModel):
            data: dict[str, int]


def test_form_decorator_returns_the_class() -> None:
    @form
    @dataclasses.dataclass
    class Fine:
        name: str

    assert dataclasses.is_dataclass(Fine)
    assert Fine("x").name == "x"
    assert compile_form(Fine).schema["properties"] == {"name": {"type": "string"}}


@pytest.mark.parametrize(
    "source", [42, "Contact", None, [StringField("a"), "b"], [{"name": "a"}], dict, list[str], object]
)
def test_compile_form_refuses_other_sources(source: Any) -> None:
    with pytest.raises(FormError):
        compile_form(source)


def test_field_construction_errors() -> None:
    with pytest.raises(ValueError, match="format"):
        StringField("s", format="phone")
    with pytest.raises(ValueError, match="at least one value"):
        EnumField("e", values=[])
    with pytest.raises(ValueError, match="at least one value"):
        MultiSelectField("m", values=())
    with pytest.raises(ValueError, match="twice"):
        FormSpec([StringField("a"), NumberField("a")])


def test_unknown_format_on_typed_form_is_form_error() -> None:
    with pytest.raises(FormError):
        single(Annotated[str, Field(format="phone")])


# --------------------------------------------------------------------------------------------------
# Answer validation (digest §5.2, §5.3, A8)
# --------------------------------------------------------------------------------------------------


def bad(spec: FormSpec, content: Any) -> str:
    with pytest.raises(InvalidAnswer) as info:
        spec.validate(content)
    return str(info.value)


CONTACT_OK = {
    "name": "Ann",
    "email": "ann@example.org",
    "birthday": "1990-05-17",
    "size": "m",
    "topics": ["news"],
}


def test_valid_answer() -> None:
    spec = compile_form(Contact)
    values = spec.validate(CONTACT_OK)
    assert values == CONTACT_OK
    ELICIT_RESULT.validate({"action": "accept", "content": values})


def test_unknown_keys_are_ignored() -> None:
    spec = compile_form(Contact)
    assert spec.validate({**CONTACT_OK, "evil": {"nested": 1}}) == CONTACT_OK


@pytest.mark.parametrize(
    ("hint", "value"),
    [
        (str, 5),
        (str, 1.5),
        (str, ["a"]),
        (str, True),
        (int, "5"),
        (int, [5]),
        (float, "1.5"),
        (float, {"v": 1}),
        (bool, "true"),
        (bool, 1),
        (bool, 0),
        (Literal["a", "b"], 1),
        (Literal["a", "b"], ["a"]),
        (list[Literal["a", "b"]], "a"),
        (list[Literal["a", "b"]], [1]),
        (list[Literal["a", "b"]], {"a": True}),
    ],
)
def test_wrong_types(hint: Any, value: Any) -> None:
    msg = bad(single(hint), {"x": value})
    assert msg.startswith("x: ")


@pytest.mark.parametrize("hint", [int, float])
@pytest.mark.parametrize("value", [True, False])
def test_bool_is_not_a_number(hint: Any, value: bool) -> None:
    assert "expected a number" in bad(single(hint), {"x": value})


def test_integer_given_as_whole_float() -> None:
    got = single(int).validate({"x": 30.0})["x"]
    assert got == 30
    assert type(got) is int
    assert single(int).validate({"x": -0.0})["x"] == 0


def test_fraction_refused_for_integer_accepted_for_number() -> None:
    assert "whole number" in bad(single(int), {"x": 30.5})
    assert single(float).validate({"x": 30.5}) == {"x": 30.5}
    assert single(float).validate({"x": 30}) == {"x": 30}


def test_official_schema_rejects_fractions_a8() -> None:
    # Ambiguity A8: the generated schema types answer numbers as integers; we follow schema.ts instead.
    assert not ELICIT_RESULT.is_valid({"action": "accept", "content": {"age": 30.5}})
    assert ELICIT_RESULT.is_valid({"action": "accept", "content": {"age": 30}})


@pytest.mark.parametrize(
    ("hint", "ok", "wrong", "message"),
    [
        (Annotated[int, Field(minimum=18)], [18, 19, 10**6], [17, -1], "at least 18"),
        (Annotated[int, Field(maximum=10)], [10, -(10**6)], [11], "at most 10"),
        (Annotated[float, Field(minimum=0.5)], [0.5, 1], [0.49, 0], "at least 0.5"),
        (Annotated[float, Field(maximum=2.5)], [2.5], [2.51], "at most 2.5"),
        (Annotated[str, Field(min_length=2)], ["ab", "日本"], ["a", ""], "at least 2 characters"),
        (Annotated[str, Field(max_length=3)], ["abc", ""], ["abcd"], "at most 3 characters"),
        (Annotated[list[Topic], Field(min_items=2)], [["news", "tech"]], [["news"], []], "at least 2"),
        (Annotated[list[Topic], Field(max_items=1)], [["news"], []], [["news", "tech"]], "at most 1"),
    ],
)
def test_ranges(hint: Any, ok: list[Any], wrong: list[Any], message: str) -> None:
    spec = single(hint)
    for value in ok:
        assert spec.validate({"x": value}) == {"x": value}
    for value in wrong:
        assert message in bad(spec, {"x": value})


def test_not_in_enum() -> None:
    spec = single(Literal["a", "b"])
    msg = bad(spec, {"x": "c"})
    assert "must be one of a, b" in msg
    bad(spec, {"x": "A"})
    bad(spec, {"x": ""})
    titled = compile_form([EnumField("x", values=[Choice("s", "Small")])])
    bad(titled, {"x": "Small"})  # the title is not the value
    assert titled.validate({"x": "s"}) == {"x": "s"}


def test_multi_select_checks() -> None:
    spec = single(list[Literal["a", "b", "c"]])
    assert spec.validate({"x": ["c", "a"]}) == {"x": ["c", "a"]}
    assert spec.validate({"x": []}) == {"x": []}
    assert "twice" in bad(spec, {"x": ["a", "a"]})
    assert "d is not one of" in bad(spec, {"x": ["a", "d"]})
    titled = compile_form([MultiSelectField("x", values=[Choice("a", "Alpha")])])
    assert "Alpha is not one of" in bad(titled, {"x": ["Alpha"]})


def test_missing_required_and_none_as_missing() -> None:
    spec = compile_form([StringField("a", title="Alpha"), StringField("b", required=False)])
    assert "Alpha: an answer is required" in bad(spec, {})
    assert "Alpha: an answer is required" in bad(spec, {"a": None})
    assert "Alpha: an answer is required" in bad(spec, None)
    assert spec.validate({"a": "x", "b": None}) == {"a": "x"}
    assert spec.validate({"a": "x"}) == {"a": "x"}
    # an empty string is an answer, not a missing one
    assert spec.validate({"a": ""}) == {"a": ""}


@pytest.mark.parametrize("content", [[], "x", 5, True, [["a", "x"]]])
def test_content_must_be_an_object(content: Any) -> None:
    assert "object" in bad(compile_form([StringField("a", required=False)]), content)


def test_an_empty_form_accepts_nothing_in_particular() -> None:
    spec = compile_form([])
    assert check_wire(spec) == {"type": "object", "properties": {}}
    assert spec.validate({}) == {}
    assert spec.validate(None) == {}


FORMAT_CASES = [
    (
        "email",
        ["a@b.co", "user+tag@sub.example.org", "x.y@z.io"],
        ["a@b", "ab.co", "@b.co", "a b@c.de", "a@b..c", ""],
    ),
    (
        "uri",
        ["https://x.example/a?b=1", "mailto:a@b.c", "urn:isbn:123"],
        ["x", "http://", "http://a b", "/rel", "https:"],
    ),
    (
        "date",
        ["2024-02-29", "1999-12-31"],
        ["2023-02-29", "2024-1-01", "20240101", "2024-13-01", "2024-01-01T00:00:00Z"],
    ),
    (
        "date-time",
        [
            "2024-01-01T10:00:00Z",
            "2024-01-01t10:00:00Z",
            "2024-01-01T10:00:00+02:00",
            "2024-01-01T10:00:00.1-05:30",
        ],
        ["2024-01-01", "2024-01-01T10:00:00", "2024-01-01 10:00:00Z", "2024-01-01T25:00:00Z", "soon"],
    ),
]


@pytest.mark.parametrize(("fmt", "good", "wrong"), FORMAT_CASES, ids=[c[0] for c in FORMAT_CASES])
def test_formats(fmt: str, good: list[str], wrong: list[str]) -> None:
    spec = compile_form([StringField("x", format=fmt)])
    for value in good:
        assert spec.validate({"x": value}) == {"x": value}, value
    for value in wrong:
        assert f"must be a valid {fmt}" in bad(spec, {"x": value}), value


@pytest.mark.parametrize(
    ("fmt", "value"),
    [
        ("date", "2024-W01-1"),
        ("date-time", "2024-01-01T10Z"),
        ("date-time", "2024-01-01T10:00Z"),
        ("date-time", "2024-W01-1T10:00:00Z"),
        ("date-time", "2024-01-01T10:00:00,5Z"),
    ],
)
def test_formats_refuse_non_rfc3339(fmt: str, value: str) -> None:
    bad(compile_form([StringField("x", format=fmt)]), {"x": value})


@pytest.mark.parametrize("value", ["2024-01-01T10:00:00z", "2024-01-01t10:00:00z"])
def test_date_time_lowercase_separators(value: str) -> None:
    spec = single(dt.datetime)
    assert spec.to_python(spec.validate({"x": value})).x == dt.datetime(2024, 1, 1, 10, tzinfo=dt.UTC)


def test_error_message_lists_every_problem() -> None:
    spec = compile_form(Contact)
    msg = bad(
        spec,
        {
            "name": "",
            "email": "not-an-email",
            "birthday": "yesterday",
            "size": "xl",
            "topics": ["news", "news"],
            "age": 12,
            "height": True,
            "subscribe": "yes",
            "color": "blue",
        },
    )
    parts = msg.split("; ")
    assert len(parts) == 9, msg
    for expected in (
        "Name: must be at least 1 characters",
        "email: must be a valid email",
        "birthday: must be a valid date",
        "size: must be one of s, m, l",
        "topics: a choice appears twice",
        "age: must be at least 18",
        "height: expected a number",
        "subscribe: expected true or false",
        "color: must be one of red, green",
    ):
        assert expected in parts, (expected, parts)
    assert "seen_at" not in msg  # optional and absent is fine
    # a missing required field is one more problem in the same message
    msg = bad(spec, {"email": "x"})
    for field_ in ("Name", "email", "birthday", "size", "topics"):
        assert field_ in msg


# --------------------------------------------------------------------------------------------------
# Conversion to Python values
# --------------------------------------------------------------------------------------------------


def test_dataclass_instance_with_python_values() -> None:
    spec = compile_form(Contact)
    answer = {
        **CONTACT_OK,
        "topics": ["tech", "news"],
        "age": 40.0,
        "height": 1.8,
        "subscribe": True,
        "color": "green",
        "seen_at": "2024-06-01T12:30:00Z",
        "tags": ["c", "a"],
    }
    got = spec.to_python(spec.validate(answer))
    assert isinstance(got, Contact)
    assert got.name == "Ann"
    assert got.birthday == dt.date(1990, 5, 17)
    assert type(got.birthday) is dt.date
    assert got.size is Size.M
    assert got.topics == {Topic.TECH, Topic.NEWS}
    assert isinstance(got.topics, set)
    assert got.age == 40
    assert type(got.age) is int
    assert got.height == 1.8
    assert got.subscribe is True
    assert got.color == "green"
    assert got.seen_at == dt.datetime(2024, 6, 1, 12, 30, tzinfo=dt.UTC)
    assert got.tags == ["c", "a"]


def test_dataclass_defaults_fill_in() -> None:
    spec = compile_form(Contact)
    got = spec.to_python(spec.validate(CONTACT_OK))
    assert (got.age, got.height, got.subscribe, got.color, got.seen_at, got.tags) == (
        30,
        None,
        False,
        "red",
        None,
        [],
    )


def test_datetime_offsets_are_kept() -> None:
    spec = single(dt.datetime)
    got = spec.to_python(spec.validate({"x": "2024-01-01T10:00:00+02:00"})).x
    assert got.utcoffset() == dt.timedelta(hours=2)
    assert got == dt.datetime(2024, 1, 1, 8, tzinfo=dt.UTC)


@pytest.mark.parametrize(("hint", "container"), [(set[Topic], set), (frozenset[Topic], frozenset), (list[Topic], list)])
def test_multi_select_containers(hint: Any, container: type) -> None:
    spec = single(hint)
    got = spec.to_python(spec.validate({"x": ["sport", "tech"]})).x
    assert type(got) is container
    assert sorted(t.value for t in got) == ["sport", "tech"]
    assert all(isinstance(t, Topic) for t in got)


def test_set_of_literals() -> None:
    spec = single(set[Literal["a", "b"]])
    assert spec.to_python(spec.validate({"x": ["b", "a"]})).x == {"a", "b"}


def test_pydantic_model_instance() -> None:
    spec = compile_form(Prefs)
    got = spec.to_python(spec.validate({"name": "Ann", "age": 30.0, "color": "green", "tags": ["y", "x"]}))
    assert isinstance(got, Prefs)
    assert got.name == "Ann"
    assert got.age == 30
    assert got.size is Size.M
    assert got.tags == ["y", "x"]
    assert got.nickname is None
    assert got.agree is True
    got = spec.to_python(spec.validate({"name": "Bo", "age": 1, "color": "red", "size": "l", "ratio": 1}))
    assert got.size is Size.L
    assert got.ratio == 1.0


def test_pydantic_constraints_checked_before_the_model() -> None:
    spec = compile_form(Prefs)
    msg = bad(spec, {"name": "A", "age": 151, "color": "red", "ratio": 1.5})
    assert "Name: must be at least 2 characters" in msg
    assert "age: must be at most 150" in msg
    assert "ratio: must be at most 1" in msg


@pytest.mark.parametrize("kind", ["dataclass", "pydantic"])
def test_optional_without_default_can_be_left_out(kind: str) -> None:
    if kind == "dataclass":

        @dataclasses.dataclass
        class Nick:
            nick: str | None

        cls: type = Nick
    else:

        class NickModel(pydantic.BaseModel):
            nick: str | None

        cls = NickModel
    spec = compile_form(cls)
    try:
        values = spec.validate({})
    except InvalidAnswer:
        return  # asking for it on the wire would be consistent too
    got = spec.to_python(values)
    assert got.nick is None


def test_explicit_fields_convert_hook() -> None:
    spec = compile_form([StringField("d", format="date", convert=dt.date.fromisoformat), StringField("s")])
    assert spec.to_python(spec.validate({"d": "2024-01-02", "s": "x"})) == {
        "d": dt.date(2024, 1, 2),
        "s": "x",
    }


def test_answer_outcomes() -> None:
    assert bool(Accepted({"a": 1})) is True
    assert bool(Accepted(None)) is True
    assert Accepted(0).data == 0
    assert bool(Declined()) is False
    assert bool(Cancelled()) is False
    assert Declined() != Cancelled()
    with pytest.raises(dataclasses.FrozenInstanceError):
        Accepted(1).data = 2  # type: ignore[misc]
