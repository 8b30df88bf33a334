"""Restricted elicitation forms (MCP 2026-07-28): fields, building them from types, validating answers."""

from .answers import Accepted, Answer, Cancelled, Declined
from .build import compile_form, form
from .fields import (
    BooleanField,
    Choice,
    EnumField,
    Field,
    FieldSpec,
    FormError,
    FormSpec,
    MultiSelectField,
    NumberField,
    StringField,
)
from .parse import parse_schema

__all__ = [
    "Accepted",
    "Answer",
    "BooleanField",
    "Cancelled",
    "Choice",
    "Declined",
    "EnumField",
    "Field",
    "FieldSpec",
    "FormError",
    "FormSpec",
    "MultiSelectField",
    "NumberField",
    "StringField",
    "compile_form",
    "form",
    "parse_schema",
]
