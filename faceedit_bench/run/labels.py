"""How a run is named and described to people (tracker run names, notes, job tables), and the
identities and versions of its components as trackers record them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.keys import fingerprint, portable
from faceedit_bench.plugin.payloads import ComponentInfo, RunInfo

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
