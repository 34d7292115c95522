"""The tables of the console summary, each laid out to fit the terminal (:mod:`faceedit_bench.report.console`):
short headers with a legend, every interval on one line, wide tables split into parts that repeat the row
names."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from rich.text import Text

from faceedit_bench.analysis.multiplicity import (
    NOT_TESTED,
    STATUS_TEXT,
    bias_status,
    clustered_p,
    flag_count,
    not_tested_reason,
    paper_flag,
)
from faceedit_bench.report.calls_view import call_sources
from faceedit_bench.report.conditions_view import composition
from faceedit_bench.report.console import Column, fitted_tables
from faceedit_bench.report.measures import bounds_of, fss_measured, label_of, report_measures

DIRECTION = {True: "higher is better", False: "lower is better"}


def fmt_p(p: float | None) -> str:
    if p is None:
        return "n/a"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def counts(mapping: Mapping[str, Any], empty: str = "none") -> str:
    """``ok 58, refused 2`` for ``{"ok": 58, "refused": 2}``."""
    return ", ".join(f"{k} {v}" for k, v in mapping.items()) if mapping else empty


def ci(m: Mapping[str, Any], digits: int = 3) -> tuple[str, str]:
    """(mean, "[low, high]") of a summary; n/a when undefined."""
    if m.get("mean") is None:
        return "n/a", ""
    mean = f"{m['mean']:.{digits}f}"
    return mean, (f"[{m['ci_low']:.{digits}f}, {m['ci_high']:.{digits}f}]" if m.get("ci_low") is not None else "")


def digits_for(name: str, measures: Mapping[str, Any], values: Sequence[Any] = ()) -> int:
    """Decimals that show a metric's differences without noise: one on a scale of tens (SC, OER, Drop_FSS in
    %), two on a 1-5 rating scale, three on 0-1 (FSS); without bounds, from the values' size."""
    bounds = bounds_of(name, measures)
    if bounds is not None:
        span = bounds[1] - bounds[0]
        return 1 if span >= 10 else 2 if span > 1 else 3
    largest = max((abs(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)), default=0.0)
    return 1 if largest >= 10 else 2 if largest >= 1 else 3  # a 1-5 scale without bounds: its 1.0 has two


def metrics_tables(report: Mapping[str, Any], width: int) -> list[Any]:
    rows, reasons = [], []
    for name, m in report["metrics"].items():  # by name: what metrics=[...] and rank_by are given
        mean, interval = ci(m)
        rows.append([name, str(m["n"]), ids(m), mean, interval or ("none" if m.get("mean") is not None else ""),
                     m.get("unit") or "", DIRECTION.get(m["higher_is_better"], "neither")])
        if m.get("ci_reason") and m.get("mean") is not None:
            reasons.append(f"{name}: no interval: {m['ci_reason']}")
    return fitted_tables([Column("metric")], [Column("n", True), Column("ids", True), Column("mean", True),
                                              Column("95% CI", True), Column("unit"), Column("direction")], rows,
                         width, legend="\n".join(["n: sessions, ids: identities (people); the intervals are "
                                                  "clustered by identity", *reasons]))


def ids(summary: Mapping[str, Any]) -> str:
    """A summary's identities, ``?`` where not known (a report written before they were counted)."""
    n = summary.get("n_identities")
    return "?" if n is None else str(n)


def trajectory_tables(report: Mapping[str, Any], width: int) -> list[Any]:
    fss = fss_measured(report)  # a run that reports no identity (Drop_FSS skipped) shows no FSS_k
    trajectory = {name: points for name, points in (report.get("trajectory") or {}).items() if fss or name != "fss"}
    steps = sorted({p["k"] for points in trajectory.values() for p in points})
    if not steps:
        return []
    measures = report_measures(report)
    rows = []
    for series, points in trajectory.items():
        digits = digits_for(series, measures, [p.get("mean") for p in points])
        cells = {p["k"]: ci(p, digits)[0] for p in points}
        rows.append([f"{label_of(series, measures)}_k mean", *(cells.get(k, "") for k in steps)])
    for key, labels in (report["groups"] if fss else {}).items():
        for label, g in labels.items():
            points = {p["k"]: ci(p)[0] for p in (g.get("trajectory") or {}).get("fss") or []}
            if points:
                rows.append([f"  FSS_k {key}={label}", *(points.get(k, "") for k in steps)])
    return fitted_tables([Column("trajectory")], [Column(f"k={k}", True) for k in steps], rows, width)


def group_tables(report: Mapping[str, Any], width: int) -> list[Any]:
    """Each metric per demographic group, mean [CI] on one line; split by metrics where it is too wide."""
    names = list(report["metrics"])
    rows = [(key, label, g) for key, labels in report["groups"].items() for label, g in labels.items()]
    if not rows:
        return []
    measures = report_measures(report)
    digits = {n: digits_for(n, measures, [g["metrics"].get(n, {}).get("mean") for *_, g in rows]) for n in names}
    cells = [[f"{key}={label}", str(g["sessions_included"]), group_identities(g),
              str(sum(g["sessions_excluded"].values())),
              *(" ".join(x for x in ci(g["metrics"][n], digits[n]) if x) if n in g["metrics"] else "n/a"
                for n in names)] for key, label, g in rows]
    return fitted_tables([Column("group")], [Column("n", True), Column("ids", True), Column("excl.", True),
                                             *(Column(n, True) for n in names)], cells, width,
                         legend="n: sessions included, ids: identities, excl.: sessions excluded; each metric: mean "
                                "[95% CI], no interval below 2 identities")


def group_identities(group: Mapping[str, Any]) -> str:
    """The identities of a group: the most any of its metric summaries counts."""
    known = [m["n_identities"] for m in (group.get("metrics") or {}).values() if m.get("n_identities") is not None]
    return str(max(known)) if known else "?"


def disparity_tables(report: Mapping[str, Any], width: int) -> list[Any]:
    """Each contrast: WD, the session-level (paper's), identity-clustered and Holm p, the BH q, the paper's
    rule and the flag, which is yes, no or not tested (the reasons follow the table)."""
    found = [r for r in report.get("disparity", []) if isinstance(r, Mapping)]
    if not found:
        return []
    rows, reasons = [], []
    for r in found:
        status = bias_status(r)
        paper = paper_flag(r)
        wd = r.get("wd")
        rows.append([f"{r['metric']} by {r['contrast']}", "n/a" if wd is None else f"{wd:.2f}", identities_text(r),
                     fmt_p(r.get("p_value")), fmt_p(clustered_p(r)), fmt_p(r.get("p_holm")),
                     fmt_p(r.get("q_value")), "-" if paper is None else ("BIAS" if paper else "no"),
                     STATUS_TEXT[status]])
        if status == NOT_TESTED:
            reasons.append(f"{r['metric']} by {r['contrast']} not tested: {not_tested_reason(r)}")
    legend = ["ids: identities per group; p: over sessions (the paper's test); id p: identities permuted; "
              "Holm p: id p corrected over the run's testable contrasts; q: Benjamini-Hochberg",
              "bias: WD > threshold and Holm p < alpha; paper's rule: WD > threshold and session p < alpha, "
              "uncorrected (sessions of one person counted as independent)",
              "Bias flags: " + flag_count(found), *reasons]
    return fitted_tables([Column("disparity")], [Column("WD", True), Column("ids"), Column("p", True),
                                                 Column("id p", True), Column("Holm p", True), Column("q", True),
                                                 Column("paper's rule"), Column("bias")],
                         rows, width, legend="\n".join(legend))


def identities_text(row: Mapping[str, Any]) -> str:
    """``4/5``: identities per group of a disparity row, ``?`` where unknown."""
    ids = row.get("n_identities") or {}
    return "/".join("?" if ids.get(g) is None else str(ids[g]) for g in (row.get("groups") or {})) or "?"


def condition_tables(report: Mapping[str, Any], width: int) -> list[Any]:
    """Each condition paired with the reference, overall: Δ per metric with its CI, p and Holm's p."""
    out: list[Any] = []
    specs = (report.get("conditions") or {}).get("conditions") or {}
    for name, comparison in ((report.get("conditions") or {}).get("comparisons") or {}).items():
        rows = []
        for metric, t in (comparison.get("overall") or {}).get("metrics", {}).items():
            mean, interval = ci({"mean": t.get("mean_delta"), "ci_low": t.get("ci_low"), "ci_high": t.get("ci_high")})
            rows.append([metric, str(t["n_pairs"]), str(t["dropped"]), mean, interval, fmt_p(t.get("p_value")),
                         fmt_p(t.get("p_holm")) + (" *" if t.get("reject_holm") else "")])
        if rows:
            out += [Text("")] if out else []
            out += fitted_tables([Column("metric")], [Column("pairs", True), Column("dropped", True),
                                                      Column("mean Δ", True), Column("95% CI", True),
                                                      Column("p", True), Column("p Holm", True)],
                                 rows, width, title=f"condition {name} - {comparison.get('vs')}, paired",
                                 legend="\n".join(["* rejected after Holm's correction",
                                                    *([f"{name}: {how}"] if (how := composition(specs.get(name) or {}))
                                                      else [])]))
    return out


def calls_tables(report: Mapping[str, Any], width: int) -> list[Any]:
    """Provider calls by role; the legend names each role's provider · model · endpoint host."""
    sources = call_sources(report)
    if not sources:
        return []
    besides = any(c.get("other_requests") for _, c in sources)  # polls and downloads: some providers only
    names = [source.role or source.model or source.provider for source, _ in sources]  # older reports: no roles
    rows = [[name, str(c.get("calls")), str(c.get("attempts")), counts(c.get("retries") or {}),
             counts(c.get("gave_up") or {}), *([counts(c.get("other_requests") or {}, empty="")] if besides else [])]
            for name, (_, c) in zip(names, sources)]
    legend = [f"{name}: {source.name}" for name, (source, _) in zip(names, sources)]
    if besides:
        legend.append("besides: requests that are not rate-limited calls (polls, downloads)")
    return fitted_tables([Column("calls by")], [Column("calls", True), Column("attempts", True), Column("retries"),
                                                Column("gave up"), *([Column("besides")] if besides else [])],
                         rows, width, legend="\n".join(legend))


def summary_tables(report: Mapping[str, Any], width: int) -> list[list[Any]]:
    """The summary's tables in reading order, each a list of renderables (empty when the run has none)."""
    return [metrics_tables(report, width), trajectory_tables(report, width), group_tables(report, width),
            disparity_tables(report, width), condition_tables(report, width)]
