"""The position-swapped pairwise judge: two outputs for one source image and instruction, asked in both orders.

The judge sees the source image, the instruction and two outputs labelled "OUTPUT A" and "OUTPUT B", and
answers per criterion one of four labels (``A``, ``B``, ``both_good``, ``both_bad``, GenAI-Bench's four
votes) with an explanation. Every battle (x, y) is asked as (A=x, B=y) and as (A=y, B=x):

* both orders name the same winner, or the same tie: that is the verdict;
* they disagree: a tie, counted as a position inconsistency;
* an order whose answer is refused, failed or unparsable: the battle is *incomplete*; the order, its outcome
  and its reason are recorded and counted, and the battle gives no score (nothing is invented for it).

Position bias: among decisive answers of single orders (``A`` or ``B``), the share naming the first
position, per criterion, with an exact binomial test against 1/2.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict
from scipy.stats import binomtest

from faceedit_bench.api import JudgeAnswer, Outcome
from faceedit_bench.api.judging import PromptTemplate

CRITERIA = ("instruction_following", "identity_preservation", "overall")
LABELS = ("A", "B", "both_good", "both_bad")
Label = Literal["A", "B", "both_good", "both_bad"]
IMAGE_LABELS = ("SOURCE IMAGE:", "OUTPUT A:", "OUTPUT B:")


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")
    label: Label
    explanation: str


class PairwiseAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid")
    instruction_following: Verdict
    identity_preservation: Verdict
    overall: Verdict


TEMPLATE = PromptTemplate(
    name="arena-pairwise",
    version="1",
    reconstruction=True,
    source="[RECON] GenArena-style pairwise judging with GenAI-Bench's four labels; wording by faceedit_bench",
    schema=PairwiseAnswer,
    text="""You compare two edits of the same face photo. The first image is the SOURCE IMAGE; OUTPUT A and
OUTPUT B are two editors' results for this instruction:

"$instruction"

Judge each criterion separately:
- instruction_following: which output carries out the instruction better (and changes nothing it did not ask);
- identity_preservation: which output keeps the person recognisably the same person as in the source;
- overall: which output you would rather receive for this instruction.

For each criterion answer one label: "A" (A is better), "B" (B is better), "both_good" (both are good and
equally so), "both_bad" (both are bad and equally so), with a one- or two-sentence explanation. The order of
the outputs says nothing about their quality. Answer with one JSON object:
{"instruction_following": {"label": "...", "explanation": "..."},
 "identity_preservation": {"label": "...", "explanation": "..."},
 "overall": {"label": "...", "explanation": "..."}}""",
)


@dataclass(frozen=True)
class SwappedVerdict:
    """One criterion of one battle between x and y, from both orders."""

    status: str  # "decided" | "incomplete"
    score: float | None  # x's score: 1, 0.5, 0; None when incomplete
    label: str | None  # "x", "y", "both_good", "both_bad", "inconsistent"; None when incomplete
    position_inconsistent: bool = False
    missing: tuple[dict, ...] = field(default_factory=tuple)  # the failed orders: order, outcome, reason


def _as_xy(label: str, x_first: bool) -> str:
    if label in ("A", "B"):
        return "x" if (label == "A") == x_first else "y"
    return label


_SCORE = {"x": 1.0, "y": 0.0, "both_good": 0.5, "both_bad": 0.5, "inconsistent": 0.5}


def combine(x_first: JudgeAnswer, y_first: JudgeAnswer, criterion: str) -> SwappedVerdict:
    """The verdict on x vs y from the answer with x as A (``x_first``) and the one with y as A."""
    missing = tuple({"order": order, "outcome": a.outcome.value, "reason": a.reason or ""}
                    for order, a in (("x_first", x_first), ("y_first", y_first))
                    if a.outcome is not Outcome.OK or not a.value)
    if missing:
        return SwappedVerdict("incomplete", None, None, missing=missing)
    first = _as_xy(x_first.value[criterion]["label"], True)
    second = _as_xy(y_first.value[criterion]["label"], False)
    label = first if first == second else "inconsistent"
    return SwappedVerdict("decided", _SCORE[label], label, position_inconsistent=label == "inconsistent")


async def ask_battle(judge, source: str, x: str, y: str, instruction: str, seed: int = 0
                     ) -> tuple[JudgeAnswer, JudgeAnswer]:
    """Both orders of one battle (stored image hashes), through a :class:`JudgeSession`."""
    return tuple(await gather_all(
        judge.ask(TEMPLATE, (source, x, y), seed, image_labels=IMAGE_LABELS, instruction=instruction),
        judge.ask(TEMPLATE, (source, y, x), seed, image_labels=IMAGE_LABELS, instruction=instruction)))


async def gather_all(*calls: Any) -> list[Any]:
    """Every call's result, or the first call's error once all have ended: none is left running, and no
    error unread, when one fails (a dead endpoint fails them all)."""
    results = await asyncio.gather(*calls, return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException):
            raise result
    return results


def position_bias(answers: Iterable[JudgeAnswer]) -> dict[str, dict]:
    """Per criterion: decisive answers (A or B), the share naming A (the first position), and the exact
    binomial p-value against 1/2. Each order's answer counts once; failed answers are left out and counted."""
    answers = list(answers)
    out = {}
    for criterion in CRITERIA:
        labels = Counter(a.value[criterion]["label"] for a in answers if a.outcome is Outcome.OK and a.value)
        decisive = labels["A"] + labels["B"]
        out[criterion] = {
            "answers": sum(labels.values()), "decisive": decisive, "first_position_wins": labels["A"],
            "first_position_share": labels["A"] / decisive if decisive else None,
            "p_value": binomtest(labels["A"], decisive, 0.5).pvalue if decisive else None,
            "labels": {k: labels[k] for k in LABELS},
        }
    failed = Counter(a.outcome.value for a in answers if a.outcome is not Outcome.OK or not a.value)
    return {"criteria": out, "failed_answers": dict(failed)}


def summarize_verdicts(verdicts: Iterable[SwappedVerdict]) -> Mapping[str, int]:
    """Counts: decided, incomplete, position-inconsistent, and each label."""
    c = Counter()
    for v in verdicts:
        c[v.status] += 1
        if v.label:
            c[f"label_{v.label}"] += 1
        c["position_inconsistent"] += v.position_inconsistent
    return {"decided": c["decided"], "incomplete": c["incomplete"], "position_inconsistent": c["position_inconsistent"],
            **{k: c[f"label_{k}"] for k in ("x", "y", "both_good", "both_bad", "inconsistent")}}
