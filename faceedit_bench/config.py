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
    # Stop issuing new provider calls once this invocation's estimated spend reaches this
    # many USD (None: no limit). Rerunning resumes where it stopped.
    budget_usd: float | None = None
    # Judge answers that do not fit their schema are asked again this many times in all,
    # then recorded as parse_error (never turned into a score).
    judge_parse_attempts: int = 2


def _default_contrasts() -> dict[str, list[str]]:
    return {"gender": ["male", "female"], "skin_tone": ["light", "dark"], "age_group": ["young", "old"]}


@dataclass
class AnalysisConf:
    """Disparity statistics (METHODOLOGY §7)."""

    # demographic attribute -> the two groups compared (labels as the dataset writes them)
    contrasts: dict[str, list[str]] = field(default_factory=_default_contrasts)
    # Monte-Carlo permutation resamples per test (p = (b + 1) / (R + 1))
    n_resamples: int = 9999
    # A disparity is flagged as bias when WD > wd_threshold (metric units) and p < alpha.
    wd_threshold: float = 3.0
    alpha: float = 0.05
    # Base seed of the permutation tests; each test derives its own from its name.
    seed: int = 0
    # A CSV of human labels (faceedit_bench/scoring/judge/agreement.py); with a judge, the judge-human
    # agreement (tracker accuracy per key, SC rank correlation) is reported. None: skipped.
    human_labels: str | None = None


@dataclass
class ExperimentConfig:
    editor: ComponentConf = MISSING
    testset: ComponentConf = MISSING
    dataset: ComponentConf = MISSING
    embedder: ComponentConf = MISSING
    judge: ComponentConf = field(default_factory=lambda: ComponentConf(name="none"))
    # Judge metrics asked of every judged session, by registered name (`faceedit-bench plugins`
    # lists them): sc = VIEScore SC, state = the state tracker (OER, overediting matrix).
    judge_metrics: list[str] = field(default_factory=lambda: ["sc", "state"])
    tracking: ComponentConf = MISSING
    run: RunConf = field(default_factory=RunConf)
    analysis: AnalysisConf = field(default_factory=AnalysisConf)
    # Free-form tags added to the tracked run.
    tags: dict[str, str] = field(default_factory=dict)
