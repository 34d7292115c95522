"""Checks of single settings, each refusal a :class:`ConfigError` that names the key, the value and what is
allowed (``run.shard=5/4 is not allowed: it must be ...``); the checks of the structured settings
``conditions`` and ``run.sample`` (their entries completed with defaults); and the parsers of settings given
as text: a shard ``i/n`` and the command line's ``key=value`` pairs. The config schemas, the CLI and every
plugin's settings use them (protocol authors through :mod:`faceedit_bench.api.sections`)."""

from __future__ import annotations

import json
from typing import Any

from faceedit_bench.errors import ConfigError


def _show(value: Any) -> str:
    return json.dumps(value, default=str) if value is None or isinstance(value, (bool, list, dict)) else str(value)


def parse_shard(value: Any, key: str = "run.shard") -> tuple[int, int]:
    """``(i, n)`` of a shard spec ``"i/n"``, else a :class:`ConfigError` saying how to write one."""
    text = str(value).strip()
    index, sep, count = text.partition("/")
    if not sep or not index.strip().isdigit() or not count.strip().isdigit():
        reject(key, value, 'a shard "i/n": shard i of n, counting from 0 (e.g. run.shard=0/4 ... run.shard=3/4)')
    i, n = int(index), int(count)
    if n < 1 or i >= n:
        reject(key, value, f"a shard i/n with n >= 1 and 0 <= i < n (for {max(n, 1)} shards: "
                           f"run.shard=0/{max(n, 1)} ... run.shard={max(n, 1) - 1}/{max(n, 1)})")
    return i, n


def reject(key: str, value: Any, allowed: str) -> None:
    """Refuse ``key=value``: a :class:`ConfigError` that names the key, the value and what is allowed."""
    raise ConfigError(f"{key}={_show(value)} is not allowed: it must be {allowed}.")


def check_number(key: str, value: Any, *, whole: bool = False, at_least: float | None = None,
                 above: float | None = None, below: float | None = None, none: str | None = None,
                 zero: str | None = None, example: str | None = None) -> None:
    """Refuse ``key=value`` (:func:`reject`) unless it is a number (``whole``: a whole number) >= ``at_least``,
    > ``above`` and < ``below`` (each where given); ``none`` and ``zero`` say what None (then allowed) and 0
    mean, ``example`` shows one (a fraction: ``above=0, below=1, example="0.95 for 95% intervals"``)."""
    if value is None and none is not None:
        return
    kinds = int if whole else (int, float)
    if (not isinstance(value, bool) and isinstance(value, kinds) and (at_least is None or value >= at_least)
            and (above is None or value > above) and (below is None or value < below)):
        return
    allowed = "a whole number" if whole else "a number"
    if above is not None and below is not None:
        allowed += f" strictly between {above} and {below}"
    else:
        allowed += "".join(f" {sign} {bound}" for sign, bound in ((">=", at_least), (">", above), ("<", below))
                           if bound is not None)
    for note in (example, zero and f"0: {zero}"):
        if note:
            allowed += f" ({note})"
    if none:
        allowed += f", or null for {none}"
    reject(key, value, allowed)


def check_positive(key: str, value: Any, unit: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not value > 0:
        reject(key, value, f"a number > 0 ({unit})")


def check_flag(key: str, value: Any) -> None:
    if not isinstance(value, bool):
        reject(key, value, "true or false")


def key_values(items: list[str], flag: str) -> dict[str, Any]:
    """Command-line ``key=value`` pairs (``-p model=gpt-4o``), each value read as YAML."""
    import yaml

    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} {item!r}: write key=value, e.g. {flag} model=gpt-4o")
        out[key] = yaml.safe_load(value)
    return out


#: Kinds of prompt condition, and the keys each entry of ``conditions`` may have (run/condition_prompts.py
#: builds the conditions).
CONDITION_KEYS: dict[str, tuple[str, ...]] = {
    "baseline": ("name", "kind"),
    "feature_prompt": ("name", "kind", "template", "position", "flagged", "judge"),
    "rewrite": ("name", "kind", "template", "flagged", "judge"),
}
CONDITION_EXAMPLE = ("e.g. conditions=[baseline,{name: features, kind: feature_prompt, template: <a registered "
                     "template>, position: append}]")


def check_conditions(raw: Any) -> list[dict[str, Any]]:
    """``conditions`` as a list of complete entries (name, kind and the kind's settings; templates are
    resolved by name when the experiment is built). A bare kind name stands for that kind's defaults."""
    if not isinstance(raw, (list, tuple)) or not raw:
        reject("conditions", raw, f"a non-empty list of conditions ({CONDITION_EXAMPLE})")
    out: list[dict[str, Any]] = []
    for i, entry in enumerate(raw):
        key = f"conditions[{i}]"
        entry = {"name": entry, "kind": entry} if isinstance(entry, str) else entry
        if not isinstance(entry, dict):
            reject(key, entry, f"a kind name ({', '.join(CONDITION_KEYS)}) or a mapping ({CONDITION_EXAMPLE})")
        kind = entry.get("kind", "baseline" if entry.get("name") == "baseline" else None)
        if kind not in CONDITION_KEYS:
            reject(f"{key}.kind", kind, f"one of {', '.join(CONDITION_KEYS)}")
        unknown = sorted(set(entry) - set(CONDITION_KEYS[kind]))
        if unknown:
            raise ConfigError(f"{key} ({kind}) does not take {', '.join(unknown)}; it takes "
                              f"{', '.join(CONDITION_KEYS[kind])}.")
        name = entry.get("name", kind)
        if not isinstance(name, str) or not name.replace("_", "").replace("-", "").isalnum():
            reject(f"{key}.name", name, "a name of letters, digits, '_' or '-'")
        if (name == "baseline") != (kind == "baseline"):
            reject(f"{key}.name", name, "'baseline' exactly for the baseline condition and for no other")
        spec: dict[str, Any] = {"name": name, "kind": kind}
        if kind != "baseline":
            template = entry.get("template")
            if template is not None and not (isinstance(template, str) and template.strip()):
                reject(f"{key}.template", template, "a registered condition template name, or omitted")
            flagged = entry.get("flagged", "keep")
            if flagged not in ("keep", "exclude"):
                reject(f"{key}.flagged", flagged, "keep (count texts naming a demographic label) or exclude "
                                                   "(end those edits as prompt_failed)")
            judge = entry.get("judge")
            if judge is not None and not (isinstance(judge, dict) and isinstance(judge.get("name"), str)
                                          and set(judge) <= {"name", "params"}):
                reject(f"{key}.judge", judge, "{name: <judge>, params: {...}}, or omitted for the run's judge")
            spec.update(template=template, flagged=flagged, judge=judge)
        if kind == "feature_prompt":
            position = entry.get("position", "append")
            if position not in ("prepend", "append", "append_released"):
                reject(f"{key}.position", position, "prepend (feature text, then the instruction), append (the "
                                                     "instruction, then the feature text) or append_released "
                                                     "(paper (b)'s released code: instruction + '. ' + text)")
            spec["position"] = position
        if any(s["name"] == name for s in out):
            raise ConfigError(f"conditions: the name {name!r} is used twice; give each condition its own name.")
        out.append(spec)
    return out


def check_sample(raw: Any) -> dict[str, Any]:
    """``run.sample`` with its defaults filled in (faceedit_bench/run/sampling.py)."""
    example = "e.g. run.sample={per_prompt: 25, by: [race, gender, age_bin], seed: 0}"
    if isinstance(raw, dict) and "published" in raw:
        unknown = sorted(set(raw) - {"published", "model"})
        if unknown:
            raise ConfigError(f"run.sample does not take {', '.join(unknown)} with published; it takes published "
                              "and model, run.sample={published: <sample>, model: <model>}.")
        # Which samples and models exist is the plugins' to say (run/sampling.py checks them when the run is planned).
        for key in ("published", "model"):
            if not isinstance(raw.get(key), str) or not raw[key]:
                reject(f"run.sample.{key}", raw.get(key), "a name (run.sample={published: <sample>, model: <model>})")
        return {"published": raw["published"], "model": raw["model"]}
    if not isinstance(raw, dict) or "per_prompt" not in raw:
        reject("run.sample", raw, f"a mapping with per_prompt ({example}) or published (run.sample={{published: "
                                   "<sample>, model: <model>}), or null for every (face, session)")
    unknown = sorted(set(raw) - {"per_prompt", "by", "seed"})
    if unknown:
        raise ConfigError(f"run.sample does not take {', '.join(unknown)}; it takes per_prompt, by, seed ({example}).")
    sample = {"per_prompt": raw["per_prompt"], "by": list(raw.get("by", ["race", "gender", "age_bin"])),
              "seed": raw.get("seed", 0)}
    check_number("run.sample.per_prompt", sample["per_prompt"], whole=True, at_least=1)
    check_number("run.sample.seed", sample["seed"], whole=True, at_least=0)
    if not all(isinstance(b, str) and b.strip() for b in sample["by"]):
        reject("run.sample.by", sample["by"], "a list of demographic attributes, e.g. [race, gender, age_bin]")
    return sample
