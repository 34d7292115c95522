"""How an experiment runs its prompt conditions and its sample: what the experiment calls.

``conditions`` (setting_checks.py checks the entries) becomes :class:`~faceedit_bench.run.condition_prompts.Condition`
objects when the experiment is built. A condition's own judge is created then as well, so a bad
template name or judge fails before any work. While the run goes on, :class:`ConditionPlan`
runs every session once per condition. It asks the judges for the prompts, keeps the
``run.sample`` items only, and collects results per condition for the ``conditions`` section.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from faceedit_bench.analysis.aggregate import Aggregator
from faceedit_bench.analysis.condition_results import ConditionResults
from faceedit_bench.config import ComponentConf
from faceedit_bench.errors import ConfigError
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.records import Face, Session
from faceedit_bench.run.condition_prompts import (
    BASELINE,
    Condition,
    ConditionPrompts,
    build_conditions,
    expand_sessions,
    registered_templates,
)
from faceedit_bench.run.judges import create_judge, judge_scorer
from faceedit_bench.run.sampling import Sample, find_published, published_sample, stratified_sample


@dataclass
class BuiltConditions:
    conditions: list[Condition]
    judges: dict[str, tuple[Any, Any]]  # condition name -> (its own judge, its ComponentInfo)

    @property
    def default(self) -> bool:
        return [c.name for c in self.conditions] == [BASELINE]

    def identity(self) -> dict[str, Any] | None:
        """For the run key; None for the default (baseline only), whose run keys are unchanged."""
        if self.default:
            return None
        return {c.name: {**c.describe(), **({"judge": self.judges[c.name][1].description}
                                            if c.name in self.judges else {})} for c in self.conditions}


def build(plugins: Plugins, specs: list[dict[str, Any]], *, has_judge: bool,
          create_component: Callable[..., Any]) -> BuiltConditions:
    conditions = build_conditions(specs, has_judge=has_judge, templates=registered_templates(plugins))
    judges = {}
    for i, c in enumerate(conditions):
        if c.judge is not None:
            try:
                judges[c.name] = create_judge(plugins, ComponentConf(name=c.judge["name"],
                                                                     params=dict(c.judge.get("params") or {})),
                                              create_component, key=f"conditions[{i}].judge")
            except ConfigError as exc:
                raise ConfigError(f"conditions ({c.name}).judge: {exc}") from exc
    return BuiltConditions(conditions, judges)


def _text_writer(service: Any) -> Any:
    """The service that writes a condition's texts: the run's judge, or a panel's primary member. A free
    text cannot be averaged, and the combination rules would keep the primary's text anyway; asking the
    others would only cost. Paper (b) wrote its feature texts with one model (METHODOLOGY §4.5)."""
    primary = getattr(getattr(service, "rule", None), "primary", None)
    members = getattr(service, "services", None)
    return members[primary] if primary and isinstance(members, dict) and primary in members else service


class ConditionPlan:
    def __init__(self, built: BuiltConditions, run_scorer: Any, *, ledger: Any, store: Any, executors: Any,
                 retry: frozenset[Any], parse_attempts: int, seed: int, sample: dict[str, Any] | None) -> None:
        self.built, self.sample_settings = built, sample
        if sample is not None and "published" in sample:
            find_published(sample)  # an unknown sample or model stops the run here, before any work
        self.sample: Sample | None = None
        self.base_sessions: tuple[Session, ...] = ()
        services = {}
        for c in built.conditions:
            if c.kind == BASELINE:
                continue
            if c.name in built.judges:
                judge, info = built.judges[c.name]
                services[c.name] = judge_scorer(info.name, judge, info.description, [], ledger, store, executors,
                                                parse_attempts=parse_attempts, retry=retry, seed=seed).service
            else:
                services[c.name] = _text_writer(run_scorer.service)
        self.prompts = ConditionPrompts(built.conditions, services, seed) if services else None

    def sessions(self, sessions: tuple[Session, ...]) -> tuple[Session, ...]:
        self.base_sessions = sessions
        return expand_sessions(sessions, self.built.conditions)

    def faces(self, faces: Iterable[Face]) -> Iterator[Face]:
        """The faces to run: all, or (with ``run.sample``) those in a sampled item, after drawing the sample."""
        if self.sample_settings is None:
            return iter(faces)
        listed = list(faces)
        draw = published_sample if "published" in self.sample_settings else stratified_sample
        self.sample = draw(listed, self.base_sessions, **self.sample_settings)
        chosen = {face_id for face_id, _ in self.sample.items}
        return (f for f in listed if f.face_id in chosen)

    def selects(self) -> Callable[[Face, Session], bool] | None:
        return self.sample.selects if self.sample is not None else None

    def aggregator(self, make: Callable[[], Aggregator], *, confidence: float, alpha: float,
                   judge_metrics: Iterable[Any] = ()) -> Any:
        """One aggregator (baseline only), or one per condition; a judge metric's values are one Holm family."""
        if self.built.default:
            return make()
        families = {v.name: m.name for m in judge_metrics for v in m.values}
        return ConditionResults([c.name for c in self.built.conditions], make, confidence=confidence, alpha=alpha,
                                families=families)

    def add_sections(self, sections: dict[str, Any]) -> None:
        if "conditions" in sections:
            sections["conditions"]["conditions"] = {c.name: c.describe() for c in self.built.conditions}
            sections["conditions"]["prompts"] = self.prompts.section() if self.prompts is not None else {}
        if self.sample is not None:
            sections["sample"] = self.sample.description
