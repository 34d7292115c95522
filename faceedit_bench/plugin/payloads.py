"""What lifecycle hooks receive: a description of the run and of each finished step."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class ComponentInfo:
    """A resolved component as recorded with results."""

    kind: str  # editor, embedder, dataset, testset, tracking, judge
    name: str  # registered name
    provider: str  # plugin that registered it
    provider_version: str  # that plugin's distribution version ("builtin" for the core's own)
    description: dict[str, Any] = field(default_factory=dict)  # the component's describe()


@dataclass(frozen=True)
class RunInfo:
    """One experiment = one (editor, testset, dataset, embedder) combination.

    ``run_key`` is derived from the content of everything that determines the results
    (component descriptions, test-set hash, limits), so rerunning the same experiment
    gets the same key and trackers can resume the same tracked run.
    """

    run_key: str
    run_name: str
    experiment_name: str
    components: dict[str, ComponentInfo]
    config: dict[str, Any]  # the resolved config, plain containers
    params: dict[str, str]  # the resolved config flattened to dotted keys
    tags: dict[str, str]
    workspace: Path
    output_dir: Path  # where this run's artifacts are written
    #: The experiment preset the run was composed from (``experiment=paper_celeba``), from Hydra's runtime choices;
    #: None without one. Not part of the run key: the key is what the settings are, not how they were chosen.
    preset: str | None = None


@dataclass(frozen=True)
class StepRecord:
    """The outcome of edit step k of one (face, session)."""

    unit_key: str
    face_id: str
    identity: str
    session_id: str
    k: int
    instruction: str
    category: str
    sub_axis: str
    axis: str
    outcome: str
    reason: str
    input_hash: str
    output_hash: str | None
    resumed: bool  # True when taken from the ledger instead of computed now
    duration_s: float
    condition: str = "baseline"  # the prompt condition; the unit key ends in @<condition> for any other
    prompt: str = ""  # what the editor received (the instruction, or its composition under the condition)


@dataclass(frozen=True)
class TrackedRun:
    """A run as an experiment tracker recorded it, for submissions and leaderboards.

    ``files`` holds the requested artifacts by name; ``problem`` says why the run cannot be
    used (not finished, an artifact missing), in which case ``files`` may be incomplete.
    """

    run_id: str
    status: str
    tags: dict[str, str]
    params: dict[str, str]
    files: dict[str, bytes] = field(default_factory=dict)
    problem: str | None = None
