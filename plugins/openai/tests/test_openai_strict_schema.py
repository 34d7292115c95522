"""Pydantic JSON schemas converted to OpenAI's strict structured-output form."""

from __future__ import annotations

import copy
from typing import Any, Literal

import pytest
from faceedit_bench_openai.strict_schema import UNSUPPORTED, to_strict_schema
from pydantic import BaseModel, Field


class Region(BaseModel):
    name: Literal["hair", "eyes", "mouth"]
    changed: bool = False


class Answer(BaseModel):
    score: int = Field(ge=0, le=10)
    reasoning: str = Field(min_length=1, max_length=500)
    main: Region = Field(description="the region the edit targeted")  # a $ref with a sibling keyword
    regions: list[Region] = Field(default_factory=list)
    note: str | None = None


def objects(node: Any) -> list[dict[str, Any]]:
    found = []
    if isinstance(node, dict):
        if node.get("type") == "object":
            found.append(node)
        for value in node.values():
            found += objects(value)
    elif isinstance(node, list):
        for value in node:
            found += objects(value)
    return found


def keywords(node: Any) -> set[str]:
    """Every schema keyword used anywhere (property and definition names are names, not keywords)."""
    if isinstance(node, list):
        return set().union(*(keywords(value) for value in node))
    if not isinstance(node, dict):
        return set()
    found = set(node)
    for key, value in node.items():
        children = value.values() if key in ("properties", "$defs") and isinstance(value, dict) else [value]
        found |= set().union(*(keywords(child) for child in children))
    return found


def test_every_object_is_closed_with_every_property_required() -> None:
    strict = to_strict_schema(Answer.model_json_schema())
    found = objects(strict)
    assert len(found) >= 3  # the root, Region in $defs, the inlined `main`
    for obj in found:
        assert obj["additionalProperties"] is False
        assert obj["required"] == list(obj["properties"])


def test_unsupported_keywords_are_dropped_and_supported_ones_kept() -> None:
    schema = Answer.model_json_schema()
    assert keywords(schema) & UNSUPPORTED == {"default", "minLength", "maxLength"}
    strict = to_strict_schema(schema)
    assert not keywords(strict) & UNSUPPORTED
    assert strict["properties"]["score"] == {"maximum": 10, "minimum": 0, "title": "Score", "type": "integer"}
    assert strict["properties"]["note"]["anyOf"] == [{"type": "string"}, {"type": "null"}]


def test_ref_with_siblings_is_inlined_and_bare_refs_kept() -> None:
    strict = to_strict_schema(Answer.model_json_schema())
    main = strict["properties"]["main"]
    assert "$ref" not in main and main["description"] == "the region the edit targeted"
    assert main["properties"]["name"]["enum"] == ["hair", "eyes", "mouth"]
    assert strict["properties"]["regions"]["items"] == {"$ref": "#/$defs/Region"}


def test_the_input_is_left_untouched() -> None:
    schema = Answer.model_json_schema()
    before = copy.deepcopy(schema)
    to_strict_schema(schema)
    assert schema == before


def test_one_of_becomes_any_of() -> None:
    strict = to_strict_schema({"type": "object", "properties": {
        "x": {"oneOf": [{"type": "integer"}, {"type": "string"}]}}})
    assert strict["properties"]["x"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}


@pytest.mark.parametrize(("schema", "message"), [
    ({"type": "array", "items": {"type": "string"}}, "object at the root"),
    ({"type": "object", "properties": {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}},
     "cannot express a map"),
    ({"type": "object", "properties": {"x": {"$ref": "other.json#/X", "description": "d"}}}, "only local"),
])
def test_schemas_strict_mode_cannot_take_are_refused_clearly(schema: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        to_strict_schema(schema)
