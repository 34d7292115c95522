"""Named leaderboard views, defined as data: a ranking by chosen values, each read in its stated
direction, plus optional disparity columns (docs/leaderboard_views.md).

A value is found in a submission record by ``source``:

* ``metrics``: a session metric's summary (``record.metrics[name]``: mean, CI, n);
* ``audit.rates``: a threshold rate (``record.audit.rates[name] = {rate, ci_low, ci_high, n}``, a share
  in [0, 1], shown in percent);
* ``audit.disparity``: a rate's max − min across the groups of one attribute, in percentage points
  (``record.audit.disparity[name] = {max_minus_min_pp, ci_low, ci_high, by}``, or a list of such
  objects, one per attribute). A gap between groups: lower is better.

A value's direction, unit, label and description come from the submission's own ``measures`` (the
run report's statement of each registration), or from this installation's registration of that
name; a value whose direction nobody states is shown but never ranked by.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

SOURCES = ("metrics", "audit.rates", "audit.disparity")


@dataclass(frozen=True)
class ValueSpec:
    name: str
    source: str = "metrics"
    by: str = ""  # audit.disparity: the attribute the groups are of (race)

    def __post_init__(self) -> None:
        if self.source not in SOURCES:
            raise ValueError(f"value {self.name}: source {self.source!r}; use one of {', '.join(SOURCES)}")
        if (self.source == "audit.disparity") != bool(self.by):
            raise ValueError(f"value {self.name}: 'by' names the attribute of an audit.disparity value only")

    @property
    def key(self) -> str:
        return f"{self.name} max-min by {self.by}" if self.by else self.name


@dataclass(frozen=True)
class ViewSpec:
    key: str  # the page's view name and URL fragment
    title: str
    description: str
    values: tuple[ValueSpec, ...]
    rank_by: str  # the name of one of ``values`` (not a disparity)
    notes: tuple[str, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        ranked = [v for v in self.values if v.name == self.rank_by and not v.by]
        if not ranked:
            raise ValueError(f"view {self.key}: rank_by {self.rank_by!r} is not one of its values")


def _rates(*names: str, by: str) -> tuple[ValueSpec, ...]:
    return (*(ValueSpec(n, "audit.rates") for n in names), *(ValueSpec(n, "audit.disparity", by) for n in names))


AUDIT = ViewSpec(
    key="audit", title="audit: soft erasure and race change",
    description="The demographic-misrepresentation audit (METHODOLOGY §4): the share of edits the judge panel "
                "rated as soft erasure (the edit silently not done) and as a change of the person's race, each "
                "with its Wilson interval, and each rate's max − min across races in percentage points with its "
                "bootstrap interval. Hard refusals are counted beside them.",
    values=_rates("soft_erasure_rate", "race_change_rate", by="race"),
    rank_by="soft_erasure_rate")

CREVAL = ViewSpec(
    key="creval", title="CREval: overall, IF, VC, VQ",
    description="QA-based scores (METHODOLOGY §5): the weighted share of a frozen question set answered as "
                "expected, per instruction following (IF), visual consistency (VC) and visual quality (VQ); "
                "overall = 0.4 IF + 0.4 VC + 0.2 VQ, 0-100.",
    values=tuple(ValueSpec(n) for n in ("creval", "creval_if", "creval_vc", "creval_vq")), rank_by="creval")

CREVAL_FACE = ViewSpec(
    key="creval_face", title="CREval on face sessions: overall, IF, VC, VQ",
    description="CREval's scoring on questions generated from the taxonomy of face sessions (an extension of "
                "METHODOLOGY §5.4): overall = 0.4 IF + 0.4 VC + 0.2 VQ, 0-100.",
    values=tuple(ValueSpec(n) for n in ("creval_face", "creval_face_if", "creval_face_vc", "creval_face_vq")),
    rank_by="creval_face")

VIEW_SPECS: tuple[ViewSpec, ...] = (AUDIT, CREVAL, CREVAL_FACE)


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def value_of(record: Mapping[str, Any], spec: ValueSpec) -> dict[str, Any] | None:
    """The value as a summary (``mean``, ``ci_low``, ``ci_high``, ``n``) in the unit it is shown in, or None."""
    if spec.source == "metrics":
        s = (record.get("metrics") or {}).get(spec.name)
        return dict(s) if isinstance(s, Mapping) else None
    audit = record.get("audit") or {}
    if spec.source == "audit.rates":
        r = (audit.get("rates") or {}).get(spec.name)
        if not isinstance(r, Mapping):
            return None
        scaled = {k: None if (v := _number(r.get(src))) is None else 100.0 * v
                  for k, src in (("mean", "rate"), ("ci_low", "ci_low"), ("ci_high", "ci_high"))}
        return {**scaled, "n": r.get("n")}
    found = (audit.get("disparity") or {}).get(spec.name)
    rows = found if isinstance(found, list) else [found]
    for d in rows:
        if isinstance(d, Mapping) and d.get("by") == spec.by:
            return {"mean": _number(d.get("max_minus_min_pp")), "ci_low": _number(d.get("ci_low")),
                    "ci_high": _number(d.get("ci_high")), "n": None,
                    "sub": " vs ".join(str(d[g]) for g in ("max_group", "min_group") if d.get(g))}
    return None
