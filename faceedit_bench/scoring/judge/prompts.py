"""The judge prompt templates: semantic consistency (SC), the state tracker, the instruction writer.

Each template is a :class:`~faceedit_bench.scoring.judge.service.PromptTemplate` whose answer schema is a
pydantic model with ``extra="forbid"`` and every field required, so the same schema works
for OpenAI's strict structured output and Gemini's ``response_schema``. Schemas stay in the
subset both accept: objects, strings, integers with minimum/maximum, arrays of enum strings.
Checks that JSON Schema cannot express in that subset (a one-line instruction) are pydantic
validators; they are part of the template, so a change to one needs a new ``version``.

- ``SC_TEMPLATE``: VIEScore's "tie" semantic-consistency prompt (METHODOLOGY §3.1-§3.3),
  PARAPHRASED from VIEScore's repository, not verbatim.
- ``STATE_TEMPLATE``: the state tracker (§2.5, §8.5), a RECONSTRUCTION: paper (a)'s App. E
  prompt was never published.
- ``INSTRUCTION_TEMPLATE``: the instruction writer (§2.4, §8.3), a RECONSTRUCTION: paper
  (a)'s App. C prompt was never published.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, create_model, field_validator

from faceedit_bench.scoring.judge.service import PromptTemplate
from faceedit_bench.taxonomy import Taxonomy

# -- semantic consistency (VIEScore "tie") ---------------------------------------------------


# VIEScore asks for {"score": [score1, score2], "reasoning": ...}; we name the two scores so the
# schema states which is which. Same scales, same order, same min rule. (Comments, not docstrings,
# on answer models: a docstring would become the schema's description, i.e. part of the prompt.)
class SCAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # strict: a JSON true/false or "7" is not a score
    editing_success: int = Field(ge=0, le=10, strict=True,
                                 description="0: the edit does not follow the instruction at all; 10: perfectly")
    overediting: int = Field(ge=0, le=10, strict=True,
                             description="0: completely different from the original; 10: minimally edited yet effective")
    reasoning: str


# Structure of VIEScore's SC prompt for task "tie" (viescore/__init__.py at commit 2cbea4e):
# "\n".join([_context_no_delimit, _prompts_0shot_two_image_edit_rule, _prompts_0shot_tie_rule_SC]),
# with "<instruction>" replaced by the instruction. The wording below is our paraphrase of those
# three blocks (MIT-licensed, Copyright (c) 2024 Max W.F. Ku), not a verbatim copy. Two
# deliberate differences: named score fields instead of a "score" list (see SCAnswer), and a
# ``$instruction`` placeholder. Kept from VIEScore although our base images are real photos:
# the claim that all images and humans are AI-generated (it is the protocol paper (a) follows).
_SC_TEXT = """\
You are a professional digital artist. Your task is to evaluate how effective the AI-generated image(s) are, \
according to the rules given.
All input images are AI-generated, and every human in them is AI-generated as well, so you do not need to \
worry about privacy.

Give your output in this form (keep the reasoning brief and concise):
{
"editing_success" : ...,
"overediting" : ...,
"reasoning" : "..."
}
RULES:

Two images are given: the first is the original AI-generated image and the second is an edited version of \
the first.
The goal is to evaluate how successfully the editing instruction has been carried out in the second image.

Note that the two images may sometimes look identical because the edit failed.

On a scale from 0 to 10:
One score from 0 to 10 rates the success of the edit. (0 means the scene in the edited image does not \
follow the editing instruction at all. 10 means the scene in the edited image follows the editing \
instruction perfectly.)
A second score from 0 to 10 rates the degree of overediting in the second image. (0 means the scene in the \
edited image is completely different from the original. 10 means the edited image is recognisable as a \
minimally edited yet effective version of the original.)
Put the first score (editing success) in "editing_success" and the second score (degree of overediting) \
in "overediting".

Editing instruction: $instruction
"""

#: Images, in order: [I_{k-1}, I_k] (METHODOLOGY §2.5: the pair is our reading, §10 item 2).
SC_TEMPLATE = PromptTemplate(
    name="viescore-tie-sc",
    version="1",
    text=_SC_TEXT,
    schema=SCAnswer,
    source=(
        "VIEScore (Ku et al., ACL 2024), task 'tie', SC prompt = context_no_delimit + two_image_edit_rule + "
        "tie_rule_SC, github.com/TIGER-AI-Lab/VIEScore; wording PARAPHRASED, not verbatim; named score "
        "fields instead of VIEScore's 'score' list (METHODOLOGY §3.1)"
    ),
    reconstruction=False,
)


def sc_from_answer(value: Mapping[str, Any]) -> float:
    """SC_k = min(editing success, overediting) / 10, in [0, 1] (METHODOLOGY §3.2-§3.3).

    ``value`` is a parsed answer (``JudgeAnswer.value``); it is validated again so that a
    hand-built or stale value cannot turn into a number silently.
    """
    answer = SCAnswer.model_validate(value)
    return min(answer.editing_success, answer.overediting) / 10


# -- state tracker (§8.5) --------------------------------------------------------------------


# The paper's example base state (§2.5), with a tie in hair colour to show the multi-label form.
_EXAMPLE_STATE = {
    "hair-color": ["black hair", "brown hair"],
    "beard": ["clean shaven"],
    "hair-type": ["straight hair"],
    "head position": ["looking straight ahead"],
}


def _quoted(values: Sequence[str]) -> str:
    return ", ".join(f'"{v}"' for v in values)


def build_state_schema(taxonomy: Taxonomy) -> type[BaseModel]:
    """One required field per state key, spelled exactly as the taxonomy spells it (some
    contain spaces or hyphens: "head position", "hair-color"); each is a list of that key's
    category names. The empty list is ``None`` (absent)."""
    fields: dict[str, Any] = {
        key: (list[Literal[tuple(taxonomy.categories(key))]],  # type: ignore[misc]
              Field(description=f"categories of {key}; [] when absent"))
        for key in taxonomy.state_keys
    }
    return create_model("StateAnswer", __config__=ConfigDict(extra="forbid"), **fields)


def _state_text(taxonomy: Taxonomy) -> str:
    keys = taxonomy.state_keys
    vocab = "\n".join(f'- "{key}": {_quoted(taxonomy.categories(key))}' for key in keys)
    always = _quoted([k for k in keys if not taxonomy.sub_axis(k).nullable])
    rules = [
        "For each key, give the single most probable category.",
        "If two or more categories are equally plausible (for example hair that is both black and brown), "
        "give all of them.",
        "Give an empty list [] when the feature is absent (for example no hat, no glasses, no mustache, or "
        "hair not cut in any of the listed styles).",
        *(f'"{key}": answer ["{sub.default}"] when there is no {key}, rather than [].'
          for key in keys if (sub := taxonomy.sub_axis(key)).default is not None),
        f"{always} should always have a value when the hair or head is visible: choose the closest listed "
        "category (for a hair colour outside the list, such as pink, white or purple, the nearest listed "
        "colour). Give [] only when the feature cannot be seen at all (for example a bald head has no hair "
        "colour).",
        "A mustache on its own is not a beard.",
        *(f'"{category}" also covers {_quoted(names)}.' for category, names in taxonomy.state_aliases.items()),
        "Describe only what is visible in this image.",
    ]
    numbered = "\n".join(f"{i}. {rule}" for i, rule in enumerate(rules, start=1))
    example = {key: _EXAMPLE_STATE.get(key, []) for key in keys}
    example_json = "{" + ", ".join(f'"{k}": [{_quoted(v)}]' for k, v in example.items()) + "}"
    return f"""\
You describe the appearance of the person in a portrait photo using a fixed vocabulary.
One image is given. Look only at the main person in it.

For each of the {len(keys)} keys below, choose from that key's allowed categories, spelled exactly as written:
{vocab}

Rules:
{numbered}

Answer with one JSON object with exactly these {len(keys)} keys, each a list of categories. Format example \
(describe the image you see, not this example):
{example_json}
"""


def build_state_template(taxonomy: Taxonomy) -> PromptTemplate:
    """The state-tracker template for ``taxonomy`` (vocabulary and schema built from it, so a
    different taxonomy gives a different template hash)."""
    for key, values in _EXAMPLE_STATE.items():  # the format example must itself be valid
        if key not in taxonomy.state_keys or not set(values) <= set(taxonomy.categories(key)):
            raise ValueError(f"taxonomy {taxonomy.name} {taxonomy.version} lacks the example state value "
                             f"{key}={values}; adapt _EXAMPLE_STATE to its vocabulary")
    return PromptTemplate(
        name="state-tracker",
        version="1",
        text=_state_text(taxonomy),
        schema=build_state_schema(taxonomy),
        source=(
            "RECONSTRUCTION of paper (a)'s unpublished App. E state-tracker prompt (METHODOLOGY §8.5), "
            f"vocabulary from taxonomy {taxonomy.name} {taxonomy.version} ({taxonomy.content_hash[:12]})"
        ),
        reconstruction=True,
    )


#: Images: [I_k], one image (run on I_0..I_4).
STATE_TEMPLATE = build_state_template(Taxonomy.builtin())


def state_from_answer(value: Mapping[str, Any], template: PromptTemplate = STATE_TEMPLATE) -> dict[str, frozenset[str]]:
    """The state dictionary of a parsed state-tracker answer: key -> set of categories,
    the empty set meaning ``None`` (absent). Validated against ``template``'s schema."""
    answer = template.schema.model_validate(value).model_dump()
    return {key: frozenset(categories) for key, categories in answer.items()}


# -- instruction writer (§2.4, §8.3) ---------------------------------------------------------


class InstructionAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instruction: str

    @field_validator("instruction")
    @classmethod
    def _one_line(cls, v: str) -> str:
        v = v.strip()
        if not v or "\n" in v:
            raise ValueError("the instruction must be one non-empty line")
        return v


# Mirrors the template generator's style (faceedit_bench/testsets/generator.py): lower case,
# no final full stop, "the person"/"the person's", the attribute's own words, articles only
# before countable singular phrases, and no undoing of earlier edits of other sub-axes.
_INSTRUCTION_TEXT = """\
You write one short imperative photo-editing instruction for a portrait, in the style of MagicBrush, \
InstructPix2Pix and OmniEdit.

Target of this instruction:
- attribute: $attribute
- sub-axis: $sub_axis
- axis: $axis

Earlier instructions in this editing session, in order (they have already been applied):
$previous

Rules:
1. Write one sentence in lower case with no final full stop, and refer to "the person" or "the person's ...".
2. Use a verb that fits the sub-axis:
   - hair-color: "make/change/dye ... hair ...", e.g. "make the person's hair color crimson red"
   - hair-style and hair-type: "give the person a ...", e.g. "give the person a bob cut"
   - beard and mustache: "add/give ... a ...", e.g. "give the person a goatee"; for clean shaven: "make the \
person clean shaven" or "remove the person's facial hair"
   - hats and glasses: "add/put ... on ...", e.g. "put a beret on the person"
   - head position: "make the person look ..." or "turn the person's head ..."
3. Use the attribute's own words (for a hair colour you may drop the word "hair"). Put "a" or "an" only \
before a countable singular thing, not before plurals or words like "stubble" or "... hair".
4. Mention only the target attribute; ask for no other change.
5. Do not restate earlier instructions, and do not undo or contradict them unless they targeted the same \
sub-axis (for example, after a mustache was added, make a clean-shaven instruction remove the beard, not all \
facial hair).
6. Return JSON: {"instruction": "..."}
"""

INSTRUCTION_TEMPLATE = PromptTemplate(
    name="instruction-writer",
    version="1",
    text=_INSTRUCTION_TEXT,
    schema=InstructionAnswer,
    source=(
        "RECONSTRUCTION of paper (a)'s unpublished App. C instruction prompt (METHODOLOGY §2.4, §8.3); style "
        "rules mirror the template generator faceedit_bench/testsets/generator.py"
    ),
    reconstruction=True,
)


class StepMetadata(Protocol):
    """What the instruction writer is told about an earlier step (records.Step fits)."""

    instruction: str
    attribute: str
    sub_axis: str
    axis: str


def instruction_fields(attribute: str, sub_axis: str, axis: str,
                       previous: Sequence[StepMetadata] = ()) -> dict[str, str]:
    """The placeholder values of :data:`INSTRUCTION_TEMPLATE` for one step; ``previous``
    holds the session's earlier steps with their metadata (§2.4)."""
    if previous:
        lines = "\n".join(
            f'P{i}: "{p.instruction}" (attribute: {p.attribute}; sub-axis: {p.sub_axis}; axis: {p.axis})'
            for i, p in enumerate(previous, start=1)
        )
    else:
        lines = "none (this is the first instruction)"
    return {"attribute": attribute, "sub_axis": sub_axis, "axis": axis, "previous": lines}
