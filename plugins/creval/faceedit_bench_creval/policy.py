"""What a CREval item without a usable answer counts as: the metric's declared failure policy.

An item fails when its edit returned no image (the editor refused, failed, or the image is missing)
or when an answer call for one of its metrics gave nothing usable (api_error, refused, parse_error,
failed). CREval scores such an item 0: its ``code/answer_with_gpt4o.py`` saves ``final_score`` 0.0
with the error, and ``code/avg.py`` averages every saved file. The two policies:

* ``zero``: CREval's rule. A failed metric scores 0, and an item without an edited image scores 0 in
  every metric; every item is in every figure.
* ``exclude``: an item with any failure is left out of every figure (IF, VC, VQ and overall alike, so
  the overall combines the same items as its parts), and counted.

Never mixed: one rule decides every figure of a table, the session values and the sessions table; the
report shows the other rule's figures beside them, labelled, with the counts. Items that were never
asked (no question for the step) or not judged for a reason of the run (the budget, a stopped judge)
are no failures of the editor: they are left out under both rules, and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping

from faceedit_bench_creval.questions import METRICS
from faceedit_bench_creval.scoring import ItemResult, overall

ZERO, EXCLUDE = "zero", "exclude"
ON_FAILURE = (ZERO, EXCLUDE)
#: What each rule means, for reports and value descriptions.
RULES = {
    ZERO: "CREval's rule: a failed answer call, an editor refusal or failure and a missing edited image score 0 "
          "(code/answer_with_gpt4o.py saves final_score 0.0, code/avg.py averages it)",
    EXCLUDE: "items with a failed answer call or no edited image are left out of every figure, and counted",
}
#: Exclusion reasons of a session whose edit gave no image (faceedit_bench.scoring.identity): ``step_<outcome>``.
EDIT_FAILURE = "step_"


def other(rule: str) -> str:
    return EXCLUDE if rule == ZERO else ZERO


def check_rule(rule: str, where: str) -> str:
    if rule not in ON_FAILURE:
        raise ValueError(f"{where}: on_failure must be zero (CREval's rule: failures score 0) or exclude (failures "
                         f"are left out and counted), not {rule!r}")
    return rule


def item_scores(item: ItemResult, rule: str) -> dict[str, float] | None:
    """IF, VC, VQ and overall of ``item`` in [0, 1] under ``rule``; None when the rule leaves it out."""
    if item.failed and rule == EXCLUDE:
        return None
    scores = {m: 0.0 if item.failure or m not in item.metrics or item.metrics[m].score is None
              else float(item.metrics[m].score)  # type: ignore[arg-type]
              for m in METRICS}
    return {**scores, "overall": overall(scores)}  # type: ignore[dict-item]


def failure_counts(items: Iterable[ItemResult]) -> dict[str, dict[str, int]]:
    """Failed items by metric and why (``step_refused``, ``api_error`` ...)."""
    out: dict[str, Counter[str]] = {m: Counter() for m in METRICS}
    for item in items:
        for metric, why in item.failed.items():
            out[metric][why] += 1
    return {m: dict(sorted(c.items())) for m, c in out.items()}


def session_values(items: Iterable[ItemResult], name: str, rule: str) -> dict[str, float | None]:
    """A session's values (x100, mean over its items) under ``rule``: undefined when the rule leaves any item
    out, so that every value of the session stands on the same items."""
    scored = [item_scores(i, rule) for i in items]
    keys: Mapping[str, str] = {**{m: f"{name}_{m.lower()}" for m in METRICS}, "overall": name}
    if not scored or any(s is None for s in scored):
        return dict.fromkeys(keys.values())
    return {value: 100.0 * sum(s[key] for s in scored) / len(scored)  # type: ignore[index]
            for key, value in keys.items()}
