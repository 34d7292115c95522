"""The judge metric: after every edit step the judge says whether the person wears glasses."""

from pydantic import BaseModel, ConfigDict

from faceedit_bench.api.judging import JudgeMetric, PromptTemplate


class GlassesAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")

    glasses: bool
    reasoning: str


GLASSES_PROMPT = PromptTemplate(
    name="eyewear-glasses",
    version="1",  # change it whenever the wording, the schema or how answers become values change
    text="Step $k of session $session_id. The person was asked: $instruction\n"
         "Does the person in the image wear glasses (spectacles or sunglasses)? "
         'Answer JSON: {"glasses": true or false, "reasoning": "..."}',
    schema=GlassesAnswer,
    source="faceedit-bench-eyewear, an example protocol",
)

GLASSES = JudgeMetric(
    name="glasses", template=GLASSES_PROMPT, images=("current",), over="steps",
    description="Does the person wear glasses after the step?",
    values=(JudgeMetric.Value("glasses_worn", False, "share", "Share of a session's steps that show glasses.",
                       point=lambda answer: 1.0 if answer["glasses"] else 0.0, label="Glasses worn",
                       bounds=(0.0, 1.0)),),
)
