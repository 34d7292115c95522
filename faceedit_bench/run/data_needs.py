"""Before the first paid call: can the run's metrics, judge metrics and report sections score its faces?

Each part declares what it needs (:class:`~faceedit_bench.plugin.needs.Needs`: labels, reference images, further
input images). They are checked against the test set's steps, and against the faces as far as the dataset can
say cheaply: each face of the run when reading them opens no image (its ``faces_cheap`` capability, e.g. the
``folder`` dataset's manifest), else the labels its format promises (its ``label_keys`` capability). A dataset that
declares neither is not checked.

* A run whose judge metrics could all score nothing stops with exit 2 (:class:`ConfigError`), naming what is
  missing and how to get it; nothing is paid for.
* A run in which some part can score only some faces (or none) stops the same way unless
  ``run.allow_partial=true``; with it, the shortfall is printed first and the run goes on.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from faceedit_bench.errors import ConfigError
from faceedit_bench.plugin.needs import Needs, needs_of
from faceedit_bench.plugin.protocols import capability
from faceedit_bench.plugin.sections import SectionRun, settings_of
from faceedit_bench.run.shards import select_faces


@dataclass
class Shortfall:
    """One part's needs against the run's data: how many of ``total`` faces (or steps) it can use, and what the
    others lack (``lacking``: what -> how many)."""

    part: str  # "judge metric <name>", "report section <name>"
    needs: Needs
    total: int
    usable: int
    unit: str = "faces"
    lacking: Counter[str] = field(default_factory=Counter)

    @property
    def none(self) -> bool:
        return self.usable == 0

    def line(self) -> str:
        what = ", ".join(f"{n} with no {k}" if self.unit == "faces" else k for k, n in self.lacking.most_common())
        return f"{self.part} can use {self.usable} of {self.total} {self.unit} ({what})"


def parts(exp: Any, sections: Sequence[Any]) -> list[tuple[str, Needs]]:
    """The run's parts that declare needs: the asked judge metrics, the session metrics, the report sections that
    collect in this run."""
    found = [(f"judge metric {m.name}", needs_of(m)) for m in exp.asked_judge_metrics]
    found += [(f"metric {m.name}", m.needs) for m in exp.metrics if getattr(m, "needs", None)]
    asked = {m.name: m for m in exp.asked_judge_metrics}
    judged = "judge" in exp.components
    for section in sections:
        if not section.needs or section.collector is None:
            continue
        run = SectionRun(judge_metrics=asked, settings=settings_of(exp.conf.analysis, section), judged=judged)
        if section.collector(run) is not None:
            found.append((f"report section {section.name}", section.needs))
    return [(name, needs) for name, needs in found if needs]


def shortfalls(exp: Any, sections: Sequence[Any]) -> list[Shortfall]:
    """Every part that cannot use all of the run's faces or steps (empty: all can, or the data cannot say)."""
    checked = parts(exp, sections)
    if not checked:
        return []
    dataset = exp.components["dataset"]
    faces = _run_faces(exp) if capability(dataset, "dataset", "faces_cheap") else None
    declared = capability(dataset, "dataset", "label_keys")
    out = []
    for name, needs in checked:
        found = (_against_faces(name, needs, faces) if faces is not None
                 else _against_labels(name, needs, declared, exp))
        if needs.inputs:
            found = found or _against_steps(name, needs, exp.testset.sessions[: exp.conf.run.max_sessions])
        if found is not None:
            out.append(found)
    return out


def _run_faces(exp: Any) -> list[Any]:
    run = exp.conf.run
    return list(select_faces(islice(exp.components["dataset"].faces(), run.max_faces), run.shard))


def _against_faces(name: str, needs: Needs, faces: list[Any]) -> Shortfall | None:
    lacking: Counter[str] = Counter()
    usable = 0
    for face in faces:
        unmet = needs.unmet_by(face)
        lacking.update(unmet)
        usable += not unmet
    return None if usable == len(faces) else Shortfall(name, needs, len(faces), usable, lacking=lacking)


def _against_labels(name: str, needs: Needs, declared: Iterable[str] | None, exp: Any) -> Shortfall | None:
    """The labels the dataset's format gives every face; faces it cannot count are counted as the run's limit."""
    if declared is None:
        return None
    missing = [k for k in needs.labels if k not in set(declared)]
    if not missing:
        return None
    n = exp.info.components["dataset"].description.get("n_faces")
    total = min(n, exp.conf.run.max_faces or n) if isinstance(n, int) else (exp.conf.run.max_faces or 0)
    return Shortfall(name, needs, total, 0, lacking=Counter({f"{k} label": total for k in missing}))


def _against_steps(name: str, needs: Needs, sessions: Sequence[Any]) -> Shortfall | None:
    steps = [s for session in sessions for s in session.steps]
    usable = sum(len(s.inputs) >= needs.inputs for s in steps)
    if usable == len(steps):
        return None
    lacking = Counter({f"{len(steps) - usable} without {needs.inputs} further input image(s)": 1})
    return Shortfall(name, needs, len(steps), usable, unit="steps of the test set", lacking=lacking)


def how_to_get(found: Sequence[Shortfall], dataset: str) -> str:
    """Where the missing labels or images come from: the parts' own advice and the dataset's page."""
    from faceedit_bench.run.data_check import docs_page

    advice = list(dict.fromkeys(s.needs.how for s in found if s.needs.how))
    page = docs_page(dataset)
    advice.append(f"faceedit-bench data check {dataset} <root> lists the labels it has"
                  + (f"; its layout and labels: {page}" if page else ""))
    return "; ".join(advice)


def check_data_needs(exp: Any, sections: Sequence[Any]) -> list[Shortfall]:
    """Raise :class:`ConfigError` when the run would score nothing, or only part without ``run.allow_partial``;
    with it, print the shortfall to stderr first. Returns the shortfalls (for the plan)."""
    found = shortfalls(exp, sections)
    if not found:
        return found
    dataset = exp.conf.dataset.name
    lines = "; ".join(s.line() for s in found)
    how = how_to_get(found, dataset)
    metrics = [s for s in found if s.part.startswith("judge metric ")]
    if exp.asked_judge_metrics and len(metrics) == len(exp.asked_judge_metrics) and all(s.none for s in metrics):
        raise ConfigError(f"this run would score nothing: {lines}. Nothing was paid for. To get them: {how}.")
    if not exp.conf.run.allow_partial:
        raise ConfigError(f"this run can score only part of dataset {dataset!r}: {lines}. Run it as it is with "
                          f"run.allow_partial=true, or add what is missing: {how}.")
    print(f"Warning: scoring only part (run.allow_partial=true): {lines}.", file=sys.stderr)
    return found
