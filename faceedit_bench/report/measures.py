"""How to read every named quantity of a run report: the report's ``measures`` section (since 1.3).

``measures[name] = {label, higher_is_better, unit, description, bounds, ideal, requires, section}`` for every
session metric (from its registration: :class:`~faceedit_bench.analysis.session_metrics.SessionMetric`,
a judge metric's :class:`~faceedit_bench.scoring.judge.declared.JudgeValue`, a plugin's metric),
for the per-step series (``fss``, ``sc``) and for the quantities a report section declares itself:
``<section>.measures[name]``, or the same fields stated inline on ``<section>.rates[name]`` (the
threshold rates). Pages, plots and the leaderboard read names, directions, units and axes
from here, never from a list of metric names; the leaderboard works from submitted reports only.

Reports written before 1.3 carry direction, unit and description on ``metrics`` but no labels or
bounds: :func:`report_measures` rebuilds the section from what they state, with the labels and
bounds that version's builtin metrics had (:data:`BEFORE_1_3`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

#: FSS_k, the identity series every run has (its scale is the embedder's: ``scales.fss``).
FSS = {"label": "FSS", "higher_is_better": True, "unit": "embedder's similarity",
       "description": "Face similarity of I_k to the identity's reference images: the best of the embedder's "
                      "similarities (METHODOLOGY §2.5).", "bounds": [0.0, 1.0]}
#: Labels and bounds of the builtin metrics of reports older than 1.3, which did not state them.
BEFORE_1_3 = {"drop_fss": {"label": "Drop_FSS"}, "sc": {"label": "SC", "bounds": [0.0, 100.0]},
              "oer": {"label": "OER", "bounds": [0.0, None]}}  # OER x100 passes 100 when an edit changes several
FIELDS = ("label", "higher_is_better", "unit", "description", "bounds", "ideal", "requires")


#: Measures by name, as a report states them.
Measures = Mapping[str, Mapping[str, Any]]


def measure(name: str, stated: Mapping[str, Any], section: str) -> dict[str, Any]:
    """One entry, from what a metric or a section states about ``name`` (label defaults to the name)."""
    hib = stated.get("higher_is_better")
    ideal = stated.get("ideal")
    return {
        "label": str(stated.get("label") or name),
        "higher_is_better": hib if isinstance(hib, bool) else None,
        "unit": str(stated.get("unit") or ""),
        "description": str(stated.get("description") or ""),
        "bounds": declared_bounds(stated.get("bounds")),
        "ideal": float(ideal) if _is_number(ideal) else None,
        "requires": [str(r) for r in stated.get("requires") or []],  # what it needs: embedder, judge, taxonomy
        "section": section,
    }


def collect_measures(sections: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The ``measures`` section of a report from its other sections (and the registrations' entries the
    aggregation put in ``sections['measures']``, which cover skipped metrics too)."""
    out: dict[str, dict[str, Any]] = {}
    for name, m in (sections.get("metrics") or {}).items():
        out[name] = measure(name, m, "metrics")
    for name, m in (sections.get("measures") or {}).items():
        out.setdefault(str(name), dict(m))
    if "fss" in (sections.get("trajectory") or {}):  # other step series (SC_k) are read as their metric
        out.setdefault("fss", measure("fss", FSS, "trajectory"))
    for key, section in sections.items():
        if key in ("metrics", "measures") or not isinstance(section, Mapping):
            continue
        declared = section.get("measures")
        for name, m in (declared.items() if isinstance(declared, Mapping) else ()):
            if isinstance(m, Mapping):
                out.setdefault(str(name), measure(str(name), m, key))
        rates = section.get("rates")
        for name, m in (rates.items() if isinstance(rates, Mapping) else ()):
            if isinstance(m, Mapping) and isinstance(m.get("higher_is_better"), bool):
                out.setdefault(str(name), measure(str(name), m, key))
    return out


def report_measures(report: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """A report's measures: its own section (1.3), else rebuilt from what an older report states."""
    stated = report.get("measures")
    if isinstance(stated, Mapping) and stated:
        return {str(k): dict(v) for k, v in stated.items() if isinstance(v, Mapping)}
    out = collect_measures(report)
    for name in report.get("skipped_metrics") or {}:
        out.setdefault(str(name), measure(str(name), {}, "skipped_metrics"))
    for name, legacy in BEFORE_1_3.items():
        if name in out:
            out[name] = {**out[name], **{k: v for k, v in legacy.items() if k != "label" or
                                         out[name]["label"] == name}}
    return out


def label_of(name: str, measures: Measures | None = None) -> str:
    """How pages name ``name``: its label, else the name itself."""
    return str(((measures or {}).get(name) or {}).get("label") or name)


def merged_measures(reports: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The measures of several reports; for a name stated by more than one, the first report's statement."""
    out: dict[str, dict[str, Any]] = {}
    for report in reports:
        for name, m in report_measures(report).items():
            out.setdefault(name, m)
    return out


def identity_metric(report: Mapping[str, Any]) -> str | None:
    """The run's first metric computed from the embedder alone (identity loss: Drop_FSS), else its first metric."""
    names = list(report.get("metrics") or {})
    measures = report_measures(report)
    return next((n for n in names if measures.get(n, {}).get("requires") == ["embedder"]), names[0] if names else None)


def fss_measured(report: Mapping[str, Any]) -> bool:
    """Whether the run measured face similarity: it has FSS_k points and did not skip every metric computed
    from the embedder (a question-answering run embeds, but skips Drop_FSS: it reports no identity). The FSS scale and
    the FSS sections are shown only then."""
    if not any(p for p in ((report.get("trajectory") or {}).get("fss") or [])):
        return False
    measures = report_measures(report)

    def from_embedder(names: Any) -> bool:
        return any("embedder" in ((measures.get(n) or {}).get("requires") or []) for n in names or {})

    return from_embedder(report.get("metrics")) or not from_embedder(report.get("skipped_metrics"))


def bounds_of(name: str, measures: Mapping[str, Mapping[str, Any]] | None) -> tuple[float, float] | None:
    """A quantity's full scale, for a plot axis: both bounds, or None (open-ended on either side)."""
    bounds = declared_bounds(((measures or {}).get(name) or {}).get("bounds"))
    return (bounds[0], bounds[1]) if bounds is not None and None not in bounds else None  # type: ignore[return-value]


def declared_bounds(value: Any) -> list[float | None] | None:
    """``[low, high]`` as declared, None for an open side (OER: ``[0, None]``); None when not a valid declaration."""
    if not isinstance(value, (list, tuple)) or len(value) != 2 or not all(v is None or _is_number(v) for v in value):
        return None
    low, high = (None if v is None else float(v) for v in value)
    if (low is None and high is None) or (low is not None and high is not None and not low < high):
        return None
    return [low, high]


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
