"""Prompt-condition templates (faceedit_bench/run/condition_prompts.py): a judge prompt that writes the text an editor
receives under a condition, registered with the ``faceedit_register_condition_templates`` hook.

* ``instruction_rewrite``: "rewrite-then-edit". The judge sees the source image and the instruction
  and returns ``rewritten_instruction``, which replaces the instruction.
* a protocol's own, registered by its package (e.g. a feature prompt that describes the source portrait).

The judge is told to avoid demographic category labels, and some answers still contain them.
:func:`demographic_labels` finds them with the word list below. A text that contains one is flagged, and the
flags are counted in the report. The condition's ``flagged`` setting decides whether the text is still used
(``keep``) or the edit ends as ``prompt_failed`` (``exclude``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, Field

from faceedit_bench.scoring.judge.service import PromptTemplate

#: The kinds of condition a template can serve (setting_checks.py's CONDITION_KEYS, baseline aside).
KINDS = ("feature_prompt", "rewrite")


@dataclass(frozen=True)
class ConditionTemplate:
    """A template a condition asks, the kind of condition it serves, and how its answer becomes the
    text that reaches the editor (``text(value)``). ``per_instruction``: the answer depends on the
    instruction too (asked per (source image, instruction)), not only on the source image."""

    template: PromptTemplate
    kind: str
    text: Callable[[Mapping[str, Any]], str]
    per_instruction: bool

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"condition template {self.template.name}: kind {self.kind!r}; use one of "
                             f"{', '.join(KINDS)}")


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

#: The condition template registered as ``instruction_rewrite`` (builtin judge metrics' plugin).
REWRITE_CONDITION = ConditionTemplate(INSTRUCTION_REWRITE, "rewrite", lambda v: str(v["rewritten_instruction"]),
                                      per_instruction=True)


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
