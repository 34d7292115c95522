"""How metrics are named on pages and plots: the label their registration states (``drop_fss`` ->
``Drop_FSS``), carried by the run report's ``measures`` (:mod:`faceedit_bench.report.measures`)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from faceedit_bench.report.measures import label_of, report_measures

Measures = Mapping[str, Mapping[str, Any]]


def display_name(metric: str, measures: Measures | None = None) -> str:
    return label_of(metric, measures)


def merged_measures(reports: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, Any]]:
    """The measures of several reports; for a name stated by more than one, the first report's statement."""
    out: dict[str, dict[str, Any]] = {}
    for report in reports:
        for name, m in report_measures(report).items():
            out.setdefault(name, m)
    return out
