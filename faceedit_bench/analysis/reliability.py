"""Inter-rater reliability of human scores: Fleiss' κ and Krippendorff's α (interval), per axis.

- :func:`fleiss_kappa`: ``statsmodels.stats.inter_rater.fleiss_kappa`` over the units rated by the most
  common number of raters (Fleiss' κ needs the same number of ratings per unit; the units left out are
  counted). Scores are categories, so they must be whole points of the scale.
- :func:`krippendorff_alpha`: ``krippendorff.alpha(level_of_measurement="interval")`` over the rater x
  unit matrix with missing cells, so units with any number of raters (>= 2 to count) take part. ``level``
  names another level of measurement (``ordinal``: only the scores' order counts, as the published table of
  ImagenHub's raters takes it).

Either returns ``None`` with a reason when it is undefined (no unit with two ratings, one value only),
never a number standing in for one.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

#: unit -> rater -> score
UnitScores = Mapping[Hashable, Mapping[Hashable, float]]


def fleiss_kappa(units: UnitScores) -> dict[str, Any]:
    """Fleiss' kappa over the units rated by the most common number of raters (``value``, ``units``,
    ``raters_per_unit``, ``units_left_out``; ``reason`` when none can be computed)."""
    sizes = Counter(len(r) for r in units.values() if len(r) >= 2)
    if not sizes:
        return {"value": None, "units": 0, "raters_per_unit": None, "units_left_out": len(units),
                "reason": "no unit has two or more ratings"}
    per_unit = max(sizes, key=lambda n: (sizes[n], n))  # the most common count; ties: the larger
    rows = [sorted(r.values()) for r in units.values() if len(r) == per_unit]
    out = {"units": len(rows), "raters_per_unit": per_unit, "units_left_out": len(units) - len(rows)}
    if any(not float(s).is_integer() for row in rows for s in row):
        return {**out, "value": None, "reason": "scores are not whole points: Fleiss' kappa needs categories"}
    from statsmodels.stats import inter_rater  # on use: statsmodels (and pandas) cost a second at start-up

    table, categories = inter_rater.aggregate_raters(np.asarray(rows, dtype=int))
    if len(categories) < 2:
        return {**out, "value": None, "reason": "every rating is the same score: kappa is undefined"}
    value = float(inter_rater.fleiss_kappa(table, method="fleiss"))
    return {**out, "value": value if math.isfinite(value) else None, "categories": [int(c) for c in categories]}


def krippendorff_alpha(units: UnitScores, raters: Sequence[Hashable] | None = None,
                       level: str = "interval") -> dict[str, Any]:
    """Krippendorff's alpha at ``level`` (``interval``, ``ordinal`` or ``nominal``) over every unit with two
    or more ratings (``value``, ``units``, ``raters``, ``level``)."""
    raters = list(raters) if raters is not None else sorted({r for u in units.values() for r in u}, key=str)
    index = {r: i for i, r in enumerate(raters)}
    pairable = [u for u in units.values() if len(u) >= 2]
    out = {"units": len(pairable), "raters": len(raters), "level": level}
    values = {s for u in pairable for s in u.values()}
    if not pairable:
        return {**out, "value": None, "reason": "no unit has two or more ratings"}
    if len(values) < 2:
        return {**out, "value": None, "reason": "every rating is the same score: alpha is undefined"}
    data = np.full((len(raters), len(pairable)), np.nan)
    for j, unit in enumerate(pairable):
        for rater, score in unit.items():
            data[index[rater], j] = score
    import krippendorff  # on use, as statsmodels above

    value = float(krippendorff.alpha(reliability_data=data, level_of_measurement=level))
    return {**out, "value": value if math.isfinite(value) else None}


#: The coefficients :func:`reliability` computes, by name.
COEFFICIENTS = ("fleiss_kappa", "krippendorff_alpha")


def reliability(units: UnitScores, coefficient: str, *, raters: Sequence[Hashable] | None = None,
                level: str = "interval") -> dict[str, Any]:
    """Inter-rater reliability of one ratings table (unit -> rater -> score) by ``coefficient``:
    ``fleiss_kappa`` (:func:`fleiss_kappa`; whole-point scores as categories) or ``krippendorff_alpha``
    (:func:`krippendorff_alpha`, with its ``raters`` and ``level``). ``value`` is None with a ``reason`` where
    the coefficient is undefined."""
    if coefficient == "fleiss_kappa":
        if raters is not None or level != "interval":
            raise ValueError("fleiss_kappa takes no raters or level (they are Krippendorff's alpha's)")
        return fleiss_kappa(units)
    if coefficient == "krippendorff_alpha":
        return krippendorff_alpha(units, raters, level)
    raise ValueError(f"coefficient={coefficient!r}; choose one of {', '.join(COEFFICIENTS)}")
