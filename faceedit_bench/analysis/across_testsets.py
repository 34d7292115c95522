"""Editors across test sets, as paper (a) reports them: one column per test set and an Avg. column (Tables 1, 2
and 4), and the frequent overediting patterns pooled over the test sets (Table 3).

Avg. is the unweighted mean of the editor's per-test-set means, as in the paper: each test set counts once,
whatever its number of sessions. It is given only when the editor has a mean on every test set of the table;
otherwise it says how many it has, because an average over a subset is not comparable with the others. It has
no interval: the test sets are different session lists, and an interval would need their sessions.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

from faceedit_bench.analysis.baselines import is_reference_editor

#: Table 3's threshold: an attribute -> category change in at least this share of the attribute's edits.
PATTERN_THRESHOLD = 0.15


@dataclass
class EditorAcross:
    """One editor's summaries of one metric per test set (``None``: no run of it on that test set)."""

    editor: str  # the editor's name and version, as the table shows it
    name: str  # the registered editor name (decides whether it is a reference)
    cells: dict[str, Mapping[str, Any] | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)  # test set -> the run or entry the cell comes from

    @property
    def reference(self) -> bool:
        return is_reference_editor(self.name)

    def average(self, testsets: Sequence[str]) -> float | None:
        """The mean of the per-test-set means over ``testsets``; None unless every one has a mean."""
        means = [(self.cells.get(t) or {}).get("mean") for t in testsets]
        if not testsets or any(m is None for m in means):
            return None
        return sum(means) / len(means)  # type: ignore[arg-type]

    def covered(self, testsets: Sequence[str]) -> int:
        return sum(1 for t in testsets if (self.cells.get(t) or {}).get("mean") is not None)


def across_testsets(items: Iterable[tuple[str, str, str, Mapping[str, Any] | None, str]]) -> tuple[
        list[str], list[EditorAcross]]:
    """``items``: (editor label, editor name, test set, the metric's summary, source). The test sets in order
    of first appearance, and one row per editor. A second summary for the same editor and test set is ignored
    (the caller orders ``items`` by preference)."""
    testsets: list[str] = []
    rows: dict[str, EditorAcross] = {}
    for label, name, testset, summary, source in items:
        if testset not in testsets:
            testsets.append(testset)
        row = rows.setdefault(label, EditorAcross(label, name))
        if testset not in row.cells:
            row.cells[testset] = summary
            row.sources[testset] = source
    return testsets, list(rows.values())


def pooled_patterns(counts: Iterable[Mapping[str, Any] | None],
                    threshold: float = PATTERN_THRESHOLD) -> list[dict[str, Any]] | None:
    """Frequent overedit patterns over several runs: their ``attribute_changes`` (per intended attribute, the
    number of edits and how many of them changed each other category) summed, then thresholded as
    :func:`faceedit_bench.scoring.overediting.frequent_patterns` does for one run. ``None`` when a run lacks the counts
    (pooling its patterns alone would drop every change below the threshold in that run)."""
    edits: Counter[str] = Counter()
    hits: Counter[tuple[str, str]] = Counter()
    for c in counts:
        if not c:
            return None
        for attribute, n in (c.get("edits") or {}).items():
            edits[attribute] += int(n)
        for attribute, changed in (c.get("changed") or {}).items():
            for category, n in changed.items():
                hits[attribute, category] += int(n)
    limit = Fraction(str(threshold))
    found = [{"attribute": a, "category": cat, "count": n, "edits": edits[a], "share": n / edits[a]}
             for (a, cat), n in hits.items() if edits[a] and Fraction(n, edits[a]) >= limit]
    return sorted(found, key=lambda p: (-p["share"], -p["count"], p["attribute"], p["category"]))
