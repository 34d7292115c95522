"""The runs a comparison reads: their reports and configs, and labels that say what each measured."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.analysis.baselines import is_reference_editor
from faceedit_bench.errors import FaceEditBenchError
from faceedit_bench.report.report_schema import run_report_schema
from faceedit_bench.report.run_report import SCHEMA_ID
from faceedit_bench.report.versions import named_version
from faceedit_bench.storage.user_files import check_schema, read_json, read_yaml


class CompareError(FaceEditBenchError):
    """A path that is not a run, or fewer than two runs."""


def load_run(path: Path) -> tuple[dict[str, Any], Path]:
    """The report of a run directory (or of a report.json file) and the directory its tables live in."""
    path = Path(path)
    file = path / "report.json" if path.is_dir() else path
    if not file.is_file():
        from faceedit_bench.storage.run_dirs import did_you_mean

        raise CompareError(f"{path}: no report.json there; pass a run directory (<workspace>/runs/<run>) "
                           f"or the path of its report.json.{did_you_mean(path) if not path.exists() else ''}")
    fix = "Rerun the experiment (or `faceedit-bench report`) to rewrite its report."
    report = read_json(file, what="run report", error=CompareError)
    if not isinstance(report, dict) or report.get("schema") != SCHEMA_ID:
        found = report.get("schema") if isinstance(report, dict) else type(report).__name__
        raise CompareError(f"{file}: not a faceedit_bench run report (schema {found!r}, expected {SCHEMA_ID!r})")
    check_schema(report, report_shape(), str(file), what="run report", error=CompareError, fix=fix)
    return report, file.parent


#: What a shape check leaves out of the schema: what is required, and the rules on values rather than types.
VALUE_RULES = frozenset({"required", "additionalProperties", "pattern", "enum", "const", "minimum", "maximum",
                         "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "minItems", "maxItems",
                         "format", "uniqueItems", "minProperties", "maxProperties"})


@functools.cache
def report_shape() -> dict[str, Any]:
    """The run report's schema as far as a comparison needs it: the type of every part that is there. Parts
    a report of an earlier schema version lacks are not required and values are not range-checked, so
    reports of every version since 1.0 compare; a part of the wrong type (``metrics`` a list) is refused."""

    def loosen(node: Any) -> Any:  # a schema: its keywords filtered; under "properties", names kept
        if isinstance(node, list):
            return [loosen(v) for v in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for key, value in node.items():
            if key in ("properties", "patternProperties", "$defs"):
                out[key] = {name: loosen(v) for name, v in value.items()}
            elif key not in VALUE_RULES:
                out["anyOf" if key == "oneOf" else key] = loosen(value)  # alternatives told apart by value
        return out

    shape = loosen(run_report_schema())
    shape["properties"].pop("schema_version", None)
    return shape


def editor_label(r: Mapping[str, Any]) -> str:
    editor = r.get("components", {}).get("editor", {})
    desc = editor.get("description") or {}
    version = next((desc[k] for k in ("model_version", "model", "version") if desc.get(k)), None)
    return named_version(editor.get("name", "?"), version)


def run_limits(config: Mapping[str, Any] | None) -> str:
    run = (config or {}).get("run") or {}
    limits = [f"{k}={run[k]}" for k in ("max_faces", "max_sessions") if run.get(k) is not None]
    return ", ".join(limits) or "no limits"


#: What may tell runs apart besides the editor, in the order labels name it.
LABEL_ASPECTS: tuple[tuple[str, Callable[[Mapping[str, Any], Mapping[str, Any] | None], str]], ...] = (
    ("test set", lambda r, c: f"{(r.get('testset') or {}).get('name')}"),
    ("dataset", lambda r, c: str(((r.get("components") or {}).get("dataset") or {}).get("name"))),
    ("embedder", lambda r, c: f"{((r.get('components') or {}).get('embedder') or {}).get('name')} "
                              f"{(r.get('scales') or {}).get('embedder_version')}"),
    ("judge", lambda r, c: (lambda j: "none" if not j else
                            f"{j.get('name')} {(j.get('description') or {}).get('model_version') or ''}".strip())(
        (r.get("components") or {}).get("judge"))),
    ("limits", lambda r, c: run_limits(c)),
)


def run_labels(reports: Sequence[Mapping[str, Any]],
               configs: Sequence[Mapping[str, Any] | None] | None = None) -> list[str]:
    """Editor name and model version, then what else differs between the runs (test set, dataset, embedder,
    judge, limits), so each column says what it measured; the run key (then a position) tells apart runs that
    share all of it. The identity editor is marked as the reference."""
    configs = list(configs) if configs is not None else [None] * len(reports)
    values = {name: [describe(r, c) for r, c in zip(reports, configs)] for name, describe in LABEL_ASPECTS}
    differing = [name for name, vals in values.items() if len(set(vals)) > 1]
    labels = []
    for i, r in enumerate(reports):
        extra = " · ".join(f"{name} {values[name][i]}" for name in differing)
        labels.append(editor_label(r) + (f" · {extra}" if extra else ""))
    labels = [f"{lab} [{r.get('run', {}).get('key', '')[:8]}]" if labels.count(lab) > 1 else lab
              for lab, r in zip(labels, reports)]
    labels = [f"{lab} #{i + 1}" if labels.count(lab) > 1 else lab for i, lab in enumerate(labels)]
    return [f"{lab} (reference: no edit)" if is_reference_run(r) else lab for lab, r in zip(labels, reports)]


def is_reference_run(report: Mapping[str, Any]) -> bool:
    return is_reference_editor(((report.get("components") or {}).get("editor") or {}).get("name"))


def run_config(run_dir: Path) -> Mapping[str, Any] | None:
    """The run's config.yaml (limits are not in the report), or None."""
    try:
        config = read_yaml(run_dir / "config.yaml", what="run config")
    except FaceEditBenchError:  # a run without its config is still compared, without its limits
        return None
    return config if isinstance(config, dict) else None
