"""The experiment's schema with every registered report section's settings composed at ``analysis.<name>``,
and each section's ``prepare`` when the experiment is built.

:class:`~faceedit_bench.config.ExperimentConfig` holds the core's settings; a section's settings dataclass
(:class:`~faceedit_bench.plugin.sections.ReportSection`'s ``settings``) joins them under ``analysis`` when
the schema is built for a plugin set, so ``analysis.<name>.<key>=...`` composes and type-checks like a
core setting, and the unknown-key check (:mod:`faceedit_bench.run.setting_keys`) knows the section's keys.
The composed config turns into objects as before: ``conf.analysis.<name>`` is the section's settings object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from omegaconf import DictConfig, OmegaConf, open_dict

from faceedit_bench.config import AnalysisConf, ExperimentConfig
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.plugin.sections import ReportSection, SectionSetup, settings_of

CORE_ANALYSIS = frozenset(f.name for f in dataclasses.fields(AnalysisConf))


def section_settings(sections: Sequence[ReportSection]) -> dict[str, type]:
    """Section name -> its settings dataclass, for the sections that have settings."""
    out = {}
    for section in sections:
        if section.settings is None:
            continue
        if section.name in CORE_ANALYSIS:
            raise FaceEditBenchError(f"report section {section.name!r} cannot compose its settings at "
                                     f"analysis.{section.name}: that is a core setting; rename the section")
        out[section.name] = section.settings
    return out


def experiment_base(sections: Sequence[ReportSection]) -> DictConfig:
    """The schema node Hydra composes the experiment onto (``base_config``)."""
    cfg = OmegaConf.structured(ExperimentConfig)
    with open_dict(cfg.analysis):  # the core's analysis settings, then each section's under its name
        for name, settings in section_settings(sections).items():
            cfg.analysis[name] = OmegaConf.structured(settings)
    return cfg


def run_key_analysis(sections: Sequence[ReportSection], analysis: Mapping[str, Any]) -> dict[str, Any]:
    """The resolved ``analysis`` settings as the run key reads them: without the section settings whose field
    says ``metadata={"run_key": False}`` (inputs whose content the bound judge metrics' identity already holds,
    e.g. the paths of question sets: the same sets moved elsewhere are the same run)."""
    out = dict(analysis)
    for section in sections:
        part = out.get(section.name)
        if section.settings is None or not isinstance(part, Mapping):
            continue
        dropped = {f.name for f in dataclasses.fields(section.settings) if f.metadata.get("run_key") is False}
        out[section.name] = {k: v for k, v in part.items() if k not in dropped}
    return out


def prepare_sections(plugins: Plugins, judge_metrics: Sequence[Any], analysis: Any, config: Mapping[str, Any],
                     testset: Any, *, judged: bool) -> list[Any]:
    """``judge_metrics`` (in their order) as the sections' ``prepare`` bind them, each section in turn."""
    metrics = {m.name: m for m in judge_metrics}

    def load(kind: str, name: str) -> Any:
        return plugins.registry.get(kind, name).load()

    for section in plugins.sections():
        if section.prepare is None:
            continue
        setup = SectionSetup(judge_metrics=dict(metrics), settings=settings_of(analysis, section), config=config,
                             testset=testset, judged=judged, load=load)
        for name, metric in (section.prepare(setup) or {}).items():
            if name not in metrics:
                raise FaceEditBenchError(f"report section {section.name}: prepare gave judge metric {name!r}, which "
                                         "this run did not select; a section binds the selected metrics only")
            metrics[name] = metric
    return [metrics[m.name] for m in judge_metrics]
