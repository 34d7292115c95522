"""Field-by-field comparison of a submitted record with the record of its re-scored run.

Compared: every number the leaderboard shows. Metric summaries (overall, per group,
trajectories, disparity distances) within the metric's tolerance; counts and bias flags
exactly. Edit outcomes other than ok and refused cannot be replayed (a missing image is
``no_image`` whatever the original error was), so only ok and refused step counts, and the
number (not the reasons) of excluded sessions, are compared. Cost is not reproducible by
re-scoring and is not compared. Sections must match as sets (a metric, group or disparity row
left out of a submission is a mismatch), except disparity for run report 1.0, which had none.
Each report section compares the part a submission keeps of it (its ``verify``, e.g. rates within one
percentage point), when the submission states it.

A judged metric (``judged``) is not compared here value by value: a judge answers differently when asked
again, so its figures (summaries, series, disparity rows) are compared as distributions by
:mod:`~faceedit_bench.leaderboard.judged_comparison`; only its name and direction are compared here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from faceedit_bench.leaderboard.tolerances import EMBEDDER_TOLERANCE, P_VALUE_TOLERANCE
from faceedit_bench.plugin.manager import sections_in_use

STAT_FIELDS = ("mean", "sd", "ci_low", "ci_high")


@dataclass(frozen=True)
class Mismatch:
    field: str
    submitted: Any
    reproduced: Any
    tolerance: float | None = None  # None: must be equal

    def as_dict(self) -> dict[str, Any]:
        return {"field": self.field, "submitted": self.submitted, "reproduced": self.reproduced,
                "tolerance": self.tolerance}


class Comparer:
    """Field-by-field comparison: ``exact`` (must be equal) and ``close`` (within a tolerance), counted; what
    a report section's ``verify`` is handed."""

    def __init__(self) -> None:
        self.mismatches: list[Mismatch] = []
        self.compared = 0

    def exact(self, field: str, a: Any, b: Any) -> None:
        self.compared += 1
        if a != b:
            self.mismatches.append(Mismatch(field, a, b))

    def close(self, field: str, a: Any, b: Any, tol: float) -> None:
        self.compared += 1
        if a is None or b is None:
            if a is not b:
                self.mismatches.append(Mismatch(field, a, b, tol))
            return
        if not (math.isfinite(a) and math.isfinite(b) and abs(float(a) - float(b)) <= tol):
            self.mismatches.append(Mismatch(field, a, b, tol))

    def summary(self, field: str, a: Mapping[str, Any] | None, b: Mapping[str, Any] | None, tol: float) -> None:
        if a is None or b is None:
            self.exact(field, a, b)
            return
        self.exact(f"{field}.n", a.get("n"), b.get("n"))
        for stat in STAT_FIELDS:
            self.close(f"{field}.{stat}", a.get(stat), b.get(stat), tol)


def compare_records(submitted: Mapping[str, Any], reproduced: Mapping[str, Any],
                    caps: Mapping[str, float], judged: frozenset[str] = frozenset()) -> tuple[list[Mismatch], int]:
    """Mismatches between the two records, and how many values were compared.

    ``caps`` are the verifier's largest acceptable tolerance per metric: a submission that
    states a looser one fails on that alone. The figures of ``judged`` metrics are left to the
    distribution comparison (module docstring)."""
    c = Comparer()
    sm, rm = submitted["metrics"], reproduced["metrics"]
    c.exact("metrics (names)", sorted(sm), sorted(rm))
    tolerance: dict[str, float] = {}
    for name, m in sm.items():
        tol = float(m["tolerance"])
        cap = caps.get(name, EMBEDDER_TOLERANCE)
        if tol > cap:
            c.mismatches.append(Mismatch(f"metrics.{name}.tolerance", tol, f"at most {cap}", cap))
        tolerance[name] = min(tol, cap)
        if name in rm:
            if name not in judged:
                c.summary(f"metrics.{name}", m, rm[name], tolerance[name])
                c.exact(f"metrics.{name}.undefined_sessions", m["undefined_sessions"], rm[name]["undefined_sessions"])
            c.exact(f"metrics.{name}.higher_is_better", m["higher_is_better"], rm[name]["higher_is_better"])

    def tol_of(name: str) -> float:
        # A series without a metric of its own (FSS_k) is an embedder score.
        return tolerance.get(name, EMBEDDER_TOLERANCE)

    st, rt = submitted["trajectory"], reproduced["trajectory"]
    c.exact("trajectory (series)", sorted(st), sorted(rt))
    for name in sorted(set(st) & set(rt) - judged):
        a, b = {p["k"]: p for p in st[name]}, {p["k"]: p for p in rt[name]}
        c.exact(f"trajectory.{name} (steps)", sorted(a), sorted(b))
        for k in sorted(set(a) & set(b)):
            c.summary(f"trajectory.{name}[{k}]", a[k], b[k], tol_of(name))

    sg, rg = submitted["groups"], reproduced["groups"]
    c.exact("groups (attributes)", sorted(sg), sorted(rg))
    for attribute in sorted(set(sg) & set(rg)):
        c.exact(f"groups.{attribute} (labels)", sorted(sg[attribute]), sorted(rg[attribute]))
        for label in sorted(set(sg[attribute]) & set(rg[attribute])):
            a, b = sg[attribute][label], rg[attribute][label]
            where = f"groups.{attribute}.{label}"
            c.exact(f"{where}.sessions_included", a["sessions_included"], b["sessions_included"])
            c.exact(f"{where}.sessions_excluded (total)", sum(a["sessions_excluded"].values()),
                    sum(b["sessions_excluded"].values()))
            for name in sorted((set(a["metrics"]) | set(b["metrics"])) - judged):
                c.summary(f"{where}.{name}", a["metrics"].get(name), b["metrics"].get(name), tol_of(name))

    sd, rd = submitted.get("disparity"), reproduced.get("disparity")
    # Run report 1.0 computed no disparity: nothing was stated, the page shows "not tested".
    if sd is not None or submitted["framework"]["report_schema_version"] != "1.0":
        a_rows = {(r["metric"], r["contrast"]): r for r in sd or []}
        b_rows = {(r["metric"], r["contrast"]): r for r in rd or []}
        c.exact("disparity (rows)", sorted(a_rows), sorted(b_rows))
        for key in sorted(k for k in set(a_rows) & set(b_rows) if k[0] not in judged):
            a, b = a_rows[key], b_rows[key]
            where = f"disparity.{key[0]}.{key[1]}"
            c.exact(f"{where}.bias", a["bias"], b["bias"])
            c.close(f"{where}.wd", a["wd"], b["wd"], tol_of(key[0]))
            c.close(f"{where}.p_value", a["p_value"], b["p_value"], P_VALUE_TOLERANCE)
            for label in sorted(set(a["groups"]) | set(b["groups"])):
                c.summary(f"{where}.groups.{label}", a["groups"].get(label), b["groups"].get(label), tol_of(key[0]))

    for section in sections_in_use():  # what each report section kept of its part
        if section.verify is not None and submitted.get(section.name) is not None:
            section.verify(c, submitted.get(section.name), reproduced.get(section.name))

    so, ro = submitted["outcomes"], reproduced["outcomes"]
    c.exact("outcomes.faces", so["faces"], ro["faces"])
    for field in ("planned", "included"):
        c.exact(f"outcomes.sessions.{field}", so["sessions"][field], ro["sessions"][field])
    c.exact("outcomes.sessions.excluded (total)", sum(so["sessions"]["excluded"].values()),
            sum(ro["sessions"]["excluded"].values()))
    for outcome in ("ok", "refused"):
        c.exact(f"outcomes.steps.{outcome}", so["steps"].get(outcome, 0), ro["steps"].get(outcome, 0))
    c.exact("outcomes.edited_images_without_face", so["edited_images_without_face"], ro["edited_images_without_face"])
    return c.mismatches, c.compared
