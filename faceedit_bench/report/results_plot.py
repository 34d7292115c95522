"""``faceedit-bench results ... --plot OUT.html``: any metric of many runs, by editor and test set, from the
long sessions table (:mod:`faceedit_bench.report.results`).

One forest plot per metric: a row per editor (with what else differs between its runs: dataset, embedder,
judge), a dot per test set at the mean over the row's included sessions, a bar over its Student-t interval
(:func:`faceedit_bench.analysis.statistics.summarize`). Axes follow the metric's declared range, as everywhere
(:mod:`faceedit_bench.report.forest_svg`). The page is one self-contained file without scripts, in the
shared look of the project's pages (style.css).
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from faceedit_bench.analysis.baselines import is_reference_editor
from faceedit_bench.analysis.statistics import summarize
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report.forest_svg import Forest, forest_svg
from faceedit_bench.report.measures import bounds_of, label_of, report_measures
from faceedit_bench.report.versions import named_version

#: What besides the editor may tell two rows apart, named in a row's label only where the rows differ.
ASPECTS = ("dataset", "embedder", "embedder_version", "judge", "judge_version")
#: Columns of the sessions table that are not metrics.
NOT_METRICS = frozenset({"run_key", "run_name", "editor", "editor_version", "testset", "testset_version",
                         "testset_hash", "dataset", "embedder", "embedder_version", "judge", "judge_version",
                         "face_id", "identity", "session_id", "condition", "excluded", "run_complete",
                         "gender", "skin_tone", "age_group", "race", "age_bin"})


class PlotError(FaceEditBenchError):
    """A metric the table does not have, or a table with nothing to draw."""


def metric_columns(table: Any) -> list[str]:
    """The table's numeric columns that are metrics (every session metric of the runs)."""
    import pyarrow as pa

    return [f.name for f in table.schema if f.name not in NOT_METRICS and not f.name.startswith("label_")
            and (pa.types.is_floating(f.type) or pa.types.is_integer(f.type))]


def _rows(table: Any, metric: str) -> dict[tuple[str, str], list[float]]:
    """Included sessions' values per (run key, test set)."""
    def column(name: str) -> list[Any]:  # tables of older runs lack "condition"
        return table.column(name).to_pylist() if name in table.column_names else [None] * table.num_rows

    columns = {c: column(c) for c in ("run_key", "testset", "excluded", "condition", metric)}
    out: dict[tuple[str, str], list[float]] = {}
    for key, testset, excluded, condition, value in zip(*columns.values()):
        if excluded or (condition or "baseline") != "baseline" or value is None or not math.isfinite(value):
            continue  # excluded sessions and other prompt conditions are not the run's headline numbers
        out.setdefault((key, testset), []).append(float(value))
    return out


def _labels(runs: Mapping[str, Mapping[str, str]]) -> dict[str, str]:
    """A row label per run key: editor and model version, then the aspects that differ between the runs."""
    differing = [a for a in ASPECTS if len({r.get(a, "") for r in runs.values()}) > 1]
    labels = {}
    for key, r in runs.items():
        label = named_version(r["editor"], r.get("editor_version"))
        label += "".join(f" · {a.replace('_', ' ')} {r.get(a) or 'none'}" for a in differing)
        labels[key] = ("[reference] " if is_reference_editor(r["editor"]) else "") + label
    return labels


def forests(table: Any, metrics: Sequence[str] | None = None,
            measures: Mapping[str, Mapping[str, Any]] | None = None) -> list[Markup]:
    """One SVG forest per metric: rows by editor, a series per test set."""
    available = metric_columns(table)
    wanted = list(metrics) if metrics else available
    unknown = [m for m in wanted if m not in available]
    if unknown:
        raise PlotError(f"no metric {', '.join(map(repr, unknown))} in the sessions table; "
                        f"its metrics: {', '.join(available) or 'none'}")
    ids = table.select(["run_key", "editor", "editor_version", "testset", *ASPECTS]).to_pylist()
    runs = {r["run_key"]: r for r in ids}
    labels = _labels(runs)
    out = []
    for metric in wanted:
        values = _rows(table, metric)
        testsets = sorted({t for _, t in values})
        if not testsets:
            continue
        rows: dict[str, dict[str, dict[str, Any]]] = {}
        for (key, testset), xs in values.items():
            rows.setdefault(labels[key], {})[testset] = summarize(xs)
        m = (measures or {}).get(metric) or {}
        out.append(forest_svg(Forest(
            label_of(metric, measures), str(m.get("unit") or ""), m.get("higher_is_better"), testsets,
            [(label, [(s.get("mean"), s.get("ci_low"), s.get("ci_high"))
                      for s in (by_testset.get(t) or {} for t in testsets)])
             for label, by_testset in sorted(rows.items(), key=lambda item: (not item[0].startswith("["), item[0]))],
            bounds_of(metric, measures))))
    if not out:
        raise PlotError(f"no included session has a value of {', '.join(wanted)}, so there is nothing to draw (a "
                        "metric the runs skipped, such as SC without a judge, has none)")
    return out


def run_measures(run_dirs: Iterable[str]) -> dict[str, dict[str, Any]]:
    """How to read each metric (label, direction, unit, range), from the runs' reports; the first run wins."""
    out: dict[str, dict[str, Any]] = {}
    for run in run_dirs:
        try:
            report = json.loads((Path(run) / "report.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue  # an MLflow run (no folder): its metrics are drawn with their names and an axis through 0
        for name, m in report_measures(report).items():
            out.setdefault(name, m)
    return out


def plot_page(table: Any, run_dirs: Iterable[str], metrics: Sequence[str] | None = None) -> str:
    from faceedit_bench.report.templates import render

    return render("results_plot.html.j2", n_runs=len(set(table.column("run_key").to_pylist())), caption=CAPTION,
                  figures=forests(table, metrics, run_measures(run_dirs)))


CAPTION = ("Each row is an editor (with what else differs between its runs); each dot the mean of a metric over "
           "the run's included sessions on one test set, with its 95% Student-t interval over those sessions. "
           "Metrics with a declared range are drawn on all of it, others on an axis through 0.")


def write_plot(args: Any, gathered: Any) -> None:
    """``--plot``: the page of ``gathered``, the runs' sessions table."""
    import sys

    from faceedit_bench.storage.atomic import write_text

    write_text(args.plot, plot_page(gathered.table, gathered.runs, args.metric))
    print(f"wrote {args.plot}", file=sys.stderr)
