"""The ``human_agreement`` section: a ratings CSV against the runs that made the rated outputs.

:func:`human_section` adds to :func:`faceedit_bench_audit.human.agreement.human_agreement` (reliability,
tests, VLM − human) the agreement of metrics with people (CREval Table 3 layout: item- and system-level
Spearman and Kendall, pairwise accuracy of system rankings) and, when two or more measures rank the same
editors, the rank table. :func:`format_human` is the console table; the HTML page is ``human.html.j2``.
"""

from __future__ import annotations

import io
from collections import defaultdict
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from rich import box
from rich.console import Console
from rich.table import Table

from faceedit_bench.api import redact
from faceedit_bench.api.sections import fmt, render_template
from faceedit_bench.api.statistics import metric_agreement, rank_table
from faceedit_bench_audit.audit.tables import REGISTERED
from faceedit_bench_audit.human.agreement import human_agreement, unit_means
from faceedit_bench_audit.human.ratings import Ratings, RatingsError
from faceedit_bench_audit.human.runs import RatedRun, assign_editors, vlm_scores

HUMAN = "human"


def human_section(ratings: Ratings, runs: Sequence[RatedRun] = (), *, metrics: Sequence[str] = (),
                  against: str = "edit_success", vlm_axes: Mapping[str, str] | None = None,
                  confidence: float = 0.95, alpha: float = 0.05) -> dict[str, Any]:
    """``vlm_axes`` maps a human axis to the run value it is compared with (default: the same name)."""
    ratings = assign_editors(ratings, runs)
    vlm = vlm_scores(runs, ratings.axes, vlm_axes) if runs else None
    section = human_agreement(ratings, vlm, confidence=confidence, alpha=alpha)
    section["runs"] = [{"editor": r.label, "run_dir": str(r.run_dir), "run_key": (r.report.get("run") or {}).get("key")}
                       for r in runs]
    if runs:
        section["metric_agreement"] = _metric_agreement(ratings, runs, vlm or {}, metrics, against)
        section["rank_table"] = _ranks(ratings, runs, metrics, against)
    return section


def _direction(runs: Sequence[RatedRun], name: str) -> bool | None:
    """The direction the runs state for ``name``, else the registered rubric axis of that name (people rate
    paper (b)'s axes); None when neither says (or the axis has none, e.g. skin tone): ranked by nobody."""
    found = [d for d in (r.higher_is_better(name) for r in runs) if d is not None]
    if found:
        return found[0]
    axis = REGISTERED.get(name)
    return None if axis is None else axis.higher_is_better


def _keyed(means: Mapping[tuple[str, str, str], float]) -> dict[tuple[str, tuple[str, str]], float]:
    return {(e, (i, c)): v for (e, i, c), v in means.items()}


def _metric_agreement(ratings: Ratings, runs: Sequence[RatedRun], vlm: Mapping[tuple[str, str, str, str], float],
                      metrics: Sequence[str], against: str) -> list[dict[str, Any]]:
    rows = []
    for axis in ratings.axes:  # the judge's own value for the axis, against people on that axis
        judge = {(e, (i, c)): v for (e, i, c, a), v in vlm.items() if a == axis}
        if judge:
            rows.append({"metric": f"vlm:{axis}", "against": axis,
                         **metric_agreement(_keyed(unit_means(ratings, axis)), judge)})
    if metrics and against not in ratings.axes:
        raise RatingsError(f"--against {against}: the ratings have no axis {against!r}; axes: "
                           f"{', '.join(ratings.axes)}")
    people = _keyed(unit_means(ratings, against)) if metrics else {}
    for name in metrics:
        scores = {(r.label, key): v for r in runs for key, v in r.values(name).items()}
        if not scores:
            raise RatingsError(f"--metric {name}: no run has a value {name!r} in its sessions table; metrics there: "
                               f"{', '.join(sorted(runs[0].report.get('metrics') or {}))}")
        mine, theirs = _direction(runs, name), _direction(runs, against)
        same = mine == theirs if None not in (mine, theirs) else True  # unknown: read the correlation's sign
        rows.append({"metric": name, "against": against, **metric_agreement(people, scores, same_direction=same)})
    return rows


def _ranks(ratings: Ratings, runs: Sequence[RatedRun], metrics: Sequence[str], against: str) -> dict[str, Any] | None:
    if against not in ratings.axes:
        return None
    people: dict[str, list[float]] = defaultdict(list)
    for (editor, _, _), v in unit_means(ratings, against).items():
        people[editor].append(v)
    means = {f"{HUMAN}:{against}": {e: float(np.mean(v)) for e, v in people.items()}}
    directions = {f"{HUMAN}:{against}": _direction(runs, against)}
    for name in dict.fromkeys([against, *metrics]):
        values = {r.label: (r.report.get("metrics") or {}).get(name, {}).get("mean") for r in runs}
        values = {k: float(v) for k, v in values.items() if v is not None}
        if values:
            means[name], directions[name] = values, _direction(runs, name)
    return rank_table(means, directions) if len(means) >= 2 else None


# -- console ------------------------------------------------------------------------------------------


class _Titled(Table):
    """A table printed under its own unwrapped title line."""

    def __init__(self, title: str) -> None:
        super().__init__(box=box.SIMPLE_HEAD, pad_edge=False, show_edge=False)
        self.heading = title


def _table(title: str, *columns: str) -> _Titled:
    table = _Titled(title)
    for i, column in enumerate(columns):
        table.add_column(column, justify="left" if i == 0 else "right")
    return table


def _value(block: Mapping[str, Any] | None) -> str:
    return fmt((block or {}).get("value"))


def format_human(section: Mapping[str, Any], width: int = 120) -> str:
    counts = section["counts"]
    parts: list[Any] = [f"Human ratings {section['source']}: {counts['ratings']} ratings by {counts['raters']} "
                        f"raters of {counts['outputs']} outputs ({counts['items']} items); conditions "
                        f"{', '.join(counts['conditions'])}"]
    axes = _table("reliability and means per axis", "axis", "outputs", "human mean", "Fleiss kappa",
                  "Krippendorff alpha", "VLM - human", "p")
    vlm = (section.get("vlm_vs_human") or {}).get("by_axis") or {}
    for axis, a in section["axes"].items():
        diff = vlm.get(axis) or {}
        axes.add_row(axis, str(a["outputs"]), fmt(a["human"]["mean"]), _value(a["fleiss_kappa"]),
                     _value(a["krippendorff_alpha"]), fmt(diff.get("difference")), fmt(diff.get("p_value"), "p"))
    parts.append(axes)
    for family in section.get("paired") or []:
        paired = _table(f"{family['condition']} vs {family['baseline']} (paired Wilcoxon, Holm over axes)",
                        "axis", "pairs", "mean delta", "p", "p Holm")
        for t in family["tests"]:
            paired.add_row(t["name"], str(t["n_pairs"]), fmt(t["mean_delta"]), fmt(t["p_value"], "p"),
                           fmt(t["p_holm"], "p"))
        parts.append(paired)
    if section.get("group_tests"):
        races = _table("across races (Kruskal-Wallis; White vs non-White Mann-Whitney)", "axis", "condition", "H",
                       "p", "White vs rest p")
        for g in section["group_tests"]:
            races.add_row(g["axis"], g["condition"], fmt(g["kruskal"]["h"]), fmt(g["kruskal"]["p_value"], "p"),
                          fmt((g.get("white_vs_rest") or {}).get("p_value"), "p"))
        parts.append(races)
    if section.get("metric_agreement"):
        agree = _table("agreement with people (item and system level)", "metric", "against", "items",
                       "item rho", "item tau", "systems", "system rho", "system tau", "pairwise acc.")
        for m in section["metric_agreement"]:
            item, system, pair = m["item_level"], m["system_level"], m["pairwise"]
            agree.add_row(m["metric"], m["against"], str(m["items"]), fmt(item.get("spearman")),
                          fmt(item.get("kendall")), str(len(m["systems"])), fmt(system.get("spearman")),
                          fmt(system.get("kendall")), fmt(pair.get("accuracy")))
        parts.append(agree)
    ranks = section.get("rank_table")
    if ranks:
        table = _table("ranks of the editors (1 = best)", "editor", *ranks["metrics"])
        for system in ranks["systems"]:
            table.add_row(system, *(_rank(ranks["metrics"][m].get(system)) for m in ranks["metrics"]))
        parts.append(table)
    buffer = io.StringIO()
    console = Console(file=buffer, width=width, no_color=True, highlight=False, emoji=False, markup=False)
    for part in parts:
        if isinstance(part, _Titled):
            console.print(part.heading, soft_wrap=True)
        console.print(part)
        console.print("")
    return buffer.getvalue().rstrip("\n")


def _rank(cell: Mapping[str, Any] | None) -> str:
    return "n/a" if not cell else f"{fmt(cell['rank'])} ({fmt(cell['value'])})"


def render_human_html(section: Mapping[str, Any]) -> str:
    return redact(render_template("faceedit_bench_audit", "human.html.j2", human=section))
