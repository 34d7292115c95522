"""Mandatory settings (``???``) left unset: one line each, saying what the setting is, for which preset,
with an example command. Found before anything is created (faceedit_bench/run/preflight.py)."""

from __future__ import annotations

from typing import Any

from omegaconf import OmegaConf

from faceedit_bench.config import GROUP_KINDS
from faceedit_bench.errors import ConfigError

#: What each mandatory setting (``???``) of a builtin config entry is, and an example value, by
#: (selected option, key): the message for a missing one says what to give.
REQUIRED_SETTINGS: dict[tuple[str, str], tuple[str, str]] = {
    ("folder", "dataset.params.root"): ("the folder of your images with its manifest.csv", "/data/myfaces"),
    ("celeba", "dataset.params.root"): ("the CelebA folder in its official layout: Img/img_align_celeba, Anno/, "
                                        "Eval/", "/data/celeba"),
    ("celebset", "dataset.params.root"): ("the CelebSET folder: celebset.csv and its images, or IMDB-WIKI's "
                                          "imdb.mat", "/data/celebset"),
    ("fairface", "dataset.params.root"): ("the FairFace folder: label CSVs and images, or the Hugging Face parquet "
                                          "files", "/data/fairface"),
    ("file", "testset.params.path"): ("a frozen test-set JSON file", "my_testset.json"),
    ("replay", "editor.params.root"): ("the folder of edits made elsewhere, "
                                       "<root>/<face>/<session>/step_<k>.png", "/data/edited_images"),
}


def check_no_missing(cfg: Any, preset: str | None = None) -> None:
    """Fail with one line per mandatory setting (``???``) left unset: what it is and an example command.
    ``preset``: the experiment preset selected (default: Hydra's choice, when Hydra composed ``cfg``)."""
    data = OmegaConf.to_container(cfg, resolve=False) if OmegaConf.is_config(cfg) else cfg
    missing = _missing_keys({k: v for k, v in data.items() if k != "hydra"})
    if not missing:
        return
    preset = preset or selected_preset()
    lines = []
    for key in missing:
        group = key.split(".", 1)[0]
        name = data.get(group, {}).get("name") if group in GROUP_KINDS and isinstance(data.get(group), dict) else None
        what, example = REQUIRED_SETTINGS.get((str(name), key)) or _declared(group, name, key) or ("", "...")
        what = f": {what}" if what else ""
        if preset:
            lines.append(f"experiment={preset} needs {key}{what} "
                         f"(e.g. python -m faceedit_bench experiment={preset} {key}={example})")
        else:
            selected = f"{group}={name} " if isinstance(name, str) else ""
            lines.append(f"required setting not given: {key}{what} "
                         f"(e.g. python -m faceedit_bench {selected}{key}={example})")
    raise ConfigError("; ".join(lines))


def _declared(group: str, name: Any, key: str) -> tuple[str, str] | None:
    """What a plugin's component says about its mandatory parameter: its factory's ``required_settings``
    (parameter -> (what it is, an example value); docs/plugin_hooks.md)."""
    from faceedit_bench.plugin.manager import current_plugins

    table = current_plugins().registry[GROUP_KINDS[group]] if group in GROUP_KINDS else None
    if table is None or not isinstance(name, str) or name not in table.names():
        return None
    declared = getattr(table.get(name).load(), "required_settings", None) or {}
    found = declared.get(key.split(".params.", 1)[-1])
    return (str(found[0]), str(found[1])) if found else None


def _missing_keys(node: Any, prefix: str = "") -> list[str]:
    """Keys whose value is ``???`` (interpolations are not followed: the key they point to is reported)."""
    if isinstance(node, dict):
        items = [(f"{prefix}{k}", v) for k, v in node.items()]
    elif isinstance(node, list):
        items = [(f"{prefix[:-1]}[{i}]", v) for i, v in enumerate(node)]
    else:
        return []
    out = []
    for key, value in items:
        if isinstance(value, str) and value == "???":
            out.append(key)
        else:
            out.extend(_missing_keys(value, f"{key}."))
    return out


def selected_preset() -> str | None:
    """The ``experiment=`` preset Hydra composed the current config with, if any."""
    from hydra.core.hydra_config import HydraConfig  # only when Hydra composed the config

    if not HydraConfig.initialized():
        return None
    choices = HydraConfig.get().runtime.choices
    preset = choices.get("experiment") if choices is not None else None
    return str(preset) if preset else None
