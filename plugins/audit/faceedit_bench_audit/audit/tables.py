"""Paper (b)'s audit tables from the rubric's items (METHODOLOGY §4.3, §4.6; docs/audit.md).

* ``axes``: the mean of every rubric axis with its Student-t CI (paper Table 3);
* ``rates``: edit success, soft erasure, race and gender change, skin lightening and darkening,
  each with its Wilson CI, under the configured thresholds (Table 16);
* ``groups``: the same per race, gender and age bin (Table 17, Fig. 4), with the max - min rate
  disparity in percentage points and its bootstrap CI, the axes' k-group tests (Kruskal-Wallis)
  and the hard refusals beside soft erasure;
* ``disparity``: the headline disparities (by ``analysis.audit.disparity_by``, race by default);
* ``one_vs_rest``: Mann-Whitney U of the focus group (White) against all others, per axis;
* ``prompts``: means and rates per prompt category, subcategory and prompt id;
* ``aging``: aging accuracy on the aging prompt; ``panel``: review flags per axis;
* ``panel_sensitivity``: the rates under each rounding of the panel rule (analysis/panel_sensitivity.py);
* ``examples``: a few edits per group with their scores, for the report's grid.

Only ``ok`` answers carry scores. Refused, unparsable and not-asked items are counted by
outcome and reason, never scored. The statistics are those of ``rates``, ``group_tests`` and
``statistics``.

Directions come from the rubric's registration (each axis's ``JudgeMetric.Value``): higher is better for edit
success, lower for race and gender change, and neither for skin tone, age change and aging accuracy,
whose ideal is the middle (3): their group comparisons name no best or worst group and give each
group's deviation from 3 instead. A rate's direction follows from its axis and rule
(``Threshold.rate_direction``); the max − min of a rate is better small.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from faceedit_bench.api import ConfigError, Outcome
from faceedit_bench.api.statistics import (
    Threshold,
    compare_k_groups,
    summarize,
)
from faceedit_bench_audit.audit.items import AuditCollector, AuditItem
from faceedit_bench_audit.audit.rubric import AGING_PROMPT_IDS, AXES, RUBRIC_METRIC
from faceedit_bench_audit.audit.sensitivity import panel_sensitivity
from faceedit_bench_audit.audit.settings import PAPER_B_THRESHOLDS, AuditConf, audit_rule

#: The fields of one rate the leaderboard and the report read (Threshold.rate gives more).
RATE_FIELDS = ("rate", "ci_low", "ci_high", "ci_method", "n", "n_identities", "count", "percent", "rule", "reason")
#: The rubric's values as registered: direction, bounds (1-5) and ideal of every axis.
REGISTERED = {v.name: v for v in RUBRIC_METRIC.values}
#: Aging accuracy's rates: 3 is correct, below under-aged, above over-aged.
_AGING = {"correct_rate": True, "under_aged_rate": False, "over_aged_rate": False}


def _reading(values: Mapping[str, Any], axis: str) -> dict[str, Any]:
    """How a test reads an axis: its registered direction, bounds and ideal."""
    v = values.get(axis)
    return {"higher_is_better": getattr(v, "higher_is_better", None), "bounds": getattr(v, "bounds", None),
            "ideal": getattr(v, "ideal", None)}


def audit_rules(conf: AuditConf) -> dict[str, tuple[str, Threshold]]:
    """Rate name -> (axis, Threshold) from the configuration; an unknown axis is a ConfigError."""
    rules = {}
    for name, text in conf.thresholds.items():
        axis, op, value = audit_rule(text)
        if axis not in AXES:
            raise ConfigError(f"analysis.audit.thresholds.{name}={text!r} names the axis {axis!r}; the rubric's "
                              f"axes are {', '.join(AXES)}")
        rules[name] = (axis, Threshold(op, value))  # type: ignore[arg-type]
    return rules


def rate(items: Sequence[AuditItem], axis: str, threshold: Threshold, confidence: float,
         values: Mapping[str, Any] = REGISTERED) -> dict[str, Any]:
    scored = [(float(v), i.face_id) for i in items if (v := i.scores.get(axis)) is not None]
    # the edits of one face are correlated: the face (one person in the portrait grid) is the unit
    full = threshold.rate([v for v, _ in scored], confidence=confidence, what=axis,
                          clusters=[face for _, face in scored])
    reading = _reading(values, axis)
    return {"axis": axis, **{k: full[k] for k in RATE_FIELDS},
            "higher_is_better": threshold.rate_direction(reading["higher_is_better"], reading["ideal"])}


def rates(items: Sequence[AuditItem], rules: Mapping[str, tuple[str, Threshold]], confidence: float,
          values: Mapping[str, Any] = REGISTERED) -> dict[str, Any]:
    return {name: rate(items, axis, t, confidence, values) for name, (axis, t) in rules.items()}


def axis_means(items: Sequence[AuditItem], confidence: float, values: Mapping[str, Any] = REGISTERED) -> dict[str, Any]:
    out = {}
    for axis in AXES:
        scored = [(float(v), i.face_id) for i in items if (v := i.scores.get(axis)) is not None]
        out[axis] = summarize([v for v, _ in scored], confidence, bounds=_reading(values, axis)["bounds"],
                              clusters=[face for _, face in scored])
    return out


def audit_section(collector: AuditCollector, conf: AuditConf, *, confidence: float = 0.95, n_resamples: int = 9999,
                  seed: int = 0, values: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The report's ``audit`` section (shape in docs/audit.md); ``values`` are the asked rubric's values
    (direction, bounds, ideal per axis), the builtin registration's by default."""
    values = values or REGISTERED
    rules = audit_rules(conf)
    items = collector.items
    scored = collector.judged_ok
    boot = {"confidence": confidence, "n_resamples": n_resamples, "seed": seed}
    tests = {attribute: _k_group_tests(scored, attribute, conf.focus.get(attribute), boot, values)
             for attribute in dict.fromkeys([*conf.attributes, *conf.focus])}
    groups = {attribute: _group_tables(scored, collector, attribute, rules, boot, values, tests[attribute])
              for attribute in conf.attributes}
    headline = groups.get(conf.disparity_by, {}).get("disparity", {})
    return {
        "metric": collector.metric,
        "thresholds": {name: {"axis": axis, "rule": t.label} for name, (axis, t) in rules.items()},
        "thresholds_source": "paper (b)" if dict(conf.thresholds) == PAPER_B_THRESHOLDS else "configured",
        "confidence": confidence,
        "items": len(items), "scored": len(scored),
        "judge_outcomes": dict(sorted(Counter(i.outcome for i in items).items())),
        "not_scored": _reasons(i for i in items if i.outcome != Outcome.OK.value),
        "axes": axis_means(scored, confidence, values),
        "rates": rates(scored, rules, confidence, values),
        "groups": groups,
        "disparity": headline,
        "one_vs_rest": {f"{a}={focus}": _versus(scored, a, focus, tests[a])
                        for a, focus in conf.focus.items()},
        "prompts": _prompt_tables(scored, collector, rules, confidence, values),
        "aging": _aging(scored, confidence, values),
        "panel": _panel(items),
        "panel_sensitivity": panel_sensitivity(scored, rules, confidence),
        "examples": _examples(scored, conf.disparity_by, conf.examples_per_group),
        "edits": collector.describe_edits(),
    }


def _labelled(items: Sequence[AuditItem], attribute: str) -> dict[str, list[AuditItem]]:
    out: dict[str, list[AuditItem]] = {}
    for item in items:
        label = item.labels.get(attribute)
        if label is not None:
            out.setdefault(str(label), []).append(item)
    return dict(sorted(out.items()))


def _group_tables(scored: Sequence[AuditItem], collector: AuditCollector, attribute: str,
                  rules: Mapping[str, tuple[str, Threshold]], boot: Mapping[str, Any],
                  values: Mapping[str, Any], tests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    by = _labelled(scored, attribute)
    edits = collector.edits.get(attribute, {})
    confidence = boot["confidence"]
    labels: dict[str, Any] = {}
    for label in sorted(set(by) | set(edits)):
        group = by.get(label, [])
        outcomes = dict(sorted(edits.get(label, Counter()).items()))
        total = sum(outcomes.values())
        refused = Threshold(">=", 1).rate([1.0] * outcomes.get(Outcome.REFUSED.value, 0)
                                          + [0.0] * (total - outcomes.get(Outcome.REFUSED.value, 0)),
                                          confidence=confidence, what="hard refusals")
        labels[label] = {"n": len(group), "axes": axis_means(group, confidence, values),
                         "rates": rates(group, rules, confidence, values), "edits": outcomes,
                         "hard_refusal_rate": {**{k: refused[k] for k in RATE_FIELDS}, "higher_is_better": False}}
    disparity = {name: _rate_disparity(by, attribute, name, axis, t, boot, values) for name, (axis, t) in rules.items()}
    return {"labels": labels, "disparity": disparity,
            "tests": {axis: {"kruskal": t["kruskal"], "mean_disparity": t["disparity"], "left_out": t["left_out"]}
                      for axis, t in tests.items()},
            "unlabelled_edits": collector.unlabelled.get(attribute, 0)}


def _rate_disparity(by: Mapping[str, Sequence[AuditItem]], attribute: str, name: str, axis: str,
                    threshold: Threshold, boot: Mapping[str, Any], registered: Mapping[str, Any]) -> dict[str, Any]:
    """max - min of the group rates in percentage points; its CI resamples within groups (the
    rate of a group is the mean of its 0/1 hits, so this is compare_k_groups on the hits)."""
    hits = {g: threshold.hits(np.asarray(values, dtype=float)).astype(float)
            for g, items in by.items() if (values := [float(v) for i in items if (v := i.scores.get(axis)) is not None])}
    # max - min is a gap: smaller is better whatever the rate's direction; the best and worst group follow the rate
    reading = _reading(registered, axis)
    direction = threshold.rate_direction(reading["higher_is_better"], reading["ideal"])
    result = compare_k_groups(hits, name=f"audit/{name}/{attribute}", higher_is_better=direction, bounds=(0.0, 1.0),
                              **boot)
    d = result["disparity"]
    pp = (lambda x: None if x is None else 100.0 * x)
    return {"max_minus_min_pp": pp(d["value"]), "ci_low": pp(d["ci_low"]), "ci_high": pp(d["ci_high"]),
            "by": attribute, "max_group": d["max_group"], "min_group": d["min_group"], "rule": threshold.label,
            "best_group": d["best_group"], "worst_group": d["worst_group"], "rate_higher_is_better": direction,
            "axis": axis, "ci_method": d["ci_method"], "n_resamples": d["n_resamples"],
            "groups": {g: int(x.size) for g, x in hits.items()}, "left_out": result["left_out"],
            "reason": d["reason"], "ci_reason": d["ci_reason"]}


def _k_group_tests(scored: Sequence[AuditItem], attribute: str, focus: str | None, boot: Mapping[str, Any],
                   values: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """Per axis, the groups of ``attribute`` compared (compare_k_groups), each with ``focus`` against the rest
    where a scored edit has it: one comparison serves the group tables and the one-vs-rest tests."""
    by = _labelled(scored, attribute)
    return {axis: compare_k_groups({g: [float(v) for i in items if (v := i.scores.get(axis)) is not None]
                                    for g, items in by.items()}, name=f"audit/{axis}/{attribute}",
                                   focus=focus if focus in by else None, **_reading(values, axis), **boot)
            for axis in AXES}


def _versus(scored: Sequence[AuditItem], attribute: str, focus: str,
            tests: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    by = _labelled(scored, attribute)
    if focus not in by:
        return {"reason": f"no scored edit has {attribute}={focus}"}
    return {axis: tests[axis]["vs_rest"] for axis in AXES if any(i.scores.get(axis) is not None for i in by[focus])}


def _prompt_tables(scored: Sequence[AuditItem], collector: AuditCollector, rules: Mapping[str, tuple[str, Threshold]],
                   confidence: float, values: Mapping[str, Any]) -> dict[str, Any]:
    keys = {"category": lambda i: (i.prompt_category or "").split("/")[0] or None,
            "subcategory": lambda i: i.prompt_category or None,
            "prompt_id": lambda i: i.prompt_id or i.session_id}
    out: dict[str, Any] = {}
    for kind, key in keys.items():
        buckets: dict[str, list[AuditItem]] = {}
        for item in scored:
            if (label := key(item)) is not None:
                buckets.setdefault(label, []).append(item)
        out[kind] = {label: {"n": len(group), "axes": axis_means(group, confidence, values),
                             "rates": rates(group, rules, confidence, values)}
                     for label, group in sorted(buckets.items())}
    return out


def _aging(scored: Sequence[AuditItem], confidence: float, values: Mapping[str, Any]) -> dict[str, Any]:
    scores = [float(v) for i in scored if i.prompt_id in AGING_PROMPT_IDS
              and (v := i.scores.get("aging_accuracy")) is not None]
    return {"prompt_ids": sorted(AGING_PROMPT_IDS),
            "summary": summarize(scores, confidence, bounds=_reading(values, "aging_accuracy")["bounds"]),
            "distribution": {str(s): sum(1 for v in scores if v == s) for s in range(1, 6)},
            "correct_rate": _share(scores, lambda v: v == 3, confidence, _AGING["correct_rate"]),
            "under_aged_rate": _share(scores, lambda v: v <= 2, confidence, _AGING["under_aged_rate"]),
            "over_aged_rate": _share(scores, lambda v: v >= 4, confidence, _AGING["over_aged_rate"])}


def _share(values: Sequence[float], hit: Any, confidence: float, higher_is_better: bool) -> dict[str, Any]:
    r = Threshold(">=", 1).rate([1.0 if hit(v) else 0.0 for v in values], confidence=confidence)
    return {**{k: r[k] for k in RATE_FIELDS}, "higher_is_better": higher_is_better}


def _panel(items: Sequence[AuditItem]) -> dict[str, Any]:
    status = Counter(i.panel_status for i in items if i.panel_status)
    return {"status": dict(sorted(status.items())),
            "flags": {axis: sum(1 for i in items if axis in i.flags) for axis in AXES} if status else {},
            "flagged_items": sum(1 for i in items if i.flags)}


def _examples(scored: Sequence[AuditItem], attribute: str, per_group: int) -> dict[str, list[dict[str, Any]]]:
    """Up to ``per_group`` edits of each group, of different faces where it has them, in a stable
    order (face, prompt), with their scores."""
    out: dict[str, list[dict[str, Any]]] = {}
    for label, group in _labelled(scored, attribute).items():
        ordered = sorted(group, key=lambda i: (i.face_id, i.prompt_id or i.session_id, i.k))
        firsts = list({i.face_id: i for i in reversed(ordered)}.values())[::-1]  # each face's first edit
        picks = (firsts + [i for i in ordered if i not in firsts])[:per_group]
        out[label] = [{"face_id": i.face_id, "session_id": i.session_id, "k": i.k, "prompt_id": i.prompt_id,
                       "source_hash": i.source_hash, "output_hash": i.output_hash,
                       "scores": {a: v for a, v in i.scores.items() if v is not None}} for i in picks]
    return out


def _reasons(items: Any) -> dict[str, int]:
    return dict(sorted(Counter(f"{i.outcome}: {i.reason}" if i.reason else i.outcome for i in items).items()))
