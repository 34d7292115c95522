"""The options of each config group: the YAML entries in the core's and the plugins' conf folders, plus the
registered components' names. Hydra is not imported: ``faceedit-bench ls`` lists them without it."""

from __future__ import annotations

from importlib import resources
from pathlib import Path
from typing import Any

from faceedit_bench.config import GROUP_KINDS, conf_dir
from faceedit_bench.plugin.manager import Plugins


def yaml_options(searchpath: list[str], group: str) -> set[str]:
    """Option names defined by YAML files of ``group`` in the main and plugin conf dirs."""
    names: set[str] = set()
    for d in group_dirs(searchpath, group):
        if d.is_dir():
            names.update(f.name.rsplit(".", 1)[0] for f in d.iterdir() if f.name.endswith(".yaml"))
    return names


def group_dirs(searchpath: list[str], group: str) -> list[Any]:
    """The folders of ``group``'s YAML entries: the core's conf dir, then each plugin's."""
    dirs: list[Any] = [conf_dir() / group]
    for entry in searchpath:
        if entry.startswith("pkg://"):
            package = entry.removeprefix("pkg://").replace("/", ".")
            try:
                dirs.append(resources.files(package) / group)
            except ModuleNotFoundError:
                continue
        elif entry.startswith("file://"):
            dirs.append(Path(entry.removeprefix("file://")) / group)
    return dirs


#: Groups of YAML entries only (no registered component behind them): presets.
YAML_GROUPS = ("experiment",)


def group_options(plugins: Plugins) -> dict[str, list[str]]:
    """Every selectable option per config group: YAML entries plus registered names."""
    searchpath = plugins.searchpath()
    options = {}
    for group, kind in GROUP_KINDS.items():
        names = set(plugins.registry[kind].names()) | yaml_options(searchpath, group)
        options[group] = sorted(names)
    for group in YAML_GROUPS:
        options[group] = sorted(yaml_options(searchpath, group))
    return options
