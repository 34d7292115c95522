"""The HTML run report: one self-contained static page (inline CSS, images as data URIs at the size they are
shown, no scripts, nothing fetched) built from ``report.json`` and the run directory's tables and contact
sheets; a contact sheet links to its full-size file beside the page. It opens with the headline
(:mod:`faceedit_bench.report.headline`), then the "Read first" box, then the details.

Every section is optional except the v1.0 core, so a v1.0 report (no judge, no cost) renders too.
Numbers are shown as the report states them; a skipped metric shows its reason, never a number.
"""

from __future__ import annotations

import csv
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.analysis.multiplicity import (
    NOT_TESTED,
    STATUS_TEXT,
    YES,
    bias_status,
    clustered_p,
    not_tested_reason,
    paper_flag,
)
from faceedit_bench.execution.secrets import redact
from faceedit_bench.records import version_text
from faceedit_bench.report import html_plots
from faceedit_bench.report.conditions_view import condition_view
from faceedit_bench.report.contact_sheet import contact_sheet_name
from faceedit_bench.report.headline import headline, scale_note, scale_why
from faceedit_bench.report.html_images import page_image
from faceedit_bench.report.html_plots import plot_disparity_forest, plot_group_trajectories, plot_trajectories
from faceedit_bench.report.html_sections import ci_label, section_pages
from faceedit_bench.report.html_sheet_redraw import float_or_none, render_missing_sheets
from faceedit_bench.report.measures import fss_measured, identity_metric, label_of, report_measures
from faceedit_bench.report.part_views import cost_of
from faceedit_bench.report.preliminary import preliminary_note
from faceedit_bench.report.read_first import LABELS, MOST, report_warnings
from faceedit_bench.report.read_first import label as warning_label
from faceedit_bench.report.tables import RUN_COLUMNS
from faceedit_bench.report.templates import fmt_num, render
from faceedit_bench.storage.store import ImageStore

WORST_SESSIONS = 6
SESSION_ID_COLUMNS = ("face_id", "identity", "session_id", "condition", "excluded")


def render_html_report(report: Mapping[str, Any], *, run_dir: Path | None = None, store: ImageStore | None = None,
                       worst_sessions: int = WORST_SESSIONS) -> str:
    measures = report_measures(report)
    display = lambda name: label_of(name, measures)  # noqa: E731
    page = {"display": display, "ci_label": ci_label((report.get("run") or {}).get("confidence")),
            "plot_error": html_plots.plot_unavailable()}
    fss = fss_measured(report)
    context = {
        "headline": headline(report), "fss": fss,
        "header": header(report),
        "components": components(report),
        "notes": notes(report),
        "warnings": [{"label": warning_label(w), "message": w["message"],
                      "missing": warning_label(w) == LABELS["missing"]}
                     for w in report_warnings(report)], "most": MOST,
        "metrics": metric_rows(report),
        "skipped": dict(report.get("skipped_metrics") or {}),
        "counts": counts(report),
        "group_outcomes": group_outcome_tables(report),
        "groups": group_metric_tables(report),
        "disparity": disparity_rows(report),
        "disparity_forest": html_plots.plot_uri(plot_disparity_forest, report.get("disparity") or [], measures),
        "group_tests": group_test_rows(report),
        "judge_panel": report.get("judge_panel"),
        "plot_error": html_plots.plot_unavailable(),
        "conditions": condition_view(report),
        "sections": section_pages(report, store, page),  # each report section's own part (the core's launch too)
        "trajectory": trajectory(report, measures, fss),
        "group_trajectories": group_trajectories(report, measures),
        "worst": worst_sessions_section(report, run_dir, store, worst_sessions),
        "display": display,
    }
    return redact(render("report.html.j2", **context))


# ---------------------------------------------------------------- sections (plain data for the template)

def header(report: Mapping[str, Any]) -> dict[str, Any]:
    run = report.get("run", {})
    cost = cost_of(report)
    return {
        "name": run.get("name", "?"), "key": run.get("key", "?"), "experiment": run.get("experiment"),
        "created_at": run.get("created_at"), "wall_time_s": run.get("wall_time_s"),
        "re_reported": run.get("re_reported"),
        "schema_version": report.get("schema_version"), "version": report.get("faceedit_bench_version"),
        "computed": run.get("computed") or {},
        "incomplete": run.get("complete") is False or bool(cost.stopped_by_budget),
        "stopped": run.get("stopped"),
        "stopped_by_budget": bool(cost.stopped_by_budget), "budget_usd": cost.budget_usd,
        "testset": report.get("testset", {}), "scales": report.get("scales", {}),
        "confidence": run.get("confidence"), "preliminary": preliminary_note(report),
    }


def components(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per component with its description flattened to ``dotted.key: value`` lines (exact versions,
    model-file and prompt-template hashes are all in the description)."""
    return [{"kind": kind, "name": c.get("name"), "provider": c.get("provider"),
             "provider_version": c.get("provider_version"), "details": _flatten(c.get("description") or {})}
            for kind, c in (report.get("components") or {}).items()]


def notes(report: Mapping[str, Any]) -> list[str]:
    """What every number depends on: reconstruction labels, formula notes and dataset caveats."""
    out = list(report.get("notes") or [])
    testset = report.get("testset") or {}
    if testset.get("reconstruction"):
        out.append(f"Test set {testset.get('name')} {version_text(testset.get('version'))} is a reconstruction, "
                   "not the paper's session list.")
    if (report.get("overediting") or {}).get("reconstruction"):
        out.append("The overediting matrix uses the reconstructed taxonomy categories and state-tracker prompt.")
    for kind, c in (report.get("components") or {}).items():
        caveat = (c.get("description") or {}).get("caveat")
        if caveat:
            out.append(f"{kind} {c.get('name')}: {caveat}")
    return out


def metric_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    measures = report_measures(report)
    return [{"name": name, **m, "scale": scale_note(measure := measures.get(name) or m), "scale_why": scale_why(measure)}
            for name, m in (report.get("metrics") or {}).items()]


def counts(report: Mapping[str, Any]) -> dict[str, Any]:
    c = report.get("counts") or {}
    steps = dict(c.get("steps") or {})
    # {template or "calls": {outcome: n}}: judge answers by outcome, per prompt template
    judge = {name: dict(per) for name, per in (c.get("judge") or {}).items() if isinstance(per, Mapping)}
    return {
        "faces": c.get("faces") or {"seen": None, "excluded": {}},
        "sessions": c.get("sessions") or {"planned": None, "included": None, "excluded": {}},
        "steps": steps, "steps_total": sum(steps.values()),
        "edited_images_without_face": c.get("edited_images_without_face"),
        "references": c.get("references") or {},
        "judge": [(name, per, sum(per.values())) for name, per in judge.items()],
    }


def group_outcome_tables(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Step outcomes per demographic group, as counts and rates (a refusal rate by gender is a finding)."""
    tables = []
    for attribute, labels in ((report.get("counts") or {}).get("steps_by_group") or {}).items():
        outcomes = sorted({o for per in labels.values() for o in per}, key=lambda o: (o != "ok", o))
        rows = []
        for label, per in labels.items():
            total = sum(per.values())
            rows.append({"label": label, "total": total, "cells": [(per.get(o, 0), total) for o in outcomes]})
        tables.append({"attribute": attribute, "outcomes": outcomes, "rows": rows})
    return tables


#: Metric columns in one group table: more run past a 1280 px page, so the rest continue in a table below.
GROUP_TABLE_METRICS = 5


def group_metric_tables(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    metrics = report.get("metrics") or {}
    # the protocol's own metrics first, then what the image metrics measured (as the headline orders them)
    metric_names = sorted(metrics, key=lambda n: "image_metrics" in (metrics[n].get("requires") or ()))
    tables = []
    for attribute, labels in (report.get("groups") or {}).items():
        names = metric_names or sorted({n for g in labels.values() for n in g.get("metrics", {})})
        for start in range(0, max(len(names), 1), GROUP_TABLE_METRICS):
            part = names[start:start + GROUP_TABLE_METRICS]
            rows = [{"label": label, "included": g.get("sessions_included"),
                     "excluded": sum((g.get("sessions_excluded") or {}).values()),
                     "excluded_by": g.get("sessions_excluded") or {},
                     "metrics": [(g.get("metrics") or {}).get(n) for n in part]}
                    for label, g in labels.items()]
            tables.append({"attribute": attribute, "metrics": part, "rows": rows, "first": start == 0})
    return tables


def disparity_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for d in report.get("disparity") or []:
        alpha = d.get("alpha", 0.05)
        clustered = d.get("clustered") or {}
        status = bias_status(d)
        ps = {"p_value": d.get("p_value"), "p_clustered": clustered_p(d), "p_holm": d.get("p_holm"),
              "q_value": d.get("q_value")}
        rows.append({**d, **ps, "groups": list((d.get("groups") or {}).items()),
                     "significant": {f: p is not None and alpha is not None and p < alpha for f, p in ps.items()},
                     "clustered_p": clustered.get("p_value"), "clusters": clustered.get("clusters") or {},
                     "status": STATUS_TEXT[status], "flagged": status == YES,
                     "why_not": not_tested_reason(d) if status == NOT_TESTED else None,
                     "rule_flag": paper_flag(d)})
    return rows


def group_test_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One row per metric of each k-group, one-vs-rest and intersectional test (``group_tests``)."""
    tests = report.get("group_tests") or {}
    rows = []
    for kind, label in (("k_groups", "k groups"), ("intersections", "intersection"), ("one_vs_rest", "one vs rest")):
        for what, by_metric in (tests.get(kind) or {}).items():
            if "reason" in by_metric and not isinstance(by_metric.get("reason"), dict):
                rows.append({"kind": label, "what": what, "metric": "", "reason": by_metric["reason"]})
                continue
            for metric, r in by_metric.items():
                disparity, kruskal = r.get("disparity") or {}, r.get("kruskal") or {}
                rows.append({
                    "kind": label, "what": what, "metric": metric, "groups": r.get("groups"),
                    "statistic": (f"U {r['u']:g}" if r.get("u") is not None else
                                  f"H {kruskal['h']:.3g}, df {kruskal.get('df')}" if kruskal.get("h") is not None else None),
                    "p_value": r.get("p_value", kruskal.get("p_value")),
                    "spread": disparity.get("value", r.get("mean_difference")),
                    "spread_ci": (disparity.get("ci_low"), disparity.get("ci_high")),
                    "worst": disparity.get("worst_group") or r.get("worst_group") or (
                        "none: no better direction" if "higher_is_better" in r and r["higher_is_better"] is None
                        else None),
                    "reason": r.get("reason") or kruskal.get("reason") or disparity.get("reason")})
    return rows


def group_trajectories(report: Mapping[str, Any], measures: Mapping[str, Any]) -> dict[str, Any]:
    """FSS_k per demographic group (reports since 1.2 carry them), as a plot and as rows of numbers."""
    by_attribute = {
        attribute: {label: points for label, g in labels.items()
                    if (points := ((g.get("trajectory") or {}).get("fss") or []))}
        for attribute, labels in (report.get("groups") or {}).items()}
    by_attribute = {attribute: lines for attribute, lines in by_attribute.items() if lines}
    rows = [(attribute, label, points) for attribute, lines in by_attribute.items() for label, points in lines.items()]
    return {"rows": rows, "plot": html_plots.plot_uri(plot_group_trajectories, by_attribute, measures), "plot_error": html_plots.plot_unavailable(),
            "has_groups": bool(report.get("groups"))}


def trajectory(report: Mapping[str, Any], measures: Mapping[str, Any], fss: bool = True) -> dict[str, Any]:
    """The per-step series the run measured (FSS_k only when it measured identity: :func:`fss_measured`)."""
    series = {name: points for name, points in (report.get("trajectory") or {}).items()
              if points and (fss or name != "fss")}
    return {"series": series, "plot": html_plots.plot_uri(plot_trajectories, series, measures), "plot_error": html_plots.plot_unavailable()}


def worst_sessions_section(report: Mapping[str, Any], run_dir: Path | None, store: ImageStore | None,
                           limit: int) -> dict[str, Any]:
    """The included sessions with the worst value of the run's identity metric (Drop_FSS in paper (a); direction
    from the report), with contact sheets."""
    ranking = identity_metric(report)
    out: dict[str, Any] = {"metric": ranking or "", "rows": [], "columns": [], "note": None}
    info = (report.get("metrics") or {}).get(ranking or "")
    sessions_csv = run_dir / "sessions.csv" if run_dir is not None else None
    if info is None:
        out["note"] = "No session metric was computed in this run."
        return out
    if sessions_csv is None or not sessions_csv.is_file():
        out["note"] = "sessions.csv was not found next to the report."
        return out
    with open(sessions_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    reference = (report.get("conditions") or {}).get("reference")  # the condition the main sections describe
    rows = [row for row in rows if reference is None or row.get("condition") == reference]
    scored = [(value, row) for row in rows if not row.get("excluded")
              and (value := float_or_none(row.get(ranking))) is not None]
    direction, ideal = info.get("higher_is_better"), info.get("ideal")
    if direction is None and ideal is None:
        out["note"] = (f"{label_of(ranking or '', report_measures(report))} has no better direction: "
                       "no session is the worst.")
        return out
    # the worst first: the lowest of a higher-is-better metric, the highest of a lower-is-better one, the
    # furthest from the ideal of a metric whose ideal is the middle
    scored.sort(key=lambda pair: -abs(pair[0] - ideal) if direction is None
                else pair[0] * (1 if direction else -1))
    picks = [row for _, row in scored[:limit]]
    if not picks:
        out["note"] = f"No included session has a {label_of(ranking or '', report_measures(report))} value."
        return out
    metric_columns = [m for m in (report.get("metrics") or {}) if m in picks[0]]
    # The labels (demographics); not the run's identifiers, nor metrics this run did not compute.
    not_shown = {*SESSION_ID_COLUMNS, *metric_columns, *RUN_COLUMNS, *(report.get("skipped_metrics") or {})}
    extra = [c for c in picks[0] if c not in not_shown]
    out["columns"] = metric_columns + extra
    missing = [(r["face_id"], r["session_id"]) for r in picks
               if not (run_dir / "contact_sheets" / contact_sheet_name(r["face_id"], r["session_id"])).is_file()]
    rendered = render_missing_sheets(run_dir, store, missing) if missing and store is not None else {}
    for r in picks:
        path = run_dir / "contact_sheets" / contact_sheet_name(r["face_id"], r["session_id"])
        sheet = path.read_bytes() if path.is_file() else rendered.get((r["face_id"], r["session_id"]))
        out["rows"].append({"face_id": r["face_id"], "session_id": r["session_id"],
                            "values": [r.get(c, "") for c in out["columns"]], "sheet": page_image(sheet),
                            # the full-size sheet beside report.html (the run folder), when the run kept it
                            "full": f"contact_sheets/{path.name}" if path.is_file() else None})
    if missing and store is None:
        out["note"] = ("Some of these sessions have no contact sheet (run.max_contact_sheets was reached); "
                       "render the report with the workspace's image store to draw them.")
    return out


# ---------------------------------------------------------------- helpers

def _flatten(value: Any, prefix: str = "") -> list[tuple[str, str]]:
    if isinstance(value, Mapping):
        if not value and prefix:
            return [(prefix, "{}")]
        return [pair for k, v in value.items() for pair in _flatten(v, f"{prefix}.{k}" if prefix else str(k))]
    if isinstance(value, (list, tuple)) and any(isinstance(v, Mapping) for v in value):
        return [pair for i, v in enumerate(value) for pair in _flatten(v, f"{prefix}[{i}]")]
    if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
        return [(prefix, ", ".join(fmt_num(v) for v in value))]
    return [(prefix, "null" if value is None else fmt_num(value))]
