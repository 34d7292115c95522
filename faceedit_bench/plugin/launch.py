"""What one launch of a run did (:class:`RunLaunch`), as report sections read it once the launch's work is
done (``SectionRun.launch()``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunLaunch:
    """What one launch of a run did, known once its work is done: a collector reads it in ``finish`` through
    ``run.launch()``. The core's own sections (``cost``, ``calls``, ``performance``, ``prompts``,
    ``judge_reliability``) report it; any section may."""

    #: Why the launch stopped early (the budget), else None.
    stopped: str | None
    edit_stage_s: float
    score_stage_s: float
    new_edits: int  # edit calls made by this launch (cached edits are not counted)
    peak_gpu_mem_bytes: int | None
    #: Provider calls by provider key: calls, attempts, succeeded, retries, gave_up, rate_wait_s ... and the
    #: ``roles`` that made them (role, component, model), as the report's ``calls`` part has them.
    calls: Mapping[str, Mapping[str, Any]]
    #: USD spent by this launch, and the run's budget (None: no budget).
    spent_usd: float
    budget_usd: float | None
    #: Estimated USD of all the run's calls (cached included) by component kind; None: not priced.
    cost_usd: Mapping[str, float | None]
    prices: Mapping[str, Mapping[str, Any]]  # each component's price table, as declared
    free: tuple[str, ...]  # the component kinds that cost nothing per call
    faces_seen: int
    dataset_faces: int | None  # the whole dataset's, when it says
    #: The judge's prompt templates by judge metric (name, version, hash), and its anchors and agreement with
    #: people; None without a judge (reliability: also when the anchors were not asked).
    prompts: Mapping[str, Any] | None = None
    judge_reliability: Mapping[str, Any] | None = None


def no_launch() -> RunLaunch | None:
    return None
