"""The ``creval`` report section: IF/VC/VQ/overall with CIs per category and dimension, the
layout of CREval Tables 2 and S1, the most-failed questions and example items with their answers.

Built from the per-item results the CREval metrics keep (:class:`~faceedit_bench.scoring.creval.scoring.ItemResult`):
an item is step k of a session. A metric's statistics use the items whose call for that metric
succeeded; the overall uses the items with all three. Items without a score are counted by outcome.
The JSON shape is documented in docs/creval.md.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.scoring.creval.questions import METRICS, OVERALL_WEIGHTS
from faceedit_bench.scoring.creval.scoring import ItemResult, overall

COLUMNS = (*METRICS, "overall")
#: Every CREval score x100 lies in 0..100: so do its intervals.
SCORE_BOUNDS = (0.0, 100.0)


def _stats(items: Sequence[ItemResult], confidence: float) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for m in METRICS:
        out[m] = summarize([100.0 * i.metrics[m].score for i in items
                            if m in i.metrics and i.metrics[m].score is not None], confidence, bounds=SCORE_BOUNDS)
    out["overall"] = summarize([100.0 * o for i in items if (o := i.overall) is not None], confidence,
                               bounds=SCORE_BOUNDS)
    return out


def table_rows(items: Sequence[ItemResult]) -> list[dict[str, Any]]:
    """CREval Table 2 / S1 layout: a row per dimension (grouped by category), a row per category and
    an overall row; columns IF, VC, VQ (means, x100) and avg = 0.4 IF + 0.4 VC + 0.2 VQ of the row's
    means, the paper's avg column."""

    def row(category: str, dimension: str, group: Sequence[ItemResult]) -> dict[str, Any]:
        means: dict[str, float | None] = {}
        for m in METRICS:
            scores = [i.metrics[m].score for i in group if m in i.metrics and i.metrics[m].score is not None]
            means[m] = 100.0 * sum(scores) / len(scores) if scores else None  # type: ignore[arg-type]
        return {"category": category, "dimension": dimension, "n": len(group), **means, "avg": overall(means)}

    by_category: dict[str, dict[str, list[ItemResult]]] = defaultdict(lambda: defaultdict(list))
    for i in items:
        by_category[i.category][i.dimension].append(i)
    rows = []
    for category in sorted(by_category):
        for dimension in sorted(by_category[category]):
            rows.append(row(category, dimension, by_category[category][dimension]))
        rows.append(row(category, "(all)", [i for d in by_category[category].values() for i in d]))
    rows.append(row("(all)", "(all)", list(items)))
    return rows


def most_failed(items: Iterable[ItemResult], limit: int = 20) -> list[dict[str, Any]]:
    """Questions by how often the judge found the edit failing them (a missing answer counts as failed)."""
    asked: Counter[tuple[str, str]] = Counter()
    failed: Counter[tuple[str, str]] = Counter()
    weights: dict[tuple[str, str], int] = {}
    for item in items:
        for score in item.metrics.values():
            for r in score.results:
                key = (r.metric, r.question)
                asked[key] += 1
                failed[key] += not r.correct
                weights[key] = r.weight
    rows = [{"metric": m, "question": q, "weight": weights[(m, q)], "asked": asked[(m, q)],
             "failed": failed[(m, q)], "fail_rate": failed[(m, q)] / asked[(m, q)]}
            for (m, q) in asked if failed[(m, q)]]
    rows.sort(key=lambda r: (-r["fail_rate"], -r["failed"], r["metric"], r["question"]))
    return rows[:limit]


def example(item: ItemResult) -> dict[str, Any]:
    return {
        "session_id": item.session_id, "k": item.k, "item_id": item.item_id, "category": item.category,
        "dimension": item.dimension,
        "images": {"original": item.images[0] if item.images else None,
                   "edited": item.images[-1] if item.images else None},
        "scores": {**{m: (None if (s := item.metrics.get(m)) is None or s.score is None else 100.0 * s.score)
                      for m in METRICS},
                   "overall": None if item.overall is None else 100.0 * item.overall},
        "outcomes": {m: s.outcome.value for m, s in item.metrics.items()},
        "questions": [{"metric": r.metric, "question_id": r.question_id, "question": r.question,
                       "expected": r.expected, "answer": r.answer, "explanation": r.explanation,
                       "weight": r.weight, "correct": r.correct}
                      for m in METRICS if m in item.metrics for r in item.metrics[m].results],
    }


def examples(items: Sequence[ItemResult], limit: int) -> list[dict[str, Any]]:
    """The worst and the best scored items (half each), then unscored ones if room is left."""
    scored = sorted((i for i in items if i.overall is not None), key=lambda i: (i.overall, i.session_id, i.k))
    worst = scored[:(limit + 1) // 2]
    best = [i for i in reversed(scored) if i not in worst][:limit - len(worst)]
    picked = worst + best
    picked += [i for i in items if i.overall is None][:max(0, limit - len(picked))]
    return [example(i) for i in picked]


def creval_section(items: Sequence[ItemResult], *, metric: str, extension: bool, confidence: float = 0.95,
                   max_examples: int = 6, max_failed: int = 20) -> dict[str, Any]:
    outcomes = {m: dict(sorted(Counter(i.metrics[m].outcome.value for i in items if m in i.metrics).items()))
                for m in METRICS}
    groups: dict[str, dict[str, list[ItemResult]]] = {"category": defaultdict(list), "dimension": defaultdict(list)}
    for i in items:
        groups["category"][i.category].append(i)
        groups["dimension"][i.dimension].append(i)
    return {
        "metric": metric,
        "extension": extension,
        "weights": dict(OVERALL_WEIGHTS),
        "confidence": confidence,
        "items": {"judged": len(items),
                  "scored": sum(1 for i in items if i.overall is not None),
                  "outcomes": outcomes},
        "missing_answers": {m: sum(i.metrics[m].missing for i in items if m in i.metrics) for m in METRICS},
        "unknown_answers": {m: sum(i.metrics[m].unknown for i in items if m in i.metrics) for m in METRICS},
        "overall": _stats(items, confidence),
        "by_category": {c: {"n": len(g), **_stats(g, confidence)} for c, g in sorted(groups["category"].items())},
        "by_dimension": {d: {"n": len(g), "category": g[0].category, **_stats(g, confidence)}
                         for d, g in sorted(groups["dimension"].items())},
        "table": table_rows(items),
        "most_failed": most_failed(items, max_failed),
        "examples": examples(items, max_examples),
    }


class CrevalReport:
    """The cross-session report of a CREval metric (the judge metric's ``report``)."""

    def __init__(self, metric: str = "creval", *, extension: bool = False, confidence: float = 0.95,
                 question_sets: Sequence[dict[str, Any]] = ()) -> None:
        self.metric, self.extension, self.confidence = metric, extension, confidence
        self.question_sets = list(question_sets)
        self.items: list[ItemResult] = []

    def add(self, judgment: Any) -> None:
        self.items.extend(judgment.detail or ())

    def sections(self) -> dict[str, Any]:
        section = creval_section(self.items, metric=self.metric, extension=self.extension, confidence=self.confidence)
        section["question_sets"] = self.question_sets or (
            [{"name": "taxonomy", "generator": "taxonomy", "note": "faceedit-bench questions show <testset>"}]
            if self.extension else [])
        return {self.metric: section}
