"""Structured-config schemas for the Hydra config groups (validated on composition)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from omegaconf import MISSING

from faceedit_bench.errors import ConfigError
from faceedit_bench.records import TRANSIENT_OUTCOMES, Outcome
from faceedit_bench.setting_checks import (
    check_conditions,
    check_flag,
    check_number,
    check_positive,
    check_sample,
    parse_shard,
    reject,
)


def conf_dir() -> Path:
    """The core's config entries: ``conf/`` inside an installed wheel, or the checkout's top-level ``conf/``."""
    package = Path(__file__).resolve().parent
    packaged = package / "conf"
    return packaged if packaged.is_dir() else package.parent / "conf"


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
    # Show progress per stage with ETAs: bars on a terminal, else a plain line every progress_interval_s.
    progress: bool = True
    progress_interval_s: float = 30.0
    # Stop issuing new provider calls once this invocation's estimated spend reaches this
    # many USD (None: no limit). Rerunning resumes where it stopped.
    budget_usd: float | None = None
    # Judge answers that do not fit their schema are asked again this many times in all,
    # then recorded as parse_error (never turned into a score).
    judge_parse_attempts: int = 2
    # A stratified sample of (face, session) items instead of every pair, e.g. paper (b)'s mitigation
    # sample: {per_prompt: 25, by: [race, gender, age_bin], seed: 0} (faceedit_bench/run/sampling.py).
    sample: Any = None
    # Run one shard of the faces, "i/n" (0 <= i < n; null: all faces): e.g. a sweep
    # run.shard=0/4,1/4,2/4,3/4, then `faceedit-bench merge <workspace>` (docs/sharding.md).
    shard: str | None = None
    # A shard that sees several GPUs keeps one (SLURM_LOCALID, else the shard index, picks it).
    one_gpu_per_shard: bool = True
    # Run although some selected metrics or sections can score only part of the faces (or none) for lack of
    # labels or references; false: such a run stops before its first paid call and says what is missing.
    allow_partial: bool = False
    # Print the run's plan (calls per provider and model, cached, estimated cost, time its rate limits imply)
    # and stop without a provider call: the same as `faceedit-bench plan <overrides>` (docs/plan.md).
    dry_run: bool = False

    def __post_init__(self) -> None:
        # Every setting is checked here, when the config becomes objects: before any component,
        # store or tracked run exists, so a typo never costs the work of a run.
        key = "run"
        if not isinstance(self.workspace, str) or not self.workspace.strip():
            reject(f"{key}.workspace", self.workspace, "a directory path (e.g. run.workspace=~/faceedit_ws)")
        check_number(f"{key}.max_faces", self.max_faces, whole=True, at_least=1, none="every face of the dataset")
        check_number(f"{key}.max_sessions", self.max_sessions, whole=True, at_least=1,
                     none="every session of the test set")
        check_number(f"{key}.seed", self.seed, whole=True, at_least=0)
        check_number(f"{key}.workers", self.workers, whole=True, at_least=0, zero="one process per CPU core")
        check_number(f"{key}.max_contact_sheets", self.max_contact_sheets, whole=True, at_least=0)
        check_number(f"{key}.judge_parse_attempts", self.judge_parse_attempts, whole=True, at_least=1)
        check_number(f"{key}.confidence", self.confidence, above=0, below=1, example="e.g. 0.95 for 95% intervals")
        check_flag(f"{key}.progress", self.progress)
        check_flag(f"{key}.one_gpu_per_shard", self.one_gpu_per_shard)
        check_flag(f"{key}.allow_partial", self.allow_partial)
        check_flag(f"{key}.dry_run", self.dry_run)
        if self.shard is not None:
            parse_shard(self.shard)
        if self.budget_usd is not None:
            check_positive(f"{key}.budget_usd", self.budget_usd, "USD, or null for no limit")
        if self.sample is not None:
            self.sample = check_sample(self.sample)
        retryable = [o.value for o in Outcome if o is not Outcome.OK]
        if not isinstance(self.retry_outcomes, (list, tuple)):
            reject(f"{key}.retry_outcomes", self.retry_outcomes, f"a list of outcomes from {', '.join(retryable)}")
        wrong = [o for o in self.retry_outcomes if o not in retryable]
        if wrong:
            reject(f"{key}.retry_outcomes", list(self.retry_outcomes),
                    f"a list of outcomes from {', '.join(retryable)}, e.g. run.retry_outcomes=[api_error,failed] "
                    f"({', '.join(map(str, wrong))} is not one of them; ok results are final)")


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
    # One group against all others pooled, per attribute (e.g. {race: White}: White vs non-White,
    # Mann-Whitney U). Attributes with three or more groups also get k-group tests (Kruskal-Wallis,
    # max - min with a bootstrap CI) without being named here.
    one_vs_rest: dict[str, str] = field(default_factory=dict)
    # Intersectional groups: pairs of attributes crossed (paper (a)'s gender x skin tone cells).
    intersections: list[list[str]] = field(default_factory=lambda: [["gender", "skin_tone"]])
    # Each registered report section's settings are composed beside these, at analysis.<section name>
    # (faceedit_bench/plugin/sections.py; run/section_settings.py adds them to the schema).

    def __post_init__(self) -> None:
        key = "analysis"
        if not isinstance(self.one_vs_rest, dict) or not all(
                isinstance(v, str) and v.strip() for v in self.one_vs_rest.values()):
            reject(f"{key}.one_vs_rest", self.one_vs_rest, "a mapping of attribute -> group, e.g. {race: White}")
        if not isinstance(self.intersections, list) or not all(
                isinstance(pair, (list, tuple)) and len(pair) == 2 and len(set(pair)) == 2 for pair in self.intersections):
            reject(f"{key}.intersections", self.intersections,
                    "a list of attribute pairs, e.g. [[gender, skin_tone]]")
        if not isinstance(self.contrasts, dict):
            reject(f"{key}.contrasts", self.contrasts, "a mapping of attribute -> [group_a, group_b]")
        for attribute, groups in self.contrasts.items():
            labels = list(groups) if isinstance(groups, (list, tuple)) else None
            if labels is None or len(labels) != 2 or len(set(map(str, labels))) != 2 or not all(
                    isinstance(g, str) and g.strip() for g in labels):
                reject(f"{key}.contrasts.{attribute}", groups,
                        f"exactly two different group labels, e.g. {key}.contrasts.gender=[male,female]")
        check_number(f"{key}.n_resamples", self.n_resamples, whole=True, at_least=1)
        check_number(f"{key}.seed", self.seed, whole=True, at_least=0)
        check_number(f"{key}.alpha", self.alpha, above=0, below=1, example="the significance level, e.g. 0.05")
        if isinstance(self.wd_threshold, bool) or not isinstance(self.wd_threshold, (int, float)) or not (
                math.isfinite(self.wd_threshold) and self.wd_threshold >= 0):
            reject(f"{key}.wd_threshold", self.wd_threshold, "a finite number >= 0, in the metric's units")
        labels_file = self.human_labels
        if labels_file is not None and not (isinstance(labels_file, str) and Path(labels_file).expanduser().is_file()):
            reject(f"{key}.human_labels", labels_file, "the path of an existing labels CSV, or null")


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
    # Shorthand for what a run reports, e.g. metrics=[fss,sc]: fss (identity, from the embedder) plus
    # judge metrics, which then replace judge_metrics. null: judge_metrics decides.
    metrics: list[str] | None = None
    # Image metrics measured on every edited step, by registered name (`faceedit-bench plugins` lists them).
    # null: background and edit_magnitude wherever the embedder detects faces; []: none (docs/metrics.md).
    image_metrics: list[str] | None = None
    # Parameters of the selected image metrics, by name, e.g. +image_metric_params.background.margin=0.4.
    image_metric_params: dict[str, Any] = field(default_factory=dict)
    tracking: ComponentConf = MISSING
    run: RunConf = field(default_factory=RunConf)
    analysis: AnalysisConf = field(default_factory=AnalysisConf)
    # Free-form tags added to the tracked run.
    tags: dict[str, str] = field(default_factory=dict)
    # Prompt conditions the test set runs under (docs/protocols.md, "Prompt conditions"): baseline,
    # {name, kind: feature_prompt, template, position: prepend|append}, {name, kind: rewrite, template}.
    conditions: list[Any] = field(default_factory=lambda: ["baseline"])

    def __post_init__(self) -> None:
        self.conditions = check_conditions(self.conditions)
        if self.analysis.human_labels and isinstance(self.judge, ComponentConf) and self.judge.name == "none":
            raise ConfigError("analysis.human_labels needs a judge to compare with (e.g. judge=gemini), "
                              "or set analysis.human_labels=null")
