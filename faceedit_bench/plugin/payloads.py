"""What lifecycle hooks receive: a description of the run and of each finished step; and how a run is named
and described to people (tracker run names, notes, job tables), with the identities and versions of its
components as trackers record them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from faceedit_bench.keys import fingerprint, portable


@dataclass(frozen=True)
class ComponentInfo:
    """A resolved component as recorded with results."""

    kind: str  # editor, embedder, dataset, testset, tracking, judge
    name: str  # registered name
    provider: str  # plugin that registered it
    provider_version: str  # that plugin's distribution version ("builtin" for the core's own)
    description: dict[str, Any] = field(default_factory=dict)  # the component's describe()

    @property
    def identity(self) -> str:
        """Its content identity (:func:`component_identity`)."""
        return component_identity(self)

    @property
    def version(self) -> str | None:
        """Its own version, not its plugin's (:func:`component_version`)."""
        return component_version(self)


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

    @property
    def title(self) -> str:
        """What tells this run from its neighbours (:func:`run_title`)."""
        return run_title(self)

    @property
    def note(self) -> str:
        """A Markdown note on what was run on what (:func:`run_description`; MLflow's run description)."""
        return run_description(self)


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


# -- how a run and its components are labelled for people and trackers --

#: Run settings that change what a run measures, shown in its title when set (name -> default).
LIMITS = {"max_faces": None, "max_sessions": None, "seed": 0}
#: Description keys naming a component's exact model version, most specific first.
VERSION_KEYS = ("model_version", "version", "model", "revision")


def component_identity(info: ComponentInfo) -> str:
    """The content identity of a component: its name and description without locations (the same
    data at another path is the same dataset); the digest ``compare`` uses to call runs comparable."""
    return fingerprint({"name": info.name, "description": portable(dict(info.description))})


def component_version(info: ComponentInfo) -> str | None:
    """The component's own version (its model version for editors and judges, model-file hashes
    for embedders, content hash for test sets) from its ``describe()``, not its plugin's."""
    description = info.description
    for key in VERSION_KEYS:
        if description.get(key) not in (None, ""):
            return str(description[key])
    return str(description["content_hash"]) if description.get("content_hash") else None


def _limits(config: Mapping[str, Any]) -> list[str]:
    run = config.get("run") or {}
    return [f"{key}={run[key]}" for key, default in LIMITS.items() if run.get(key, default) != default]


def run_title(info: RunInfo) -> str:
    """What tells this run from its neighbours: ``nano_banana@pose/sample/dlib judge=gemini max_faces=2``."""
    parts = [info.run_name]
    if "judge" in info.components:
        parts.append(f"judge={info.components['judge'].name}")
    parts += _limits(info.config)
    return " ".join(parts)


def _component_line(kind: str, info: ComponentInfo) -> str:
    version = component_version(info)
    plugin = f"plugin {info.provider} {info.provider_version}"
    return f"- {kind}: **{info.name}**" + (f" (version `{version}`, {plugin})" if version else f" ({plugin})")


def run_description(info: RunInfo) -> str:
    """A Markdown note: what was run on what, with which versions and limits (MLflow's run description)."""
    components = info.components
    testset = components.get("testset")
    lines = [f"faceedit_bench run **{run_title(info)}**: the editor's multi-turn edit sessions of the test set "
             "on the dataset's faces, scored for identity"
             + (" and judged for semantic consistency and overediting." if "judge" in components else
                " (no judge: SC and OER are not computed)."), ""]
    for kind in ("editor", "testset", "dataset", "embedder", "judge"):
        if kind in components:
            lines.append(_component_line(kind, components[kind]))
    if testset is not None and testset.description.get("content_hash"):
        lines.append(f"- test-set content hash: `{testset.description['content_hash']}`")
    limits = _limits(info.config)
    lines += ["", f"Limits: {', '.join(limits) if limits else 'none (every face and session)'}.",
              f"Run key `{info.run_key}`; outputs in `{info.output_dir}`."]
    return "\n".join(lines)
