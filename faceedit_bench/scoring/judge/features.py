"""Judge templates that write prompt text for a prompt condition (faceedit_bench/run/conditions.py).

* ``paper_b_features``: paper (b)'s feature-prompt mitigation (METHODOLOGY §4.5). The judge sees the
  source portrait and describes 7 observable dimensions, then writes ``identity_prompt``: one or
  two sentences that begin "Maintain the person's ...". That sentence is what the condition joins
  to the instruction. The wording is ours; the dimensions and the JSON fields follow §4.5.
* ``instruction_rewrite``: "rewrite-then-edit". The judge sees the source image and the instruction
  and returns ``rewritten_instruction``, which replaces the instruction.

The judge is told to avoid demographic category labels, and some answers still contain them
(§4.5 saw "East Asian"). :func:`demographic_labels` finds them with the word list below. A text
that contains one is flagged, and the flags are counted in the report. The condition's
``flagged`` setting decides whether the text is still used (``keep``) or the edit ends as
``prompt_failed`` (``exclude``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field, field_validator

from faceedit_bench.scoring.judge.service import PromptTemplate

#: The 7 observable dimensions of METHODOLOGY §4.5, in its order.
FEATURE_DIMENSIONS = ("skin_tone", "face_shape", "eyes", "nose", "lips", "hair", "distinctive_features")

#: The opening identity_prompt must have. A curly apostrophe is accepted too.
IDENTITY_OPENING = re.compile(r"^\s*Maintain the person[’']s\b")


class FeatureAnswer(BaseModel):
    skin_tone: str = Field(min_length=1, description="a specific shade, e.g. 'deep brown with warm undertones'")
    face_shape: str = Field(min_length=1)
    eyes: str = Field(min_length=1)
    nose: str = Field(min_length=1)
    lips: str = Field(min_length=1)
    hair: str = Field(min_length=1, description="colour, texture, style, grey")
    distinctive_features: str = Field(min_length=1, description="wrinkles, birthmarks, dimples, glasses, facial hair")
    identity_prompt: str = Field(min_length=1, description="1-2 sentences beginning \"Maintain the person's\"")

    @field_validator("identity_prompt")
    @classmethod
    def _opening(cls, text: str) -> str:
        if not IDENTITY_OPENING.match(text):
            raise ValueError("identity_prompt must begin with \"Maintain the person's\"")
        return text.strip()


FEATURES_TEXT = """\
You are looking at a photograph of one person (the source portrait). It will be edited by an image
editor, and the editor must keep this person recognisably the same. Describe what you can see
of their appearance, so that the description can be added to the edit instruction.

Describe each of these, briefly and concretely, from what is visible in the photograph:
1. skin_tone: the exact shade and undertone of the skin (for example "deep brown with warm undertones").
2. face_shape: the outline and proportions of the face.
3. eyes: shape, size, colour, eyelids, spacing.
4. nose: bridge, width, tip.
5. lips: fullness, shape, colour.
6. hair: colour, texture, length, style, and any grey.
7. distinctive_features: wrinkles, birthmarks, moles, dimples, freckles, glasses, facial hair; "none" if none.

Then write identity_prompt: one or two sentences, starting with the words "Maintain the person's",
that tell an image editor to preserve these features (skin tone first).

Rules:
- Describe only visible features. Do not name or guess the person's race, ethnicity, nationality,
  gender or age group: write "deep brown skin with warm undertones", never a category such as a
  race or an age group.
- Answer with one JSON object and nothing else:
{"skin_tone": "...", "face_shape": "...", "eyes": "...", "nose": "...", "lips": "...", "hair": "...",
 "distinctive_features": "...", "identity_prompt": "Maintain the person's ..."}
"""

PAPER_B_FEATURES = PromptTemplate(
    name="paper_b_features", version="1", text=FEATURES_TEXT, schema=FeatureAnswer,
    source="METHODOLOGY §4.5 (paper (b) feature-prompt mitigation): dimensions and fields as published; "
           "the wording is this project's", reconstruction=True)


class RewriteAnswer(BaseModel):
    rewritten_instruction: str = Field(min_length=1)


REWRITE_TEXT = """\
You are looking at a photograph of a person (the source image) that an image editor will edit
with the instruction below. Rewrite the instruction so that an image editor carries it out
faithfully on this photograph: make the requested change explicit and concrete, and say that
everything not asked for (the person's identity, face, skin tone, build and the rest of the
scene) stays as it is. Keep the meaning of the instruction; add no new changes.
Do not name or guess the person's race, ethnicity, nationality, gender or age group.

Instruction: $instruction

Answer with one JSON object and nothing else: {"rewritten_instruction": "..."}
"""

INSTRUCTION_REWRITE = PromptTemplate(
    name="instruction_rewrite", version="1", text=REWRITE_TEXT, schema=RewriteAnswer,
    source="rewrite-then-edit (as KRIS-Bench and RISE-Bench users run it); wording of this project",
    reconstruction=True)


@dataclass(frozen=True)
class ConditionTemplate:
    """A template a condition asks, the kind of condition it serves, and how its answer becomes the
    text that reaches the editor (``text(value)``). ``per_instruction``: the answer depends on the
    instruction too (asked per (source image, instruction)), not only on the source image."""

    template: PromptTemplate
    kind: str
    text: Callable[[Mapping[str, Any]], str]
    per_instruction: bool


CONDITION_TEMPLATES: dict[str, ConditionTemplate] = {
    "paper_b_features": ConditionTemplate(PAPER_B_FEATURES, "feature_prompt",
                                          lambda v: str(v["identity_prompt"]), per_instruction=False),
    "instruction_rewrite": ConditionTemplate(INSTRUCTION_REWRITE, "rewrite",
                                             lambda v: str(v["rewritten_instruction"]), per_instruction=True),
}
DEFAULT_TEMPLATES = {"feature_prompt": "paper_b_features", "rewrite": "instruction_rewrite"}

# -- demographic category labels ---------------------------------------------------------------------

#: Words and phrases that name a demographic category, by attribute, matched as whole words,
#: case-insensitively. FairFace's race names are here with their common variants. Not labels:
#: skin shades ("deep brown", "fair"), which §4.5 asks for, and descriptions of features
#: ("masculine jawline", "youthful skin", "male-pattern baldness").
DEMOGRAPHIC_LABELS: dict[str, tuple[str, ...]] = {
    "race": ("east asian", "southeast asian", "south asian", "asian", "indian", "middle eastern", "latino",
             "latina", "latinx", "hispanic", "caucasian", "african american", "african", "arab", "arabic",
             "european", "ethnic", "ethnicity", "race", "racial", "mixed-race", "biracial"),
    "gender": ("man", "woman", "men", "women", "male", "female", "boy", "girl", "gentleman", "lady"),
    "age": ("elderly", "middle-aged", "teenager", "teenage", "senior citizen", "old man", "old woman",
            "young man", "young woman"),
}
#: "Black" and "White" name a race only when capitalised and not describing a colour of something.
COLOUR_RACE_WORDS = ("Black", "White")
COLOURED_THINGS = ("hair", "eyes", "eyebrows", "eyebrow", "beard", "stubble", "moustache", "mustache", "teeth",
                   "background", "shirt", "clothing", "top", "frames", "glasses", "strands", "streaks")

_LABEL_PATTERNS = {attribute: re.compile(r"(?<![\w-])(" + "|".join(re.escape(w) for w in sorted(words, key=len,
                                                                                            reverse=True))
                                         + r")(?![\w-])", re.IGNORECASE)
                   for attribute, words in DEMOGRAPHIC_LABELS.items()}
_COLOUR_RACE = re.compile(r"(?<![\w-])(" + "|".join(COLOUR_RACE_WORDS) + r")(?![\w-])(?!\s+(?:"
                          + "|".join(COLOURED_THINGS) + r")\b)")


def demographic_labels(text: str) -> list[tuple[str, str]]:
    """The demographic category labels in ``text`` as (attribute, label) pairs, in order of first use."""
    found: list[tuple[str, str]] = []
    for attribute, pattern in _LABEL_PATTERNS.items():
        found += [(attribute, m.group(1).lower()) for m in pattern.finditer(text)]
    found += [("race", m.group(1).lower()) for m in _COLOUR_RACE.finditer(text)]
    return list(dict.fromkeys(found))
