"""What using each editor and judge option takes, for ``faceedit-bench ls``: hosted or local, the environment
variable its API key is read from, and its price (the dated list prices it declares, per call where it declares a
call's usage).

Each option's entry is read with the entries its defaults list names, and a hosted component (one whose factory takes
``api_key_env``) is created without its key and without any call (:func:`no_provider_calls`); a local one is not
created (that may load a model), only described by its factory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.config import GROUP_KINDS
from faceedit_bench.errors import ConfigError
from faceedit_bench.execution.cost import cost_usd
from faceedit_bench.execution.offline import no_provider_calls
from faceedit_bench.plugin.manager import Plugins
from faceedit_bench.run.components import parameter_defaults

#: The groups whose options ``ls`` describes this way.
GROUPS = ("editor", "judge")


def option_access(plugins: Plugins, options: Mapping[str, Sequence[str]]) -> dict[str, dict[str, str]]:
    """group -> option -> ``hosted, key GEMINI_API_KEY or GOOGLE_API_KEY, about $0.039 a call (list prices
    2025-11-20)`` (or ``local``, or why it cannot be said)."""
    entries = _entries(plugins, {g: list(options.get(g, ())) for g in GROUPS})
    out: dict[str, dict[str, str]] = {}
    for group, by_option in entries.items():
        out[group] = {}
        for option, entry in by_option.items():
            try:
                out[group][option] = _describe(plugins, group, entry)
            except Exception as exc:  # noqa: BLE001 - one option that cannot be described leaves the others
                out[group][option] = f"not described: {type(exc).__name__}: {exc}"[:160]
    return out


def _entries(plugins: Plugins, options: Mapping[str, list[str]]) -> dict[str, dict[str, Any]]:
    """Each option's entry (``{name, params}``) as its YAML file and the entries its defaults list names make it
    (Hydra is not imported: ``ls`` stays quick); a registered component without a YAML entry: its name alone."""
    searchpath = plugins.searchpath()
    return {group: {name: _entry(searchpath, group, name) for name in names} for group, names in options.items()}


def _entry(searchpath: list[str], group: str, option: str) -> dict[str, Any]:
    import yaml

    from faceedit_bench.run.group_options import group_dirs

    path = next((p for d in group_dirs(searchpath, group) if (p := d / f"{option}.yaml").is_file()), None)
    if path is None:
        return {"name": option, "params": {}}
    own = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    defaults = own.pop("defaults", None) or []
    if "_self_" not in defaults:
        defaults = [*defaults, "_self_"]  # Hydra's rule: an entry's own values win over its defaults
    merged: dict[str, Any] = {}
    for item in defaults:
        if item == "_self_":
            merged = _merged(merged, own)
        elif isinstance(item, str):  # another option of the same group
            merged = _merged(merged, _entry(searchpath, group, item))
        elif isinstance(item, Mapping) and len(item) == 1:  # /judge@params.members.gpt: gpt5_mini
            ((where, choice),) = item.items()
            other, _, at = str(where).lstrip("/").partition("@")
            node: Any = _entry(searchpath, other, str(choice))
            for key in reversed(at.split(".") if at else []):
                node = {key: node}
            merged = _merged(merged, node)
    return merged


def _merged(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in over.items():
        out[key] = _merged(out[key], value) if isinstance(value, Mapping) and isinstance(out.get(key), Mapping) \
            else value
    return out


def _describe(plugins: Plugins, group: str, entry: Any) -> str:
    if isinstance(entry, Exception):
        raise entry
    name, params = str(entry["name"]), dict(entry.get("params") or {})
    if group == "judge" and name == "none":
        return "no judge"
    if group == "judge" and name == "panel":
        members = params.get("members") or {}
        if not members:
            return "a panel of the judges given as judge.params.members"
        return "panel: " + "; ".join(f"{label}: {_describe(plugins, group, m)}" for label, m in members.items())
    factory = plugins.registry.get(GROUP_KINDS[group], name).load()
    defaults = _parameters(factory)
    if "api_key_env" not in defaults:
        return "local (no API key; its cost is the machine's)"
    keys = params.get("api_key_env", defaults["api_key_env"])
    key_text = ("no key (a server of your own)" if not keys
                else "key " + " or ".join([keys] if isinstance(keys, str) else [str(k) for k in keys]))
    try:
        with no_provider_calls("faceedit-bench ls", "none is needed"):
            obj = factory(**{k: v for k, v in params.items() if not _interpolated(v)})
    except ConfigError as exc:  # e.g. a model to be named on the command line
        return f"hosted, {key_text}, price known once configured ({str(exc).split('. ')[0]})"
    return f"hosted, {key_text}, {price_text(obj)}"


def price_text(component: Any) -> str:
    """``about $0.039 a call (list prices 2025-11-20)``, or the price table's date alone, or ``price unknown``."""
    prices = getattr(component, "prices", None) or {}
    if not prices:
        return "price unknown (no price table; set its prices)"
    usage = usage_per_call(component)
    dated = f"list prices {prices.get('as_of', 'undated')}"
    if usage:
        return f"about ${cost_usd(usage, prices):.3f} a call ({dated})"
    per_m = ", ".join(f"{k} ${v * 1e6:g}/1M" for k, v in prices.items() if k != "as_of")
    return f"{per_m} ({dated}; usage per call: measured by a first run, faceedit-bench plan)"


def usage_per_call(component: Any) -> Mapping[str, Any] | None:
    """The usage of one call the component declares; for one priced per image only, one image."""
    declared = getattr(component, "usage_per_call", None)
    if declared:
        return declared
    priced = set(getattr(component, "prices", None) or {}) - {"as_of"}
    return {"images_out": 1} if priced == {"images_out"} else None


def _parameters(factory: Any) -> Mapping[str, Any]:
    try:
        return parameter_defaults(factory)
    except (TypeError, ValueError):  # no readable signature
        return {}


def _interpolated(value: Any) -> bool:
    return isinstance(value, str) and "${" in value
