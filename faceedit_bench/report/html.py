"""The HTML run report: one self-contained static page (inline CSS, images as base64 data URIs, no
scripts, nothing fetched) built from ``report.json`` and the run directory's tables and contact sheets.

Every section is optional except the v1.0 core, so a v1.0 report (no judge, no cost) renders too.
Numbers are shown as the report states them; a skipped metric shows its reason, never a number.
"""

from __future__ import annotations

import base64
import csv
import importlib.util
import io
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.execution.secrets import redact
from faceedit_bench.report import plots
from faceedit_bench.report.contact_sheet import SheetStep, contact_sheet_name, render_session
from faceedit_bench.report.tables import RUN_COLUMNS
from faceedit_bench.report.templates import fmt_num, render
from faceedit_bench.storage import atomic
from faceedit_bench.storage.store import ImageStore, store_root_of_run

REPORT_FILE = "report.html"
WORST_SESSIONS = 6
RANKING_METRIC = "drop_fss"  # the worst sessions are the ones that lost the most identity
DISPLAY_NAMES = {"drop_fss": "Drop_FSS", "sc": "SC", "oer": "OER", "fss": "FSS"}
SESSION_ID_COLUMNS = ("face_id", "identity", "session_id", "excluded")
AXIS_LABELS = {"fss": "FSS (the embedder's scale)", "sc": "SC x100"}
MAX_ANNOTATED_CELLS = 400
#: steps.csv does not say which reference photo a session was measured against
SHEET_REFERENCE_UNKNOWN = (None, "reference photo: not recorded in steps.csv (see the dataset)")  # above this the heatmap's numbers would be unreadable; the cells table has them


def write_html_report(run_dir: Path, report: Mapping[str, Any], *, store: ImageStore | None = None,
                      worst_sessions: int = WORST_SESSIONS) -> Path:
    """Write ``run_dir/report.html`` (atomically: a killed run never leaves half a page) and return its path."""
    run_dir = Path(run_dir)
    page = render_html_report(report, run_dir=run_dir, store=store, worst_sessions=worst_sessions)
    return atomic.write_text(run_dir / REPORT_FILE, page)  # the umask's mode: a served report must be readable


def render_html_report(report: Mapping[str, Any], *, run_dir: Path | None = None, store: ImageStore | None = None,
                       worst_sessions: int = WORST_SESSIONS) -> str:
    context = {
        "header": header(report),
        "components": components(report),
        "prompts": prompt_templates(report),
        "notes": notes(report),
        "metrics": metric_rows(report),
        "skipped": dict(report.get("skipped_metrics") or {}),
        "counts": counts(report),
        "group_outcomes": group_outcome_tables(report),
        "groups": group_metric_tables(report),
        "disparity": disparity_rows(report),
        "disparity_forest": _png_uri(plot_disparity_forest(report.get("disparity") or [])),
        "overediting": overediting(report),
        "trajectory": trajectory(report),
        "group_trajectories": group_trajectories(report),
        "cost": report.get("cost"),
        "calls": call_rows(report),
        "performance": report.get("performance"),
        "judge_reliability": report.get("judge_reliability"),
        "judged": "judge" in (report.get("components") or {}),
        "worst": worst_sessions_section(report, run_dir, store, worst_sessions),
        "display": display_name,
    }
    return redact(render("report.html.j2", **context))


def store_for_run_dir(run_dir: Path) -> ImageStore | None:
    """The workspace's image store of ``<workspace>/runs/<run>``, when it exists (never created here)."""
    root = store_root_of_run(run_dir)
    return ImageStore(root) if root.is_dir() else None


def display_name(metric: str) -> str:
    return DISPLAY_NAMES.get(metric, metric)


# ---------------------------------------------------------------- sections (plain data for the template)

def header(report: Mapping[str, Any]) -> dict[str, Any]:
    run = report.get("run", {})
    cost = report.get("cost") or {}
    return {
        "name": run.get("name", "?"), "key": run.get("key", "?"), "experiment": run.get("experiment"),
        "created_at": run.get("created_at"), "wall_time_s": run.get("wall_time_s"),
        "schema_version": report.get("schema_version"), "version": report.get("faceedit_bench_version"),
        "computed": run.get("computed") or {},
        "incomplete": run.get("complete") is False or bool(cost.get("stopped_by_budget")),
        "stopped": run.get("stopped"),
        "stopped_by_budget": bool(cost.get("stopped_by_budget")), "budget_usd": cost.get("budget_usd"),
        "testset": report.get("testset", {}), "scales": report.get("scales", {}),
        "confidence": run.get("confidence"),
    }


def components(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One entry per component with its description flattened to ``dotted.key: value`` lines (exact versions,
    model-file and prompt-template hashes are all in the description)."""
    return [{"kind": kind, "name": c.get("name"), "provider": c.get("provider"),
             "provider_version": c.get("provider_version"), "details": _flatten(c.get("description") or {})}
            for kind, c in (report.get("components") or {}).items()]


def prompt_templates(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The judge's prompt templates (name, version, hash), which decide SC and OER as much as the model."""
    return [{"use": use, **t} for use, t in (report.get("prompts") or {}).items() if isinstance(t, Mapping)]


def notes(report: Mapping[str, Any]) -> list[str]:
    """What every number depends on: reconstruction labels, formula notes and dataset caveats."""
    out = list(report.get("notes") or [])
    testset = report.get("testset") or {}
    if testset.get("reconstruction"):
        out.append(f"Test set {testset.get('name')} v{testset.get('version')} is a reconstruction, "
                   "not the paper's session list.")
    if (report.get("overediting") or {}).get("reconstruction"):
        out.append("The overediting matrix uses the reconstructed taxonomy categories and state-tracker prompt.")
    for kind, c in (report.get("components") or {}).items():
        caveat = (c.get("description") or {}).get("caveat")
        if caveat:
            out.append(f"{kind} {c.get('name')}: {caveat}")
    return out


def metric_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"name": name, **m} for name, m in (report.get("metrics") or {}).items()]


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


def group_metric_tables(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    metric_names = list(report.get("metrics") or {})
    tables = []
    for attribute, labels in (report.get("groups") or {}).items():
        names = metric_names or sorted({n for g in labels.values() for n in g.get("metrics", {})})
        rows = [{"label": label, "included": g.get("sessions_included"),
                 "excluded": sum((g.get("sessions_excluded") or {}).values()),
                 "excluded_by": g.get("sessions_excluded") or {},
                 "metrics": [(g.get("metrics") or {}).get(n) for n in names]}
                for label, g in labels.items()]
        tables.append({"attribute": attribute, "metrics": names, "rows": rows})
    return tables


def disparity_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for d in report.get("disparity") or []:
        p, alpha = d.get("p_value"), d.get("alpha", 0.05)
        clustered = d.get("clustered") or {}
        rows.append({**d, "groups": list((d.get("groups") or {}).items()),
                     "significant": p is not None and alpha is not None and p < alpha,
                     "clustered_p": clustered.get("p_value"), "clusters": clustered.get("clusters") or {}})
    return rows


def overediting(report: Mapping[str, Any]) -> dict[str, Any] | None:
    section = report.get("overediting")
    if not section:
        return None
    categories, matrix = list(section.get("categories") or []), section.get("matrix") or []
    edits = list(section.get("edits_per_category") or section.get("edits") or [0] * len(categories))
    cells = sorted(((matrix[i][j], categories[i], categories[j]) for i in range(len(matrix))
                    for j in range(len(matrix[i])) if matrix[i][j]), key=lambda c: (-c[0], c[1], c[2]))
    return {"heatmap": _png_uri(plot_overediting(categories, matrix, edits)), "cells": cells[:20],
            "total": sum(c[0] for c in cells), "edits": sum(edits), "patterns": section.get("patterns") or [],
            "plot_error": plot_unavailable()}


def group_trajectories(report: Mapping[str, Any]) -> dict[str, Any]:
    """FSS_k per demographic group (reports since 1.2 carry them), as a plot and as rows of numbers."""
    by_attribute = {
        attribute: {label: points for label, g in labels.items()
                    if (points := ((g.get("trajectory") or {}).get("fss") or []))}
        for attribute, labels in (report.get("groups") or {}).items()}
    by_attribute = {attribute: lines for attribute, lines in by_attribute.items() if lines}
    rows = [(attribute, label, points) for attribute, lines in by_attribute.items() for label, points in lines.items()]
    return {"rows": rows, "plot": _png_uri(plot_group_trajectories(by_attribute)), "plot_error": plot_unavailable(),
            "has_groups": bool(report.get("groups"))}


def trajectory(report: Mapping[str, Any]) -> dict[str, Any]:
    series = {name: points for name, points in (report.get("trajectory") or {}).items() if points}
    return {"series": series, "plot": _png_uri(plot_trajectories(series)), "plot_error": plot_unavailable()}


def call_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"key": key, **stats, "gave_up_total": sum((stats.get("gave_up") or {}).values()),
             "retries_total": sum((stats.get("retries") or {}).values())}
            for key, stats in (report.get("calls") or {}).items()]


def worst_sessions_section(report: Mapping[str, Any], run_dir: Path | None, store: ImageStore | None,
                           limit: int) -> dict[str, Any]:
    """The included sessions with the worst ``RANKING_METRIC`` (direction from the report), with contact sheets."""
    out: dict[str, Any] = {"metric": RANKING_METRIC, "rows": [], "columns": [], "note": None}
    info = (report.get("metrics") or {}).get(RANKING_METRIC)
    sessions_csv = run_dir / "sessions.csv" if run_dir is not None else None
    if info is None:
        out["note"] = f"{display_name(RANKING_METRIC)} was not computed in this run."
        return out
    if sessions_csv is None or not sessions_csv.is_file():
        out["note"] = "sessions.csv was not found next to the report."
        return out
    with open(sessions_csv, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    scored = [(value, row) for row in rows if not row.get("excluded")
              and (value := _float(row.get(RANKING_METRIC))) is not None]
    scored.sort(key=lambda pair: pair[0], reverse=not info.get("higher_is_better", False))
    picks = [row for _, row in scored[:limit]]
    if not picks:
        out["note"] = f"No included session has a {display_name(RANKING_METRIC)} value."
        return out
    metric_columns = [m for m in (report.get("metrics") or {}) if m in picks[0]]
    # The labels (demographics); not the run's identifiers, nor metrics this run did not compute.
    not_shown = {*SESSION_ID_COLUMNS, *metric_columns, *RUN_COLUMNS, *(report.get("skipped_metrics") or {})}
    extra = [c for c in picks[0] if c not in not_shown]
    out["columns"] = metric_columns + extra
    missing = [(r["face_id"], r["session_id"]) for r in picks
               if not (run_dir / "contact_sheets" / contact_sheet_name(r["face_id"], r["session_id"])).is_file()]
    rendered = _render_missing_sheets(run_dir, store, missing) if missing and store is not None else {}
    for r in picks:
        path = run_dir / "contact_sheets" / contact_sheet_name(r["face_id"], r["session_id"])
        sheet = path.read_bytes() if path.is_file() else rendered.get((r["face_id"], r["session_id"]))
        out["rows"].append({"face_id": r["face_id"], "session_id": r["session_id"],
                            "values": [r.get(c, "") for c in out["columns"]], "sheet": _png_uri(sheet)})
    if missing and store is None:
        out["note"] = ("Some of these sessions have no contact sheet (run.max_contact_sheets was reached); "
                       "render the report with the workspace's image store to draw them.")
    return out


def _render_missing_sheets(run_dir: Path, store: ImageStore,
                           wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
    """Contact sheets drawn from the image hashes in steps.csv (streamed: it has one row per step of the run)."""
    steps_csv = run_dir / "steps.csv"
    if not steps_csv.is_file():
        return {}
    keys = set(wanted)
    steps: dict[tuple[str, str], list[dict[str, str]]] = {key: [] for key in keys}
    with open(steps_csv, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            key = (row.get("face_id", ""), row.get("session_id", ""))
            if key in keys:
                steps[key].append(row)
    sheets = {}
    for (face_id, session_id), rows in steps.items():
        if not rows:
            continue
        rows.sort(key=lambda r: int(r.get("k") or 0))
        sheet_steps = []
        for r in rows:
            digest = r.get("image_hash") or r.get("output_hash") or ""
            data = store.get(digest) if digest and digest in store else None
            fss = _float(r.get("fss"))
            note = "" if fss is not None else (r.get("score_outcome") or r.get("outcome") or "not scored")
            if fss is not None and r.get("score_outcome") == "no_face":
                note = "no face: FSS 0"
            sheet_steps.append(SheetStep(int(r.get("k") or 0), data, fss, note, r.get("instruction") or ""))
        excluded = rows[0].get("session_excluded")
        title = f"{face_id} | {session_id}" + (f" | excluded: {excluded}" if excluded else "")
        sheets[(face_id, session_id)] = render_session(title, SHEET_REFERENCE_UNKNOWN, sheet_steps)
    return sheets


# ---------------------------------------------------------------- plots (PNG bytes; matplotlib without pyplot)

def plot_unavailable() -> str | None:
    """Why plots are missing from the page, or ``None`` when they can be drawn."""
    if importlib.util.find_spec("matplotlib") is None:
        return "plots need matplotlib, which is not installed (pip install matplotlib); the tables have the numbers"
    return None


def _figure(width: float, height: float) -> Any | None:
    """A matplotlib Figure drawn by the Agg canvas (no pyplot, so no global backend is touched); ``None``
    without matplotlib."""
    if plot_unavailable():
        return None
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def _png(fig: Any) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


def _no_mathtext() -> Any:
    # Category names and labels are data: a "$" in them must not be parsed as LaTeX math.
    from matplotlib import rc_context

    return rc_context({"text.parse_math": False, "text.usetex": False})


def plot_trajectories(series: Mapping[str, Sequence[Mapping[str, Any]]]) -> bytes | None:
    """One panel per trajectory (FSS_k, SC_k: different scales), mean per step with its CI as a band, each on
    its metric's full scale (FSS 0-1, SC 0-100), so a flat line looks flat."""
    if plot_unavailable():
        return None
    panels = {f"{display_name(name)}_k": {"all included sessions": points} for name, points in series.items()}
    return plots.trajectory_lines(panels, metric_of={f"{display_name(n)}_k": n for n in series},
                                  ylabels={f"{display_name(n)}_k": AXIS_LABELS.get(n, display_name(n)) for n in series})


def plot_group_trajectories(by_attribute: Mapping[str, Mapping[str, Sequence[Mapping[str, Any]]]]) -> bytes | None:
    """FSS_k per demographic group, one panel per attribute, one line (with its CI band) per group."""
    if plot_unavailable():
        return None
    panels = {f"FSS_k by {attribute}": lines for attribute, lines in by_attribute.items()}
    return plots.trajectory_lines(panels, metric_of={title: "fss" for title in panels},
                                  ylabels={title: AXIS_LABELS["fss"] for title in panels})


def plot_disparity_forest(rows: Sequence[Mapping[str, Any]]) -> bytes | None:
    """A forest plot per metric: per contrast, each group's mean with its CI; contrasts flagged as bias marked."""
    if plot_unavailable():
        return None
    panels: dict[str, list[tuple[str, list[tuple[str, Mapping[str, Any] | None]]]]] = {}
    metric_of: dict[str, str] = {}
    marked: dict[str, set[str]] = {}
    for d in rows:
        metric = str(d.get("metric", "?"))
        title = f"{display_name(metric)} by group"
        metric_of[title] = metric
        groups = list((d.get("groups") or {}).items())
        panels.setdefault(title, []).append((str(d.get("contrast")), [(str(label), s) for label, s in groups]))
        if d.get("bias"):
            marked.setdefault(title, set()).add(str(d.get("contrast")))
    xlabels = {title: f"{display_name(m)}: each group's mean and CI" for title, m in metric_of.items()}
    return plots.forest(panels, metric_of=metric_of, marked=marked, xlabels=xlabels)


def plot_overediting(categories: Sequence[str], matrix: Sequence[Sequence[int]],
                     edits_per_category: Sequence[int]) -> bytes | None:
    """Heatmap of overedit counts [intended category][changed category], keeping only rows and columns with
    a count (35x35 mostly empty cells would be unreadable)."""
    n = len(matrix)
    rows = [i for i in range(n) if any(matrix[i])]
    cols = [j for j in range(n) if any(matrix[i][j] for i in range(n))]
    if not rows or (fig := _figure(max(4.0, 0.38 * len(cols) + 3.0), max(3.0, 0.32 * len(rows) + 2.2))) is None:
        return None
    values = [[matrix[i][j] for j in cols] for i in rows]
    with _no_mathtext():
        ax = fig.subplots()
        image = ax.imshow(values, cmap="Reds", aspect="auto", vmin=0)
        ax.set_xticks(range(len(cols)), [categories[j] for j in cols], rotation=60, ha="right", fontsize=8)
        edits = list(edits_per_category) + [0] * (n - len(edits_per_category))
        ax.set_yticks(range(len(rows)), [f"{categories[i]} ({edits[i]} edits)" for i in rows], fontsize=8)
        if len(rows) * len(cols) <= MAX_ANNOTATED_CELLS:
            top = max(max(r) for r in values)
            for y, row in enumerate(values):
                for x, v in enumerate(row):
                    if v:
                        ax.text(x, y, str(v), ha="center", va="center", fontsize=7,
                                color="white" if v > top / 2 else "black")
        ax.set_xlabel("changed category")
        ax.set_ylabel("intended category")
        fig.colorbar(image, ax=ax, label="overedits")
        fig.tight_layout()
        return _png(fig)


# ---------------------------------------------------------------- helpers

def _png_uri(data: bytes | None) -> str | None:
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _float(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


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
