"""The ``creval`` report section: IF/VC/VQ/overall with CIs per category and dimension, the layout of
CREval Tables 2 and S1, the most-failed questions and example items with their answers.

Built from the per-item results the CREval metrics keep (:class:`~faceedit_bench_creval.scoring.ItemResult`):
an item is step k of a session, judged, or failed because its edit gave no image. Every figure follows
the metric's declared failure policy (:mod:`~faceedit_bench_creval.policy`), and every figure
of one table stands on the same items: a row's IF, VC, VQ and overall, and its ``n``, are over the items
that rule scores. The other rule's figures stand beside them (``other_rule``), labelled, with their
counts; the two are never mixed. The JSON shape is documented in docs/creval.md.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from faceedit_bench.api.statistics import summarize
from faceedit_bench_creval import policy
from faceedit_bench_creval.questions import METRICS, OVERALL_WEIGHTS
from faceedit_bench_creval.scoring import ItemResult, overall

COLUMNS = (*METRICS, "overall")
#: Every CREval score x100 lies in 0..100: so do its intervals.
SCORE_BOUNDS = (0.0, 100.0)


def _scored(items: Iterable[ItemResult], rule: str) -> list[dict[str, float]]:
    return [s for i in items if (s := policy.item_scores(i, rule)) is not None]


def _stats(items: Sequence[ItemResult], rule: str, confidence: float) -> dict[str, Any]:
    scored = _scored(items, rule)
    return {c: summarize([100.0 * s[c] for s in scored], confidence, bounds=SCORE_BOUNDS) for c in COLUMNS}


def _table_row(category: str, dimension: str, group: Sequence[ItemResult], rule: str) -> dict[str, Any]:
    scored = _scored(group, rule)
    means: dict[str, float | None] = {m: (100.0 * sum(s[m] for s in scored) / len(scored) if scored else None)
                                      for m in METRICS}
    return {"category": category, "dimension": dimension, "n": len(scored),
            "failed": sum(1 for i in group if i.failed), **means, "avg": overall(means)}


def table_rows(items: Sequence[ItemResult], rule: str = policy.EXCLUDE) -> list[dict[str, Any]]:
    """CREval Table 2 / S1 layout: a row per dimension (grouped by category), a row per category and an
    overall row; columns IF, VC, VQ (means over the row's items scored under ``rule``, x100) and
    avg = 0.4 IF + 0.4 VC + 0.2 VQ of the row's means, the paper's avg column (over the same items, it
    equals the mean of the items' overall). ``n``: the items scored; ``failed``: items with a failure."""
    by_category: dict[str, dict[str, list[ItemResult]]] = defaultdict(lambda: defaultdict(list))
    for i in items:
        by_category[i.category][i.dimension].append(i)
    rows = []
    for category in sorted(by_category):
        for dimension in sorted(by_category[category]):
            rows.append(_table_row(category, dimension, by_category[category][dimension], rule))
        rows.append(_table_row(category, "(all)", [i for d in by_category[category].values() for i in d], rule))
    rows.append(_table_row("(all)", "(all)", list(items), rule))
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
                   "edited": item.images[-1] if len(item.images) > 1 else None},
        "scores": {**{m: (None if (s := item.metrics.get(m)) is None or s.score is None else 100.0 * s.score)
                      for m in METRICS},
                   "overall": None if item.overall is None else 100.0 * item.overall},
        "outcomes": {m: item.failure or s.outcome.value for m, s in item.metrics.items()} if item.metrics
        else dict.fromkeys(METRICS, item.failure),
        "questions": [{"metric": r.metric, "question_id": r.question_id, "question": r.question,
                       "expected": r.expected, "answer": r.answer, "explanation": r.explanation,
                       "weight": r.weight, "correct": r.correct, "in_choices": r.in_choices}
                      for m in METRICS if m in item.metrics for r in item.metrics[m].results],
    }


def examples(items: Sequence[ItemResult], limit: int) -> list[dict[str, Any]]:
    """The worst and the best scored items (half each), then failed ones if room is left."""
    scored = sorted((i for i in items if i.overall is not None), key=lambda i: (i.overall, i.session_id, i.k))
    worst = scored[:(limit + 1) // 2]
    best = [i for i in reversed(scored) if i not in worst][:limit - len(worst)]
    picked = worst + best
    picked += [i for i in items if i.overall is None][:max(0, limit - len(picked))]
    return [example(i) for i in picked]


def _answers(items: Sequence[ItemResult], field: str) -> dict[str, int]:
    return {m: sum(getattr(i.metrics[m], field) for i in items if m in i.metrics) for m in METRICS}


def _figures(items: Sequence[ItemResult], rule: str, confidence: float) -> dict[str, Any]:
    """Every figure of one rule: overall, per category and dimension, and the table, each with its n."""
    groups: dict[str, dict[str, list[ItemResult]]] = {"category": defaultdict(list), "dimension": defaultdict(list)}
    for i in items:
        groups["category"][i.category].append(i)
        groups["dimension"][i.dimension].append(i)
    n = len(_scored(items, rule))
    return {
        "on_failure": rule,
        "rule": policy.RULES[rule],
        "scored": n,
        "zeroed" if rule == policy.ZERO else "left_out": sum(1 for i in items if i.failed),
        "overall": _stats(items, rule, confidence),
        "by_category": {c: {"n": len(_scored(g, rule)), **_stats(g, rule, confidence)}
                        for c, g in sorted(groups["category"].items())},
        "by_dimension": {d: {"n": len(_scored(g, rule)), "category": g[0].category, **_stats(g, rule, confidence)}
                         for d, g in sorted(groups["dimension"].items())},
        "table": table_rows(items, rule),
    }


def creval_section(items: Sequence[ItemResult], *, metric: str, extension: bool, confidence: float = 0.95,
                   on_failure: str = policy.EXCLUDE, not_scored: dict[str, int] | None = None,
                   max_examples: int = 6, max_failed: int = 20) -> dict[str, Any]:
    """The section of ``items`` with every headline figure under ``on_failure`` and the other rule's beside."""
    judged = [i for i in items if not i.failure]
    headline = _figures(items, on_failure, confidence)
    other = _figures(items, policy.other(on_failure), confidence)
    return {
        "metric": metric,
        "extension": extension,
        "weights": dict(OVERALL_WEIGHTS),
        "confidence": confidence,
        "on_failure": on_failure,
        "rule": policy.RULES[on_failure],
        "items": {"total": len(items), "judged": len(judged), "scored": headline["scored"],
                  "failed": sum(1 for i in items if i.failed),
                  "edit_failed": dict(sorted(Counter(i.failure for i in items if i.failure).items())),
                  "failures": policy.failure_counts(items),
                  "outcomes": {m: dict(sorted(Counter(i.metrics[m].outcome.value for i in judged
                                                      if m in i.metrics).items())) for m in METRICS},
                  "not_scored": dict(sorted((not_scored or {}).items()))},
        "missing_answers": _answers(judged, "missing"),
        "unknown_answers": _answers(judged, "unknown"),
        "out_of_choice_answers": _answers(judged, "out_of_choice"),
        "normalised_answers": _answers(judged, "normalised"),
        **{k: headline[k] for k in ("overall", "by_category", "by_dimension", "table")},
        "other_rule": other,
        "most_failed": most_failed(judged, max_failed),
        "examples": examples(items, max_examples),
    }


class CrevalCollector:
    """The collector of a CREval metric's report section (``creval``, ``creval_face``). Every session of the
    run reaches it (:meth:`add_session`): judged ones with their items, ones whose edit gave no image as failed
    items (``failed_items``, from the metric), the others counted by why they have no score."""

    def __init__(self, metric: str = "creval", *, extension: bool = False, confidence: float = 0.95,
                 question_sets: Sequence[dict[str, Any]] = (), on_failure: str = policy.EXCLUDE,
                 failed_items: Callable[..., Sequence[ItemResult]] | None = None) -> None:
        self.metric, self.extension, self.confidence = metric, extension, confidence
        self.question_sets = list(question_sets)
        self.on_failure = on_failure
        self.failed_items = failed_items
        self.items: list[ItemResult] = []
        self.not_scored: Counter[str] = Counter()

    def add_session(self, result: Any) -> None:
        judgment = result.judged.metrics.get(self.metric) if result.judged is not None else None
        if judgment is not None and result.excluded is None:
            self.items.extend(judgment.detail or ())
        elif (result.excluded or "").startswith(policy.EDIT_FAILURE) and result.judged is None \
                and self.failed_items is not None:
            base = result.image_hashes[0] if result.image_hashes else None
            self.items.extend(self.failed_items(result.session, result.excluded, base))
        else:
            self.not_scored[result.excluded or "not_judged"] += 1

    def finish(self) -> dict[str, Any]:
        section = creval_section(self.items, metric=self.metric, extension=self.extension, confidence=self.confidence,
                                 on_failure=self.on_failure, not_scored=dict(self.not_scored))
        section["question_sets"] = self.question_sets or (
            [{"name": "taxonomy", "generator": "taxonomy", "note": "faceedit-bench questions show <testset>"}]
            if self.extension else [])
        return section
