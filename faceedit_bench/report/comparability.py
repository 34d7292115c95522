"""What makes two runs' numbers incomparable (test set, embedder, judge, dataset, schema), stated loudly."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import combinations
from typing import Any

from faceedit_bench.keys import fingerprint, portable
from faceedit_bench.records import version_text
from faceedit_bench.report.part_views import cost_of, run_of


def _identity(component: Mapping[str, Any] | None) -> str | None:
    if not component:
        return None
    # Locations are provenance, not identity (keys.portable): the same data at another path is the same dataset.
    return fingerprint({"name": component.get("name"), "description": portable(component.get("description") or {})})


def comparability_aspects(report: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
    """What must be equal for two runs' numbers to be comparable: (explanation, value) per aspect."""
    comps = report.get("components") or {}
    testset = report.get("testset") or {}
    embedder = comps.get("embedder") or {}
    judge = comps.get("judge")
    return {
        "test set": ("different test-set content (session lists differ)",
                     (testset.get("name"), testset.get("content_hash"))),
        "embedder": ("different embedders: FSS scales differ, so Drop_FSS and FSS values are not comparable",
                     (embedder.get("name"), (report.get("scales") or {}).get("embedder_version"))),
        "judge": ("different judges (model version or prompt templates): SC and OER are not comparable",
                  _identity(judge) if judge else None),
        "dataset": ("different datasets or dataset settings (different faces)", _identity(comps.get("dataset"))),
        "schema": ("different report schema major versions", str(report.get("schema_version", "?")).split(".")[0]),
    }


def describe_aspect(aspect: str, report: Mapping[str, Any]) -> str:
    comps = report.get("components") or {}
    if aspect == "test set":
        t = report.get("testset") or {}
        return f"{t.get('name')} {version_text(t.get('version'))} {str(t.get('content_hash', ''))[:12]}"
    if aspect == "embedder":
        return f"{comps.get('embedder', {}).get('name')} {(report.get('scales') or {}).get('embedder_version')}"
    if aspect in ("judge", "dataset"):
        c = comps.get(aspect)
        return "none" if not c else f"{c.get('name')} {(_identity(c) or '')[:12]}"
    return str(report.get("schema_version"))


def pair_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The comparability aspects on which two reports differ. A judge present in only one run is not one
    (that run's SC/OER are simply skipped)."""
    pa, pb = comparability_aspects(a), comparability_aspects(b)
    return [aspect for aspect in pa
            if pa[aspect][1] != pb[aspect][1] and not (aspect == "judge" and None in (pa[aspect][1], pb[aspect][1]))]


def comparability_warnings(reports: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> list[str]:
    warnings = []
    explanations = {aspect: text for aspect, (text, _) in comparability_aspects(reports[0]).items()}
    differing = {aspect for a, b in combinations(reports, 2) for aspect in pair_differences(a, b)}
    for aspect in explanations:
        if aspect in differing:
            values = "; ".join(f"{lab}: {describe_aspect(aspect, r)}" for lab, r in zip(labels, reports))
            warnings.append(f"{explanations[aspect]} ({values})")
    for name in sorted({n for r in reports for n in r.get("metrics") or {}}):
        directions = {r["metrics"][name].get("higher_is_better") for r in reports if name in (r.get("metrics") or {})}
        if len(directions) > 1:
            warnings.append(f"{name}: the runs disagree on whether higher is better; no best value is marked")
    for lab, r in zip(labels, reports):
        if run_of(r).complete is False or cost_of(r).stopped_by_budget:
            warnings.append(f"{lab} is incomplete (stopped before every step finished): its numbers cover part "
                            "of the test set")
    return warnings
