"""``faceedit-bench compare``: several runs side by side, with what makes them incomparable stated loudly,
and paired differences on the (face, session) units two runs share ("is editor A better than B?").

The best value of a row follows the report's own ``higher_is_better``; it marks the best *mean*, not a
significant difference: the paired comparison (or overlapping intervals) says whether it is one.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from pathlib import Path
from typing import Any

import yaml
from scipy import stats

from faceedit_bench.analysis.across_testsets import PATTERN_THRESHOLD, across_testsets, pooled_patterns
from faceedit_bench.analysis.baselines import is_reference_editor
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.keys import fingerprint, portable
from faceedit_bench.report import plots
from faceedit_bench.report.html import display_name
from faceedit_bench.report.run_report import SCHEMA_ID
from faceedit_bench.report.templates import fmt_ci, fmt_num, fmt_p_equation, fmt_usd, render

FORMATS = ("text", "markdown", "html")
USABLE_OR_UNATTEMPTED = ("ok", "skipped")  # every other step outcome is an attempt without a usable image


class CompareError(FaceEditBenchError):
    """A path that is not a run, or fewer than two runs."""


# ---------------------------------------------------------------- loading

def load_run(path: Path) -> tuple[dict[str, Any], Path]:
    """The report of a run directory (or of a report.json file) and the directory its tables live in."""
    path = Path(path)
    file = path / "report.json" if path.is_dir() else path
    if not file.is_file():
        from faceedit_bench.storage.run_dirs import did_you_mean

        raise CompareError(f"{path}: no report.json there; pass a run directory (<workspace>/runs/<run>) "
                           f"or the path of its report.json.{did_you_mean(path) if not path.exists() else ''}")
    try:
        report = json.loads(file.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise CompareError(f"{file}: not valid JSON ({exc}); rerun the experiment to rewrite its report") from exc
    if not isinstance(report, dict) or report.get("schema") != SCHEMA_ID:
        found = report.get("schema") if isinstance(report, dict) else type(report).__name__
        raise CompareError(f"{file}: not a faceedit_bench run report (schema {found!r}, expected {SCHEMA_ID!r})")
    return report, file.parent


def _editor_label(r: Mapping[str, Any]) -> str:
    editor = r.get("components", {}).get("editor", {})
    desc = editor.get("description") or {}
    version = next((desc[k] for k in ("model_version", "model", "version") if desc.get(k)), None)
    return f"{editor.get('name', '?')} ({version})" if version else str(editor.get("name", "?"))


def _limits(config: Mapping[str, Any] | None) -> str:
    run = (config or {}).get("run") or {}
    limits = [f"{k}={run[k]}" for k in ("max_faces", "max_sessions") if run.get(k) is not None]
    return ", ".join(limits) or "no limits"


#: What may tell runs apart besides the editor, in the order labels name it.
LABEL_ASPECTS: tuple[tuple[str, Callable[[Mapping[str, Any], Mapping[str, Any] | None], str]], ...] = (
    ("test set", lambda r, c: f"{(r.get('testset') or {}).get('name')}"),
    ("dataset", lambda r, c: str(((r.get("components") or {}).get("dataset") or {}).get("name"))),
    ("embedder", lambda r, c: f"{((r.get('components') or {}).get('embedder') or {}).get('name')} "
                              f"{(r.get('scales') or {}).get('embedder_version')}"),
    ("judge", lambda r, c: (lambda j: "none" if not j else
                            f"{j.get('name')} {(j.get('description') or {}).get('model_version') or ''}".strip())(
        (r.get("components") or {}).get("judge"))),
    ("limits", lambda r, c: _limits(c)),
)


def run_labels(reports: Sequence[Mapping[str, Any]],
               configs: Sequence[Mapping[str, Any] | None] | None = None) -> list[str]:
    """Editor name and model version, then what else differs between the runs (test set, dataset, embedder,
    judge, limits), so each column says what it measured; the run key (then a position) tells apart runs that
    share all of it. The identity editor is marked as the reference."""
    configs = list(configs) if configs is not None else [None] * len(reports)
    values = {name: [describe(r, c) for r, c in zip(reports, configs)] for name, describe in LABEL_ASPECTS}
    differing = [name for name, vals in values.items() if len(set(vals)) > 1]
    labels = []
    for i, r in enumerate(reports):
        extra = " · ".join(f"{name} {values[name][i]}" for name in differing)
        labels.append(_editor_label(r) + (f" · {extra}" if extra else ""))
    labels = [f"{lab} [{r.get('run', {}).get('key', '')[:8]}]" if labels.count(lab) > 1 else lab
              for lab, r in zip(labels, reports)]
    labels = [f"{lab} #{i + 1}" if labels.count(lab) > 1 else lab for i, lab in enumerate(labels)]
    return [f"{lab} (reference: no edit)" if _is_reference(r) else lab for lab, r in zip(labels, reports)]


def _is_reference(report: Mapping[str, Any]) -> bool:
    return is_reference_editor(((report.get("components") or {}).get("editor") or {}).get("name"))


def _config(run_dir: Path) -> Mapping[str, Any] | None:
    """The run's config.yaml (limits are not in the report), or None."""
    try:
        config = yaml.safe_load((run_dir / "config.yaml").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return None
    return config if isinstance(config, dict) else None


# ---------------------------------------------------------------- comparability

def _identity(component: Mapping[str, Any] | None) -> str | None:
    if not component:
        return None
    # Locations are provenance, not identity (keys.portable): the same data at another path is the same dataset.
    return fingerprint({"name": component.get("name"), "description": portable(component.get("description") or {})})


def _aspects(report: Mapping[str, Any]) -> dict[str, tuple[str, Any]]:
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


def _describe(aspect: str, report: Mapping[str, Any]) -> str:
    comps = report.get("components") or {}
    if aspect == "test set":
        t = report.get("testset") or {}
        return f"{t.get('name')} v{t.get('version')} {str(t.get('content_hash', ''))[:12]}"
    if aspect == "embedder":
        return f"{comps.get('embedder', {}).get('name')} {(report.get('scales') or {}).get('embedder_version')}"
    if aspect in ("judge", "dataset"):
        c = comps.get(aspect)
        return "none" if not c else f"{c.get('name')} {(_identity(c) or '')[:12]}"
    return str(report.get("schema_version"))


def pair_differences(a: Mapping[str, Any], b: Mapping[str, Any]) -> list[str]:
    """The comparability aspects on which two reports differ. A judge present in only one run is not one
    (that run's SC/OER are simply skipped)."""
    pa, pb = _aspects(a), _aspects(b)
    return [aspect for aspect in pa
            if pa[aspect][1] != pb[aspect][1] and not (aspect == "judge" and None in (pa[aspect][1], pb[aspect][1]))]


def comparability_warnings(reports: Sequence[Mapping[str, Any]], labels: Sequence[str]) -> list[str]:
    warnings = []
    explanations = {aspect: text for aspect, (text, _) in _aspects(reports[0]).items()}
    differing = {aspect for a, b in combinations(reports, 2) for aspect in pair_differences(a, b)}
    for aspect in explanations:
        if aspect in differing:
            values = "; ".join(f"{lab}: {_describe(aspect, r)}" for lab, r in zip(labels, reports))
            warnings.append(f"{explanations[aspect]} ({values})")
    for name in sorted({n for r in reports for n in r.get("metrics") or {}}):
        directions = {r["metrics"][name].get("higher_is_better") for r in reports if name in (r.get("metrics") or {})}
        if len(directions) > 1:
            warnings.append(f"{name}: the runs disagree on whether higher is better; no best value is marked")
    for lab, r in zip(labels, reports):
        run, cost = r.get("run") or {}, r.get("cost") or {}
        if run.get("complete") is False or cost.get("stopped_by_budget"):
            warnings.append(f"{lab} is incomplete (stopped before every step finished): its numbers cover part "
                            "of the test set")
    return warnings


# ---------------------------------------------------------------- rows

def _cell(value: float | None, text: str | None = None) -> dict[str, Any]:
    return {"value": value, "text": text if text is not None else fmt_num(value)}


def _best(cells: Sequence[Mapping[str, Any]], higher_is_better: bool | None, exclude: set[int]) -> list[int]:
    """The columns with the row's best value; reference runs (no edit) compete for nothing."""
    values = [None if i in exclude else c["value"] for i, c in enumerate(cells)]
    present = [v for v in values if v is not None and math.isfinite(v)]
    if higher_is_better is None or len(present) < 2 or len(set(present)) == 1:
        return []
    target = max(present) if higher_is_better else min(present)
    return [i for i, v in enumerate(values) if v == target]


def _row(label: str, cells: list[dict[str, Any]], higher_is_better: bool | None,
         section: str) -> dict[str, Any]:
    return {"label": label, "section": section, "higher_is_better": higher_is_better, "cells": cells,
            "best": _best(cells, higher_is_better, set())}


def _direction(higher_is_better: bool | None) -> str:
    return "" if higher_is_better is None else ("higher better" if higher_is_better else "lower better")


def metric_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    names: list[str] = []
    for r in reports:
        names += [n for n in list(r.get("metrics") or {}) + list(r.get("skipped_metrics") or {}) if n not in names]
    rows = []
    for name in names:
        found = [r["metrics"][name] for r in reports if name in (r.get("metrics") or {})]
        directions = {m.get("higher_is_better") for m in found}
        hib = directions.pop() if len(directions) == 1 else None
        unit = next((m.get("unit") for m in found if m.get("unit")), "")
        cells = []
        for r in reports:
            m = (r.get("metrics") or {}).get(name)
            if m is None:
                skipped = name in (r.get("skipped_metrics") or {})
                cells.append(_cell(None, "skipped" if skipped else "absent"))
            else:
                cells.append(_cell(m.get("mean"), f"{fmt_ci(m)} n={m.get('n')}"))
        about = ", ".join(x for x in (unit, _direction(hib)) if x)
        label = f"{display_name(name)} ({about})" if about else display_name(name)
        rows.append(_row(label, cells, hib, "metrics"))
    return rows


def _rate(report: Mapping[str, Any], numerator: Callable[[Mapping[str, Any]], float | None],
          denominator: Callable[[Mapping[str, Any]], float | None]) -> dict[str, Any]:
    num, den = numerator(report), denominator(report)
    if num is None or not den:
        return _cell(None)
    return _cell(100.0 * num / den, f"{100.0 * num / den:.1f}% ({fmt_num(num)}/{fmt_num(den)})")


def outcome_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    def steps(r: Mapping[str, Any]) -> dict[str, int]:
        return dict((r.get("counts") or {}).get("steps") or {})

    def attempted(r: Mapping[str, Any]) -> int:
        return sum(n for o, n in steps(r).items() if o != "skipped")

    def sessions(r: Mapping[str, Any]) -> dict[str, Any]:
        return (r.get("counts") or {}).get("sessions") or {}

    def count(value: Any) -> dict[str, Any]:
        return _cell(float(value) if value is not None else None, fmt_num(value))

    return [
        _row("sessions included", [count(sessions(r).get("included")) for r in reports], None, "outcomes"),
        _row("sessions excluded (% of planned, lower better)",
             [_rate(r, lambda r: sum((sessions(r).get("excluded") or {}).values()),
                    lambda r: sessions(r).get("planned")) for r in reports], False, "outcomes"),
        _row("steps refused (% of attempted, lower better)",
             [_rate(r, lambda r: steps(r).get("refused", 0), attempted) for r in reports], False, "outcomes"),
        _row("steps without a usable image (% of attempted, lower better)",
             [_rate(r, lambda r: sum(n for o, n in steps(r).items() if o not in USABLE_OR_UNATTEMPTED),
                    attempted) for r in reports], False, "outcomes"),
        _row("faces excluded", [count(sum((((r.get("counts") or {}).get("faces") or {}).get("excluded")
                                             or {}).values())) for r in reports], None, "outcomes"),
    ]


def fairness_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    def flags(r: Mapping[str, Any]) -> dict[str, Any]:
        rows = r.get("disparity")
        if rows is None:
            return _cell(None, "not computed")
        n = sum(1 for d in rows if d.get("bias"))
        return _cell(float(n), f"{n} of {len(rows)} contrasts")

    return [_row("bias flags (WD > threshold and p < alpha, lower better)", [flags(r) for r in reports], False,
                 "fairness")]


def cost_rows(reports: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    def total(r: Mapping[str, Any]) -> dict[str, Any]:
        cost = r.get("cost")
        if cost is None:
            return _cell(None, "not recorded")
        return _cell(cost.get("estimated_usd"), fmt_usd(cost.get("estimated_usd")))

    def per_session(r: Mapping[str, Any]) -> dict[str, Any]:
        usd = (r.get("cost") or {}).get("estimated_usd")
        included = ((r.get("counts") or {}).get("sessions") or {}).get("included")
        if usd is None or not included:
            return _cell(None)
        return _cell(usd / included, fmt_usd(usd / included))

    return [_row("estimated cost (USD, lower better)", [total(r) for r in reports], False, "cost"),
            _row("estimated cost per included session (USD, lower better)", [per_session(r) for r in reports],
                 False, "cost")]


# ---------------------------------------------------------------- paired differences

def _session_values(run_dir: Path, metrics: Sequence[str]) -> dict[tuple[str, str], dict[str, float]] | None:
    path = run_dir / "sessions.csv"
    if not path.is_file():
        return None
    out = {}
    with open(path, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            if row.get("excluded"):
                continue
            values = {}
            for m in metrics:
                try:
                    v = float(row.get(m) or "nan")
                except ValueError:
                    continue
                if math.isfinite(v):
                    values[m] = v
            out[(row.get("face_id", ""), row.get("session_id", ""))] = values
    return out


def paired_difference(a: Sequence[float], b: Sequence[float], *, confidence: float = 0.95) -> dict[str, Any]:
    """Mean of a - b over paired units with a Student-t interval and a two-sided paired t-test p-value."""
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    s = summarize(diffs, confidence)
    p = None
    if s["n"] >= 2 and s["sd"]:
        t = s["mean"] / (s["sd"] / math.sqrt(s["n"]))
        p = float(2 * stats.t.sf(abs(t), df=s["n"] - 1))
    return {**s, "p_value": p}


def _verdict(d: Mapping[str, Any], a: str, b: str, higher_is_better: bool | None) -> str:
    if d["n"] < 2 or d["ci_low"] is None:
        return "too few shared sessions for an interval"
    if higher_is_better is None:
        return "direction unknown"
    if d["ci_low"] > 0 or d["ci_high"] < 0:
        a_higher = d["ci_low"] > 0
        return f"{a if a_higher == higher_is_better else b} better (CI excludes 0)"
    return "no clear difference (CI includes 0)"


def paired_comparisons(reports: Sequence[Mapping[str, Any]], run_dirs: Sequence[Path], labels: Sequence[str],
                       *, confidence: float = 0.95) -> list[dict[str, Any]]:
    """For every pair of runs: per metric, the mean paired difference (first minus second) over the
    (face, session) units included in both, or why it was not computed."""
    out = []
    for i, j in combinations(range(len(reports)), 2):
        entry: dict[str, Any] = {"a": labels[i], "b": labels[j], "metrics": [], "reason": None}
        out.append(entry)
        differs = pair_differences(reports[i], reports[j])
        if differs:
            entry["reason"] = f"not computed: the runs differ in {', '.join(differs)}"
            continue
        metrics = [m for m in reports[i].get("metrics") or {} if m in (reports[j].get("metrics") or {})]
        va, vb = _session_values(run_dirs[i], metrics), _session_values(run_dirs[j], metrics)
        if va is None or vb is None:
            missing = run_dirs[i] if va is None else run_dirs[j]
            entry["reason"] = f"not computed: no sessions.csv in {missing}"
            continue
        shared = sorted(set(va) & set(vb))
        entry.update(shared_sessions=len(shared), only_a=len(set(va) - set(vb)), only_b=len(set(vb) - set(va)))
        if not shared:
            entry["reason"] = "not computed: the runs share no included (face, session) unit"
            continue
        for m in metrics:
            units = [u for u in shared if m in va[u] and m in vb[u]]
            d = paired_difference([va[u][m] for u in units], [vb[u][m] for u in units], confidence=confidence)
            hib = reports[i]["metrics"][m].get("higher_is_better")
            if hib != reports[j]["metrics"][m].get("higher_is_better"):
                hib = None
            entry["metrics"].append({"metric": m, "higher_is_better": hib, **d,
                                     "verdict": _verdict(d, labels[i], labels[j], hib)})
    return out


# ---------------------------------------------------------------- across test sets (paper (a)'s Avg.)

def across_testset_tables(reports: Sequence[Mapping[str, Any]],
                          configs: Sequence[Mapping[str, Any] | None] | None = None) -> list[dict[str, Any]]:
    """Per measurement that several test sets share (dataset, embedder, judge, limits): per metric, each editor's
    mean on every test set and the Avg. over them (see :mod:`faceedit_bench.analysis.across_testsets`)."""
    groups: dict[Any, list[Mapping[str, Any]]] = {}
    for r, config in zip(reports, configs if configs is not None else [None] * len(reports)):
        aspects = _aspects(r)
        key = (*(repr(aspects[a][1]) for a in ("dataset", "embedder", "judge")), _limits(config))
        groups.setdefault(key, []).append(r)
    out = []
    for members in groups.values():
        testsets = {f"{(r.get('testset') or {}).get('name')} {(r.get('testset') or {}).get('version')}" for r in members}
        if len(testsets) < 2:
            continue
        first = members[0]
        names = list(dict.fromkeys(n for r in members for n in r.get("metrics") or {}))
        tables = []
        for name in names:
            order, rows = across_testsets(
                (_editor_label(r), ((r.get("components") or {}).get("editor") or {}).get("name", ""),
                 f"{(r.get('testset') or {}).get('name')} {(r.get('testset') or {}).get('version')}",
                 (r.get("metrics") or {}).get(name), (r.get("run") or {}).get("key", "")[:12]) for r in members)
            order = sorted(order)
            hib = {m["metrics"][name].get("higher_is_better") for m in members if name in (m.get("metrics") or {})}
            direction = hib.pop() if len(hib) == 1 else None
            table_rows = [{"editor": row.editor + (" (reference: no edit)" if row.reference else ""),
                           "reference": row.reference,
                           "cells": [_cell((row.cells.get(t) or {}).get("mean"),
                                           fmt_num((row.cells.get(t) or {}).get("mean")) if t in row.cells
                                           else "no run") for t in order],
                           "avg": _cell(row.average(order), fmt_num(row.average(order)) if row.average(order) is not None
                                        else f"n/a ({row.covered(order)} of {len(order)} test sets)")}
                          for row in rows]
            avgs = [row["avg"] for row in table_rows]
            best = _best(avgs, direction, {i for i, row in enumerate(table_rows) if row["reference"]})
            tables.append({"metric": name, "testsets": order, "rows": table_rows, "best": best,
                           "direction": _direction(direction)})
        comps = first.get("components") or {}
        judge = comps.get("judge")
        patterns = []
        if judge:  # Table 3 over the test sets: every per-attribute count summed, then the threshold
            editors: dict[str, list[Mapping[str, Any]]] = {}
            for r in members:
                editors.setdefault(_editor_label(r), []).append(r)
            patterns = [{"editor": editor, "testsets": len(runs), "patterns": pooled_patterns(
                (r.get("overediting") or {}).get("attribute_changes") for r in runs)} for editor, runs in editors.items()]
        out.append({"title": f"{(comps.get('dataset') or {}).get('name')} · {_describe('embedder', first)} · "
                             f"{'judge ' + str(judge.get('name')) if judge else 'no judge'}", "tables": tables,
                    "patterns": patterns})
    return out


PATTERNS_MISSING = "not available: a run's report has no per-attribute overedit counts (before report 1.2); rerun it"
ACROSS_LEGEND = ("Avg. = unweighted mean of the test-set means (paper (a), Tables 1, 2, 4), only when an editor was "
                 "run on every test set of the table; no interval")


# ---------------------------------------------------------------- the comparison

def compare_runs(paths: Sequence[Path], *, confidence: float = 0.95) -> dict[str, Any]:
    """Side-by-side rows, comparability warnings and paired differences of two or more runs (JSON-safe)."""
    if len(paths) < 2:
        raise CompareError(f"compare needs at least two runs, got {len(paths)}: "
                           "faceedit-bench compare <run_dir> <run_dir> [...]")
    loaded = [load_run(p) for p in paths]
    reports, run_dirs = [r for r, _ in loaded], [d for _, d in loaded]
    configs = [_config(d) for d in run_dirs]
    labels = run_labels(reports, configs)
    runs = [{"label": lab, "path": str(d), "name": (r.get("run") or {}).get("name"),
             "key": (r.get("run") or {}).get("key"), "created_at": (r.get("run") or {}).get("created_at"),
             "skipped_metrics": dict(r.get("skipped_metrics") or {}), "reference": _is_reference(r)}
            for lab, r, d in zip(labels, reports, run_dirs)]
    references = {i for i, r in enumerate(reports) if _is_reference(r)}
    rows = metric_rows(reports) + outcome_rows(reports) + fairness_rows(reports) + cost_rows(reports)
    for row in rows:
        row["best"] = _best(row["cells"], row["higher_is_better"], references)
    keys = [r["key"] for r in runs]
    notes = [f"{runs[i]['label']} and {runs[j]['label']} have the same run key (the same experiment)"
             for i, j in combinations(range(len(runs)), 2) if keys[i] and keys[i] == keys[j]]
    return {
        "runs": runs,
        "warnings": comparability_warnings(reports, labels),
        "notes": notes,
        "rows": rows,
        "paired": paired_comparisons(reports, run_dirs, labels, confidence=confidence),
        "across_testsets": across_testset_tables(reports, configs),
        "trajectories": [{"label": lab, "reference": _is_reference(r), "series": dict(r.get("trajectory") or {})}
                         for lab, r in zip(labels, reports)],
        "summaries": {name: [{"label": lab, **dict((r.get("metrics") or {}).get(name) or {})}
                             for lab, r in zip(labels, reports) if name in (r.get("metrics") or {})]
                      for name in dict.fromkeys(n for r in reports for n in r.get("metrics") or {})},
        "confidence": confidence,
    }


# ---------------------------------------------------------------- output

BEST_LEGEND = ("best = best mean of the row (direction from the report); it does not say the difference is "
               "significant: see the paired differences")


def format_compare(result: Mapping[str, Any], fmt: str = "text") -> str:
    if fmt not in FORMATS:
        raise CompareError(f"unknown format {fmt!r}; use one of {', '.join(FORMATS)}")
    return {"text": _text, "markdown": _markdown, "html": _html}[fmt](result)


def _paired_line(m: Mapping[str, Any]) -> str:
    return (f"{display_name(m['metric'])}: mean difference {fmt_ci(m)} n={m['n']}, {fmt_p_equation(m['p_value'])}"
            f" -> {m['verdict']}")


def _skipped_notes(result: Mapping[str, Any]) -> list[str]:
    """Why metrics were skipped, one line per (metric, reason) with the runs it applies to."""
    runs: dict[tuple[str, str], list[str]] = {}
    for run in result["runs"]:
        for name, reason in run["skipped_metrics"].items():
            runs.setdefault((name, reason), []).append(run["label"])
    everyone = len(result["runs"])
    return [f"{display_name(name)} skipped in {'every run' if len(labels) == everyone else ', '.join(labels)}: "
            f"{reason}" for (name, reason), labels in runs.items()]


def _text(result: Mapping[str, Any]) -> str:
    labels = [r["label"] for r in result["runs"]]
    lines = [f"Comparing {len(labels)} runs"]
    lines += [f"  {r['label']}: {r['name']}  key {str(r['key'])[:12]}  {r['path']}" for r in result["runs"]]
    if result["warnings"]:
        lines += ["", "WARNING: these runs are NOT comparable on every row:"]
        lines += [f"  ! {w}" for w in result["warnings"]]
    lines += [f"note: {n}" for n in result["notes"]]
    table = [["", *labels]] + [
        [row["label"], *(c["text"] + (" *" if i in row["best"] else "") for i, c in enumerate(row["cells"]))]
        for row in result["rows"]]
    widths = [max(len(r[col]) for r in table) for col in range(len(table[0]))]
    lines.append("")
    for n, r in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    lines += ["", f"* {BEST_LEGEND}"]
    lines += _skipped_notes(result)
    for group in result.get("across_testsets") or []:
        lines += ["", f"All test sets: {group['title']} ({ACROSS_LEGEND}; * best Avg.)"]
        for t in group["tables"]:
            lines += ["", f"  {display_name(t['metric'])}" + (f" ({t['direction']})" if t["direction"] else "")]
            table = [["editor", *t["testsets"], "Avg."]] + [
                [row["editor"], *(c["text"] for c in row["cells"]), row["avg"]["text"] + (" *" if i in t["best"] else "")]
                for i, row in enumerate(t["rows"])]
            lines += ["  " + line for line in _aligned(table)]
        for p in group["patterns"]:
            lines += ["", f"  Frequent overediting patterns of {p['editor']}, pooled over {p['testsets']} test set(s):"]
            if p["patterns"] is None:
                lines.append(f"    {PATTERNS_MISSING}")
            lines += [f"    {x['attribute']} -> {x['category']}: {x['count']}/{x['edits']} ({100 * x['share']:.1f}%)"
                      for x in p["patterns"] or []]
            if p["patterns"] == []:
                lines.append(f"    none reaches {PATTERN_THRESHOLD:.0%}")
    lines += ["", f"Paired differences (first minus second, {result['confidence']:.0%} CI, shared included sessions):"]
    for p in result["paired"]:
        head = f"  {p['a']} - {p['b']}"
        if p["reason"]:
            lines.append(f"{head}: {p['reason']}")
            continue
        lines.append(f"{head}: {p['shared_sessions']} shared sessions ({p['only_a']} only in the first, "
                     f"{p['only_b']} only in the second)")
        lines += [f"    {_paired_line(m)}" for m in p["metrics"]]
    return "\n".join(lines)


def _aligned(table: list[list[str]]) -> list[str]:
    widths = [max(len(r[col]) for r in table) for col in range(len(table[0]))]
    lines = []
    for n, r in enumerate(table):
        lines.append("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _md(text: str) -> str:
    """Markdown-safe table cell: no HTML, no table breaks, no emphasis or links from data."""
    out = str(text).replace("\\", "\\\\")
    for ch in "|*_`[]":
        out = out.replace(ch, "\\" + ch)
    return out.replace("<", "&lt;").replace(">", "&gt;").replace("\n", " ")


def _markdown(result: Mapping[str, Any]) -> str:
    labels = [r["label"] for r in result["runs"]]
    lines = []
    if result["warnings"]:
        lines.append("> **WARNING: these runs are not comparable on every row:**")
        lines += [f"> - {_md(w)}" for w in result["warnings"]]
        lines.append("")
    lines += [f"- {_md(n)}" for n in result["notes"]]
    lines.append("| | " + " | ".join(_md(lab) for lab in labels) + " |")
    lines.append("|---|" + "---|" * len(labels))
    for row in result["rows"]:
        cells = [f"**{_md(c['text'])}**" if i in row["best"] else _md(c["text"]) for i, c in enumerate(row["cells"])]
        lines.append(f"| {_md(row['label'])} | " + " | ".join(cells) + " |")
    lines += ["", f"Bold: {_md(BEST_LEGEND)}."]
    lines += [f"- {_md(n)}" for n in _skipped_notes(result)]
    for group in result.get("across_testsets") or []:
        lines += ["", f"**All test sets: {_md(group['title'])}** ({_md(ACROSS_LEGEND)}; bold: best Avg.)"]
        for t in group["tables"]:
            lines += ["", f"{_md(display_name(t['metric']))} {_md(t['direction'])}", "",
                      "| editor | " + " | ".join(_md(x) for x in t["testsets"]) + " | Avg. |",
                      "|---|" + "---|" * (len(t["testsets"]) + 1)]
            for i, row in enumerate(t["rows"]):
                avg = _md(row["avg"]["text"])
                lines.append(f"| {_md(row['editor'])} | " + " | ".join(_md(c["text"]) for c in row["cells"])
                             + f" | {'**' + avg + '**' if i in t['best'] else avg} |")
        for p in group["patterns"]:
            lines += ["", f"Frequent overediting patterns of {_md(p['editor'])}, pooled over {p['testsets']} test set(s):"]
            if p["patterns"] is None:
                lines.append(f"- {_md(PATTERNS_MISSING)}")
            lines += [f"- {_md(x['attribute'])} → {_md(x['category'])}: {x['count']}/{x['edits']} "
                      f"({100 * x['share']:.1f}%)" for x in p["patterns"] or []]
    lines += ["", f"Paired differences (first minus second, {result['confidence']:.0%} CI, shared included sessions):",
              ""]
    for p in result["paired"]:
        head = f"**{_md(p['a'])} − {_md(p['b'])}**"
        if p["reason"]:
            lines.append(f"- {head}: {_md(p['reason'])}")
            continue
        lines.append(f"- {head}: {p['shared_sessions']} shared sessions")
        lines += [f"  - {_md(_paired_line(m))}" for m in p["metrics"]]
    return "\n".join(lines) + "\n"


def _html(result: Mapping[str, Any]) -> str:
    return render("compare.html.j2", result=result, legend=BEST_LEGEND, skipped=_skipped_notes(result),
                  display=display_name, across_legend=ACROSS_LEGEND, plots=compare_plots(result),
                  patterns_missing=PATTERNS_MISSING)


def compare_plots(result: Mapping[str, Any]) -> dict[str, str | None]:
    """The comparison's plots as data URIs: the runs' trajectories on one axis per series (FSS 0-1, SC 0-100)
    and a forest plot of every metric (each run's mean and CI)."""
    import base64

    def uri(data: bytes | None) -> str | None:
        return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")

    names = list(dict.fromkeys(n for run in result.get("trajectories") or [] for n in run["series"]))
    panels = {f"{display_name(n)}_k": {run["label"]: run["series"][n] for run in result["trajectories"]
                                       if run["series"].get(n)} for n in names}
    metric_of = {f"{display_name(n)}_k": n for n in names}
    forest_panels = {display_name(name): [(row["label"], [("", row)]) for row in rows]
                     for name, rows in (result.get("summaries") or {}).items()}
    return {
        "trajectories": uri(plots.trajectory_lines(panels, metric_of=metric_of)),
        "metrics": uri(plots.forest(forest_panels, metric_of={display_name(n): n for n in result.get("summaries") or {}},
                                    xlabels={display_name(n): f"{display_name(n)}: each run's mean and CI"
                                             for n in result.get("summaries") or {}})),
        "unavailable": None if plots.available() else "plots need matplotlib (pip install matplotlib)",
    }
