"""The run report: a versioned JSON document (schema: :func:`~faceedit_bench.report.report_schema.run_report_schema`,
the core's ``schemas/run_report.schema.json`` with every registered section's; ``docs/run_report.md``), and its
flattening into tracker metrics."""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench import __version__
from faceedit_bench.keys import fingerprint
from faceedit_bench.plugin.manager import sections_in_use
from faceedit_bench.plugin.payloads import RunInfo
from faceedit_bench.plugin.sections import ReportSection, validate_part
from faceedit_bench.records import TestSet
from faceedit_bench.report.conditions_view import condition_metrics
from faceedit_bench.report.fidelity import preset_notes
from faceedit_bench.report.measures import collect_measures
from faceedit_bench.report.read_first import mostly_missing, report_warnings
from faceedit_bench.report.report_schema import section_part_schema

SCHEMA_ID = "faceedit_bench/run_report"
SCHEMA_VERSION = "1.5"

RECONSTRUCTION_NOTE = (
    "The Face-Edit-Attributes taxonomy and the test-set sessions are a reconstruction of paper (a)'s "
    "unpublished appendices (METHODOLOGY §8), not the authors' lists. Drop_FSS uses the reconstructed "
    "formula (100/K)·Σ(FSS_0−FSS_k)/FSS_0; an edited image with no detected face scores FSS_k = 0."
)

JUDGE_NOTE = (
    "SC follows VIEScore's 'tie' rule on (I_k-1, I_k, P_k) (the image pair is our reading of paper (a)); the "
    "state-tracker prompt and the overedit counting rules are reconstructions (METHODOLOGY §8.5). Judge answers "
    "that are refused, failed or unparsable leave the session's SC or OER undefined; they are never scored."
)


#: What describes one launch of a run rather than its results: when the report was made, how long the launch
#: took, the work and calls it made and their cost, whether and when it asked the judge's anchors, the launches
#: that did work and when the run was re-reported. Two launches of an unchanged run differ only in these.
LAUNCH_SECTIONS = ("calls", "performance")
LAUNCH_FIELDS = {"run": ("created_at", "wall_time_s", "computed", "launches", "re_reported"), "cost": ("new_usd",),
                 "judge_reliability": ("asked_now", "checked_at")}


def results_digest(report: Mapping[str, Any]) -> str:
    """SHA-256 of a run report's results: the report without what describes its launch (``LAUNCH_SECTIONS``,
    ``LAUNCH_FIELDS``) and without the sections attached after the run (``attached``: the commands that attach
    them log them to the tracker themselves). A tracker that holds the results of this digest has nothing new
    to record."""
    attached = report.get("attached") if isinstance(report.get("attached"), Mapping) else {}
    skipped = {*LAUNCH_SECTIONS, "attached", *attached}
    kept = {k: v for k, v in report.items() if k not in skipped}
    for section, fields in LAUNCH_FIELDS.items():
        if isinstance(kept.get(section), Mapping):
            kept[section] = {k: v for k, v in kept[section].items() if k not in fields}
    return fingerprint(kept)


def build_report(info: RunInfo, testset: TestSet, sections: dict[str, Any], *,
                 wall_time_s: float, computed: dict[str, int], stopped: str | None = None) -> dict[str, Any]:
    embedder = info.components["embedder"].description
    report = {
        "schema": SCHEMA_ID,
        "schema_version": SCHEMA_VERSION,
        "faceedit_bench_version": __version__,
        "run": {
            "key": info.run_key,
            "name": info.run_name,
            "experiment": info.experiment_name,
            "preset": info.preset,
            # the level of every interval in the report, so each is labelled with it ("90% CI")
            "confidence": float((info.config.get("run") or {}).get("confidence", 0.95)),
            "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "wall_time_s": round(wall_time_s, 3),
            "computed": computed,
            "complete": stopped is None,
            **({"stopped": stopped} if stopped else {}),
        },
        "components": {
            kind: {
                "name": c.name,
                "provider": c.provider,
                "provider_version": c.provider_version,
                "description": c.description,
            }
            for kind, c in info.components.items()
        },
        "testset": {
            "name": testset.name,
            "version": testset.version,
            "content_hash": testset.content_hash,
            "taxonomy_version": testset.taxonomy_version,
            "reconstruction": testset.reconstruction,
            "sessions": len(testset.sessions),
        },
        "scales": {
            "fss": str(embedder.get("similarity", "unspecified")),
            "embedder_version": str(embedder.get("version", "unknown")),
        },
        **sections,
        "measures": collect_measures(sections),  # how to read every named quantity (since 1.3)
        "notes": [RECONSTRUCTION_NOTE, *([JUDGE_NOTE] if "overediting" in sections else []),
                  *[str(n) for n in info.components["dataset"].description.get("notes") or []],
                  *preset_notes(info.preset, info.config)],
    }
    for section in sections_in_use():  # a part that breaks its own schema is refused, naming the field
        if isinstance(report.get(section.name), Mapping):
            validate_part(section, report[section.name], section_part_schema(section))
    # what must be read before any number: every measurement more than half missing or failed (since 1.4)
    report["warnings"] = mostly_missing(report)
    return report


def metric_key(*parts: Any) -> str:
    """snake_case MLflow-safe key from parts (``gender``, ``male``, ``drop_fss`` ...)."""
    return "_".join(re.sub(r"[^a-z0-9]+", "_", str(p).lower()).strip("_") for p in parts if str(p))


def metrics_for_tracking(report: dict[str, Any], sections: Sequence[ReportSection] | None = None) -> dict[str, float]:
    """Flatten a run report into numeric metrics for an experiment tracker (the per-step
    trajectories are left to the tracker); each report section flattens its own part
    (``sections``: default, those in use; the core's cost, calls and performance are sections too)."""
    out: dict[str, float] = {}

    def put(key: str, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[key] = float(value)

    warnings = report_warnings(report)
    put("warnings", len(warnings))  # runs with a mostly missing measurement: metrics.warnings > 0
    for w in warnings:
        put(metric_key("warning", w["code"], "share"), w["share"])
    for name, m in report["metrics"].items():
        put(name, m["mean"])
        for stat in ("ci_low", "ci_high", "n", "sd", "undefined_sessions"):
            put(metric_key(name, stat), m[stat])
    counts = report["counts"]
    put("faces_seen", counts["faces"]["seen"])
    for reason, n in counts["faces"]["excluded"].items():
        put(metric_key("faces_excluded", reason), n)
    for field in ("planned", "included"):
        put(metric_key("sessions", field), counts["sessions"][field])
    put("sessions_excluded", sum(counts["sessions"]["excluded"].values()))
    for reason, n in counts["sessions"]["excluded"].items():
        put(metric_key("sessions_excluded", reason), n)
    put("edited_images_without_face", counts["edited_images_without_face"])
    for conversion, n in counts.get("images_converted", {}).items():
        put(metric_key("images_converted", conversion), n)
    references = counts.get("references") or {}
    for field in ("listed", "used", "of_excluded_faces"):
        put(metric_key("references", field), references.get(field))
    for reason, n in (references.get("ignored") or {}).items():
        put(metric_key("references_ignored", reason), n)
    for key, labels in counts.get("steps_by_group", {}).items():
        for label, outcomes in labels.items():
            for outcome, n in outcomes.items():
                put(metric_key("steps", key, label, outcome), n)
    for template, outcomes in counts.get("judge", {}).items():
        for outcome, n in outcomes.items():
            put(metric_key("judge", template.split("@")[0], outcome), n)
    for metric, outcomes in counts.get("image_metrics", {}).items():
        for outcome, n in outcomes.items():
            put(metric_key("image_metrics", metric, outcome), n)
    for row in report.get("disparity", []):
        prefix = ("disparity", row["contrast"], row["metric"])
        put(metric_key(*prefix, "wd"), row["wd"])
        put(metric_key(*prefix, "p_value"), row["p_value"])
        for field in ("p_clustered", "p_holm", "q_value"):
            put(metric_key(*prefix, field), row.get(field))
        if row["bias"] is not None:  # not tested: no bias metric at all, never a 0
            put(metric_key(*prefix, "bias"), int(row["bias"]))
        paper = (row.get("paper_rule") or {}).get("bias")
        if paper is not None:
            put(metric_key(*prefix, "bias_paper_rule"), int(paper))
    for key, labels in report["groups"].items():
        for label, g in labels.items():
            put(metric_key(key, label, "sessions_included"), g["sessions_included"])
            put(metric_key(key, label, "sessions_excluded"), sum(g["sessions_excluded"].values()))
            for name, m in g["metrics"].items():
                put(metric_key(key, label, name), m["mean"])
                put(metric_key(key, label, name, "ci_low"), m["ci_low"])
                put(metric_key(key, label, name, "ci_high"), m["ci_high"])
    out.update(condition_metrics(report, metric_key))  # per prompt condition, and the paired deltas
    for section in sections_in_use() if sections is None else sections:
        part = report.get(section.name)
        if section.tracking is not None and isinstance(part, Mapping) and part:
            out.update({str(k): float(v) for k, v in section.tracking(part).items()})
    return out
