"""Structured-config schemas for the Hydra config groups (validated on composition)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from omegaconf import MISSING

from faceedit_bench.records import TRANSIENT_OUTCOMES

#: Config group -> registry kind. ``judge: none`` means no judge.
GROUP_KINDS: dict[str, str] = {
    "editor": "editors",
    "embedder": "embedders",
    "dataset": "datasets",
    "testset": "testsets",
    "tracking": "trackers",
    "judge": "judges",
}


@dataclass
class ComponentConf:
    """Selects a registered component by ``name`` and passes ``params`` to its factory."""

    name: str = MISSING
    params: dict[str, Any] = field(default_factory=dict)


@dataclass
class RunConf:
    # Directory holding the image store, the ledger, the MLflow store and run outputs.
    workspace: str = ".faceedit_bench"
    # Use at most this many faces / sessions (None: all). Part of the run's identity.
    max_faces: int | None = None
    max_sessions: int | None = None
    # Base seed; each (face, session, step) derives its own seed from it.
    seed: int = 0
    # Processes for CPU scoring (0: one per core).
    workers: int = 0
    # Outcomes retried when a run is resumed; others are final.
    retry_outcomes: list[str] = field(default_factory=lambda: sorted(o.value for o in TRANSIENT_OUTCOMES))
    # Contact sheets (I0..I4 with scores) written at most for this many sessions.
    max_contact_sheets: int = 200
    # Confidence level of reported intervals.
    confidence: float = 0.95
    # Show a progress bar with ETA.
    progress: bool = True


@dataclass
class ExperimentConfig:
    editor: ComponentConf = MISSING
    testset: ComponentConf = MISSING
    dataset: ComponentConf = MISSING
    embedder: ComponentConf = MISSING
    judge: ComponentConf = field(default_factory=lambda: ComponentConf(name="none"))
    tracking: ComponentConf = MISSING
    run: RunConf = field(default_factory=RunConf)
    # Free-form tags added to the tracked run.
    tags: dict[str, str] = field(default_factory=dict)
