"""``paper_b_features``: paper (b)'s feature-prompt mitigation (METHODOLOGY §4.5), a prompt-condition template
(:mod:`faceedit_bench.scoring.judge.condition_templates`). The judge sees the source portrait and describes 7
observable dimensions, then writes ``identity_prompt``: one or two sentences that begin "Maintain the
person's ...". That sentence is what the condition joins to the instruction. The wording is ours; the
dimensions and the JSON fields follow §4.5. The judge is told to avoid demographic category labels, and some
answers still contain them (§4.5 saw "East Asian"): such a text is flagged like any condition's.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field, field_validator

from faceedit_bench.api.judging import ConditionTemplate, PromptTemplate

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

#: The condition template registered as ``paper_b_features`` (builtin judge metrics' plugin).
FEATURES_CONDITION = ConditionTemplate(PAPER_B_FEATURES, "feature_prompt", lambda v: str(v["identity_prompt"]),
                                       per_instruction=False)
