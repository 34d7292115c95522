"""The judge prompt templates: rendering, answer schemas, hashes (METHODOLOGY §3.1-§3.3, §8.3, §8.5)."""

from __future__ import annotations

import dataclasses
import json

import pytest
from pydantic import BaseModel, ConfigDict

from faceedit_bench.records import Step
from faceedit_bench.scoring.judge.prompts import (
    INSTRUCTION_TEMPLATE,
    SC_TEMPLATE,
    STATE_TEMPLATE,
    build_state_template,
    instruction_fields,
    sc_from_answer,
    state_from_answer,
)
from faceedit_bench.scoring.judge.service import ParseFailure, PromptTemplate, parse_answer
from faceedit_bench.taxonomy import Taxonomy, parse_taxonomy
from tests.fakes.answers import example_from_schema

TEMPLATES = [SC_TEMPLATE, STATE_TEMPLATE, INSTRUCTION_TEMPLATE]
STATE_KEYS = ["hair-color", "hair-style", "hair-type", "beard", "mustache", "hats", "glasses", "head position"]

EXAMPLES = {
    "viescore-tie-sc": {"editing_success": 8, "overediting": 6, "reasoning": "red hair, same face"},
    "state-tracker": {"hair-color": ["black hair", "brown hair"], "hair-style": [], "hair-type": ["straight hair"],
                      "beard": ["clean shaven"], "mustache": [], "hats": [], "glasses": ["sunglasses"],
                      "head position": ["looking straight ahead"]},
    "instruction-writer": {"instruction": "make the person's hair color crimson red"},
}


def test_sc_prompt_renders_the_instruction_and_keeps_viescore_structure():
    text = SC_TEMPLATE.render(instruction="make the person's hair color crimson red")
    assert text.rstrip().endswith("Editing instruction: make the person's hair color crimson red")
    assert "$" not in text
    # the three VIEScore blocks, in order: context + output format, two-image edit rule, tie SC rule
    order = [text.index(s) for s in ("professional digital artist", '"editing_success"', "RULES:",
                                     "look identical", "degree of overediting")]
    assert order == sorted(order)
    assert not SC_TEMPLATE.reconstruction and "PARAPHRASED" in SC_TEMPLATE.source
    with pytest.raises(KeyError):
        SC_TEMPLATE.render()  # a missing instruction is an error, not an empty string


def test_state_prompt_lists_every_key_with_its_vocabulary():
    tax = Taxonomy.builtin()
    text = STATE_TEMPLATE.render()
    for key in tax.state_keys:
        line = next(li for li in text.splitlines() if li.startswith(f'- "{key}":'))
        assert all(f'"{c}"' in line for c in tax.categories(key)), key
    assert STATE_TEMPLATE.reconstruction and "RECONSTRUCTION" in STATE_TEMPLATE.source
    assert '["clean shaven"]' in text  # beard's default (§8.2)
    assert list(STATE_TEMPLATE.json_schema["properties"]) == list(tax.state_keys) == STATE_KEYS


def test_instruction_prompt_renders_target_and_previous_steps():
    first = INSTRUCTION_TEMPLATE.render(**instruction_fields("crimson red hair", "hair-color", "Hair"))
    assert "- attribute: crimson red hair" in first and "none (this is the first instruction)" in first
    prev = [Step(1, "make the person's hair color crimson red", "crimson red hair", "red hair", "hair-color", "Hair")]
    second = INSTRUCTION_TEMPLATE.render(**instruction_fields("beret", "hats", "Accessories", prev))
    assert ('P1: "make the person\'s hair color crimson red" (attribute: crimson red hair; sub-axis: hair-color; '
            "axis: Hair)") in second
    assert "- sub-axis: hats" in second and "- axis: Accessories" in second and "$" not in second
    assert INSTRUCTION_TEMPLATE.reconstruction


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_examples_round_trip_through_parse_answer(template):
    example = EXAMPLES[template.name]
    assert parse_answer(json.dumps(example), template.schema) == example
    fenced = f"Here you go:\n```json\n{json.dumps(example)}\n```"
    assert parse_answer(fenced, template.schema) == example
    generated = example_from_schema(template.json_schema)  # what the fake judges answer
    assert parse_answer(json.dumps(generated), template.schema) == generated


@pytest.mark.parametrize("template", TEMPLATES, ids=lambda t: t.name)
def test_schemas_fit_strict_structured_output(template):
    """OpenAI strict mode: every object closes its properties and requires all of them."""

    def walk(node):
        if isinstance(node, dict):
            if node.get("type") == "object":
                assert node.get("additionalProperties") is False
                assert sorted(node["required"]) == sorted(node["properties"])
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(template.json_schema)
    example = dict(EXAMPLES[template.name], surplus="x")
    with pytest.raises(ParseFailure, match="schema"):
        parse_answer(json.dumps(example), template.schema)


def test_sc_schema_rejects_out_of_range_and_non_integer_scores():
    for bad in (11, -1, 7.5, "7", True):
        answer = dict(EXAMPLES["viescore-tie-sc"], editing_success=bad)
        with pytest.raises(ParseFailure):
            parse_answer(json.dumps(answer), SC_TEMPLATE.schema)
    missing = {"editing_success": 8, "reasoning": "no second score"}
    with pytest.raises(ParseFailure):
        parse_answer(json.dumps(missing), SC_TEMPLATE.schema)


def test_sc_is_the_minimum_of_the_two_scores_over_ten():
    assert sc_from_answer({"editing_success": 8, "overediting": 6, "reasoning": ""}) == 0.6
    assert sc_from_answer({"editing_success": 3, "overediting": 10, "reasoning": ""}) == 0.3
    assert sc_from_answer({"editing_success": 0, "overediting": 10, "reasoning": ""}) == 0.0
    assert sc_from_answer({"editing_success": 10, "overediting": 10, "reasoning": ""}) == 1.0
    with pytest.raises(ValueError):
        sc_from_answer({"editing_success": 11, "overediting": 10, "reasoning": ""})


def test_state_schema_accepts_empty_and_multi_label_lists_and_rejects_foreign_categories():
    value = parse_answer(json.dumps(EXAMPLES["state-tracker"]), STATE_TEMPLATE.schema)
    state = state_from_answer(value)
    assert state["hair-color"] == frozenset({"black hair", "brown hair"})
    assert state["hats"] == frozenset() and state["head position"] == frozenset({"looking straight ahead"})
    assert list(state) == STATE_KEYS
    # a category of another key, an alias, and a colour outside the vocabulary are all refused
    for key, bad in (("hair-color", "curly hair"), ("head position", "looking forward"), ("hair-color", "pink hair")):
        answer = dict(EXAMPLES["state-tracker"], **{key: [bad]})
        with pytest.raises(ParseFailure, match="schema"):
            parse_answer(json.dumps(answer), STATE_TEMPLATE.schema)
    incomplete = {k: v for k, v in EXAMPLES["state-tracker"].items() if k != "glasses"}
    with pytest.raises(ParseFailure):
        parse_answer(json.dumps(incomplete), STATE_TEMPLATE.schema)
    with pytest.raises(ValueError):
        state_from_answer({**EXAMPLES["state-tracker"], "hats": "beret"})  # a string is not a list


def test_instruction_schema_wants_one_non_empty_line():
    assert parse_answer('{"instruction": "  put a beret on the person "}', INSTRUCTION_TEMPLATE.schema) == {
        "instruction": "put a beret on the person"}
    for bad in ("", "   ", "put a beret on the person\nand make the hair red"):
        with pytest.raises(ParseFailure):
            parse_answer(json.dumps({"instruction": bad}), INSTRUCTION_TEMPLATE.schema)


class _Answer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    score: int


class _OtherAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    score: str


def test_template_hash_is_equal_for_equal_inputs_and_changes_with_text_version_schema():
    t = PromptTemplate("t", "1", "judge $instruction", _Answer)
    assert t.hash == PromptTemplate("t", "1", "judge $instruction", _Answer).hash
    assert t.hash != dataclasses.replace(t, text="judge this: $instruction").hash
    assert t.hash != dataclasses.replace(t, version="2").hash
    assert t.hash != dataclasses.replace(t, schema=_OtherAnswer).hash
    assert len({tpl.hash for tpl in TEMPLATES}) == 3
    # the builtin templates are rebuilt identically (same hash on every import / run)
    assert build_state_template(Taxonomy.builtin()).hash == STATE_TEMPLATE.hash


def test_state_template_follows_the_taxonomy():
    tax = Taxonomy.builtin()
    raw = json.loads(json.dumps({
        "name": tax.name, "version": "9.9.9", "reconstruction": True, "note": "",
        "state_aliases": {k: list(v) for k, v in tax.state_aliases.items()},
        "axes": [{"name": a.name, "sub_axes": [
            {"key": s.key, "default": s.default, "nullable": s.nullable,
             "categories": [{"name": c.name, "attributes": list(c.attributes)} for c in s.categories]}
            for s in a.sub_axes]} for a in tax.axes],
    }))
    raw["axes"][1]["sub_axes"][0]["categories"][2]["name"] = "flat cap"  # rename "beret"
    other = build_state_template(parse_taxonomy(raw))
    assert other.hash != STATE_TEMPLATE.hash and '"flat cap"' in other.render()
    ok = dict(EXAMPLES["state-tracker"], hats=["flat cap"])
    assert parse_answer(json.dumps(ok), other.schema)["hats"] == ["flat cap"]
    with pytest.raises(ParseFailure):
        parse_answer(json.dumps(ok), STATE_TEMPLATE.schema)
