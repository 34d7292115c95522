"""Every key of a composed experiment must be known: to the schema (``run``, ``analysis`` and the other
sections of :class:`~faceedit_bench.config.ExperimentConfig`) or to the factory of the component it
configures (``<group>.params``, a panel's members, a condition's judge). Hydra's ``+key=value`` adds any
key, so a typo would otherwise be carried silently (and even change the run key); it is refused here,
with the closest known key, before anything is created."""

from __future__ import annotations

import dataclasses
import functools
import typing
from collections.abc import Mapping
from typing import Any

from omegaconf import OmegaConf

from faceedit_bench.config import GROUP_KINDS, ComponentConf, ExperimentConfig
from faceedit_bench.errors import ConfigError
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.run.components import accepted_params, check_params, unknown_key
from faceedit_bench.run.judges import PANEL, PANEL_PARAMS
from faceedit_bench.run.section_settings import section_settings


def check_setting_keys(cfg: Any, plugins: Plugins) -> None:
    """Raise :class:`ConfigError` naming the first unknown key, with the closest known one."""
    data = OmegaConf.to_container(cfg, resolve=False) if OmegaConf.is_config(cfg) else cfg
    assert isinstance(data, dict)
    sections = section_settings(plugins.sections())  # analysis.<name>: each report section's settings
    _check_schema({k: v for k, v in data.items() if k != "hydra"}, ExperimentConfig, "", sections)
    for group in GROUP_KINDS:
        entry = data.get(group)
        if isinstance(entry, Mapping):
            _check_component(plugins, group, entry, group)
    for i, condition in enumerate(data.get("conditions") or ()):
        judge = condition.get("judge") if isinstance(condition, Mapping) else None
        if isinstance(judge, Mapping):
            _check_component(plugins, "judge", judge, f"conditions[{i}].judge")


def _check_schema(node: Mapping[str, Any], schema: type, section: str,
                  sections: Mapping[str, type] | None = None) -> None:
    fields = {**_fields(schema), **((sections or {}) if section == "analysis" else {})}
    for key, value in node.items():
        if key not in fields:
            below = [f"{name}.{key}" for name, kind in fields.items()
                     if dataclasses.is_dataclass(kind) and key in _fields(kind)] if not section else []
            if below:  # max_faces=2 for run.max_faces=2
                raise ConfigError(f"{key} is not a top-level setting (did you mean {' or '.join(below)}?): "
                                  f"write {below[0]}=<value>.")
            where = f"The settings of {section}" if section else "The top-level settings"
            raise ConfigError(f"{unknown_key(section, key, list(fields))}. {where}: {', '.join(fields)}.")
        kind = fields[key]
        if dataclasses.is_dataclass(kind) and kind is not ComponentConf and isinstance(value, Mapping):
            _check_schema(value, kind, f"{section}.{key}" if section else key, sections)


@functools.cache
def _fields(schema: type) -> dict[str, Any]:
    hints = typing.get_type_hints(schema)
    return {f.name: hints[f.name] for f in dataclasses.fields(schema)}


def _check_component(plugins: Plugins, group: str, entry: Mapping[str, Any], key: str) -> None:
    """``entry`` = {name, params}: both keys known, and every parameter known to the named factory."""
    _check_schema(entry, ComponentConf, key)
    name, params = entry.get("name"), entry.get("params")
    if not isinstance(name, str) or name == "???" or "${" in name:
        return  # a missing name is reported as missing; an interpolated one when it is resolved
    if not isinstance(params, Mapping):
        return  # not a mapping: the schema says so when the config becomes objects
    if group == "judge" and name == "none":
        if params:
            raise ConfigError(f"{key}=none takes no parameters, but {key}.params has {', '.join(params)}: "
                              f"choose a judge (e.g. {key.split('[')[0]}=gemini) or remove them.")
        return
    if group == "judge" and name == PANEL:
        _check_panel(plugins, params, key)
        return
    registration = plugins.registry.get(GROUP_KINDS[group], name)
    factory = registration.load()
    if accepted_params(factory, registration) is not None:
        check_params(group, ComponentConf(name, dict(params)), factory, registration=registration,
                     where=f"{key}.params")


def _check_panel(plugins: Plugins, params: Mapping[str, Any], key: str) -> None:
    unknown = [p for p in params if p not in PANEL_PARAMS]
    if unknown:
        raise ConfigError(f"judge 'panel' does not take parameter(s) {', '.join(unknown)}: "
                          + "; ".join(unknown_key(f"{key}.params", p, list(PANEL_PARAMS)) for p in unknown)
                          + f". Accepted: {', '.join(PANEL_PARAMS)}.")
    members = params.get("members")
    if isinstance(members, Mapping):
        for label, member in members.items():
            if isinstance(member, Mapping):
                _check_component(plugins, "judge", member, f"{key}.params.members.{label}")
