"""Intersectional groups: cells of two demographic attributes (e.g. gender × skin tone).

Paper (a)'s CelebSET tables report four cells, ML/MD/FL/FD (male/female × light/dark skin), and
the "two worst groups" per model. :func:`intersect_labels` builds the cell label of each item
from its two attribute labels (an item missing either label has no cell and is counted, never
guessed); :func:`intersectional_groups` summarises every cell, names the worst cells and runs the
k-group statistics of :mod:`faceedit_bench.analysis.group_tests` across the cells.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.analysis.cached import cached_statistic
from faceedit_bench.analysis.group_tests import compare_k_groups, worst_groups
from faceedit_bench.analysis.samples import split_by_label

#: Paper (a)'s cell codes: gender letter then skin-tone letter (ML, MD, FL, FD), with ``sep=""``.
GENDER_CODES: dict[str, str] = {"male": "M", "female": "F"}
SKIN_CODES: dict[str, str] = {"light": "L", "dark": "D"}
PAPER_A_CELLS = ("ML", "MD", "FL", "FD")


def intersect_labels(first: Sequence[str | None], second: Sequence[str | None], *,
                     first_codes: Mapping[str, str] | None = None, second_codes: Mapping[str, str] | None = None,
                     sep: str = " × ") -> list[str | None]:
    """The cell label of each item: ``code(first) + sep + code(second)``, None where either label is None.

    Without codes a label stands for itself ("male × dark"); with codes every label must have one
    (``intersect_labels(g, s, first_codes=GENDER_CODES, second_codes=SKIN_CODES, sep="")`` gives
    "MD"), so a misspelt label is an error, not a cell of its own.
    """
    if len(first) != len(second):
        raise ValueError(f"got {len(first)} labels of the first attribute but {len(second)} of the second; "
                         f"give both labels for every item (None where one is unknown)")
    coded_first = _coded(first, first_codes, "first_codes")
    coded_second = _coded(second, second_codes, "second_codes")
    return [None if a is None or b is None else f"{a}{sep}{b}" for a, b in zip(coded_first, coded_second)]


@cached_statistic("intersectional_groups")
def intersectional_groups(values: Sequence[float], first: Sequence[str | None], second: Sequence[str | None], *,
                          name: str, higher_is_better: bool | None, confidence: float = 0.95,
                          first_codes: Mapping[str, str] | None = None, second_codes: Mapping[str, str] | None = None,
                          sep: str = " × ", cells: Sequence[str] | None = None, n_worst: int = 2,
                          n_resamples: int = 9999, seed: int = 0, ci_method: str = "percentile",
                          min_group_size: int = 2, bounds: Any = None, ideal: float | None = None) -> dict[str, Any]:
    """Per-cell summaries, the ``n_worst`` worst cells by mean and the k-group statistics across cells.

    ``values[i]`` belongs to the cell of ``first[i]`` and ``second[i]``. ``cells`` fixes the cells
    and their order (e.g. :data:`PAPER_A_CELLS`), so a cell without items is reported with n = 0
    rather than missing; a built label outside ``cells`` is an error. Items with a None label are
    counted in ``unlabelled``. Cells too small for the tests (``left_out``) are not ranked
    either. The result is :func:`compare_k_groups`'s, with ``test``
    "intersectional", ``unlabelled`` and ``worst`` added.
    """
    labels = intersect_labels(first, second, first_codes=first_codes, second_codes=second_codes, sep=sep)
    grouped, unlabelled = split_by_label(values, labels)
    if cells is not None:
        unknown = sorted(set(grouped) - set(cells))
        if unknown:
            raise ValueError(f"{name}: cells {unknown} are not among the expected cells {list(cells)}; "
                             f"check the labels and codes, or pass cells=None to take the cells found")
        grouped = {c: grouped.get(c, []) for c in cells}
    result = compare_k_groups(grouped, name=name, higher_is_better=higher_is_better, confidence=confidence,
                              n_resamples=n_resamples, seed=seed, ci_method=ci_method, min_group_size=min_group_size,
                              bounds=bounds, ideal=ideal)
    result["test"] = "intersectional"
    result["unlabelled"] = unlabelled
    ranked = {c: s for c, s in result["groups"].items() if c not in result["left_out"]}  # same cells as the tests
    result["worst"] = worst_groups(ranked, n=n_worst, higher_is_better=higher_is_better)
    return result


def _coded(labels: Sequence[str | None], codes: Mapping[str, str] | None, what: str) -> list[str | None]:
    if codes is None:
        return [None if label is None else str(label) for label in labels]
    unknown = sorted({str(label) for label in labels if label is not None and label not in codes})
    if unknown:
        raise ValueError(f"labels {unknown} have no code in {what} {dict(codes)}; add them to {what}")
    return [None if label is None else codes[label] for label in labels]
