"""What a metric, judge metric or report section needs of the data to score anything: :class:`Needs`.

Declared on the registered object (``SessionMetric.needs``, ``JudgeMetric.needs``, ``ReportSection.needs``) and
checked before the run's first paid call (:mod:`faceedit_bench.run.data_needs`): against the labels the dataset
declares (its ``label_keys`` capability) and, where reading its faces is cheap (``faces_cheap``), against each face
of the run. A judge metric's image roles add their own needs (``references``: one reference image; ``inputs``:
one further input image per step). What a part needs of the run itself (an embedder, a judge, a taxonomy
binding) stays where it was: ``SessionMetric.requires`` and ``ReportSection.needs_judge``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Needs:
    """``labels``: keys of ``Face.demographics`` that must hold a value (``race``, ``gender``, ``age_bin``);
    ``references``: reference images per face, at least; ``inputs``: further input images per step, at least
    (a two-person edit needs 1); ``how``: where to get what is missing, shown with the message."""

    labels: tuple[str, ...] = ()
    references: int = 0
    inputs: int = 0
    how: str = ""

    def __post_init__(self) -> None:
        if isinstance(self.labels, str) or not all(isinstance(k, str) and k for k in self.labels):
            raise ValueError(f"Needs.labels must be a tuple of label names, not {self.labels!r}")
        if self.references < 0 or self.inputs < 0:
            raise ValueError("Needs.references and Needs.inputs must be >= 0")

    def __bool__(self) -> bool:
        return bool(self.labels or self.references or self.inputs)

    def unmet_by(self, face: Any) -> list[str]:
        """What ``face`` (a :class:`~faceedit_bench.records.Face`) lacks: ``race label``, ``reference image``."""
        labels: Mapping[str, Any] = face.demographics or {}
        lacking = [f"{key} label" for key in self.labels if labels.get(key) in (None, "")]
        if len(face.references) < self.references:
            lacking.append("reference image" if self.references == 1 else f"{self.references} reference images")
        return lacking


NO_NEEDS = Needs()


def needs_of(part: Any) -> Needs:
    """A registered part's needs: its ``needs``, plus for a judge metric what its image roles need."""
    declared = getattr(part, "needs", None) or NO_NEEDS
    roles = tuple(getattr(part, "images", ()) or ())
    references = max(declared.references, 1 if "references" in roles else 0)
    inputs = max(declared.inputs, 1 if any(r == "inputs" or r.startswith("input:") for r in roles) else 0)
    if (references, inputs) == (declared.references, declared.inputs):
        return declared
    return Needs(declared.labels, references, inputs, declared.how)
