"""Named leaderboard views, defined as data (docs/leaderboard_views.md): a ranking by chosen values, each
read in its stated direction. The views are the registered report sections' (``ReportSection.views``) plus
the core's own (:data:`CORE_VIEWS`, none yet).

A value is found in a submission record by its :class:`~faceedit_bench.plugin.sections.ValueSpec`: a session
metric's summary (``record.metrics[name]``: mean, CI, n), or what the value's ``read`` finds in its section's
record part (``record[<section>]``), in the unit it is shown in.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.sections import ReportSection, ValueSpec, ViewSpec

#: Views of the core's own quantities (the session metrics every protocol has); sections bring the others.
CORE_VIEWS: tuple[ViewSpec, ...] = ()


def view_specs(sections: Sequence[ReportSection] | None = None) -> tuple[ViewSpec, ...]:
    """The core's views, then each section's, in registration order (``sections``: default, those in use)."""
    return CORE_VIEWS + tuple(v for s in (sections_in_use() if sections is None else sections) for v in s.views)


def value_of(record: Mapping[str, Any], spec: ValueSpec) -> dict[str, Any] | None:
    """The value as a summary (``mean``, ``ci_low``, ``ci_high``, ``n``, maybe ``sub``) in the unit it is
    shown in, or None."""
    if spec.source == "metrics":
        s = (record.get("metrics") or {}).get(spec.name)
        return dict(s) if isinstance(s, Mapping) else None
    part = record.get(spec.source)
    if not isinstance(part, Mapping) or spec.read is None:
        return None
    found = spec.read(part)
    return dict(found) if isinstance(found, Mapping) else None


__all__ = ["CORE_VIEWS", "ValueSpec", "ViewSpec", "value_of", "view_specs"]
