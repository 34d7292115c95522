"""What a human evaluation adds to the runs it rated, for ``faceedit-bench human report`` and ``human winobias``:
its section in each run's report.json and report.html, and its numbers on each run's tracker run."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from faceedit_bench.api import FaceEditBenchError
from faceedit_bench.api.sections import FinishedRun, metric_key
from faceedit_bench_audit.human.runs import RatedRun

SECTION = "human_agreement"


def tracking_metrics(section: Mapping[str, Any], editor: str | None = None) -> dict[str, float]:
    """``human_*`` numbers for a tracker: per axis the human mean (of ``editor``'s outputs when given),
    κ, α and VLM − human; per condition the paired Δ and p; per metric its agreement with people."""
    out: dict[str, float] = {}

    def put(value: Any, *parts: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[metric_key("human", *parts)] = float(value)

    for axis, a in section["axes"].items():
        mean = (a["by_editor"].get(editor) or {}).get("mean") if editor else a["human"]["mean"]
        put(mean, axis, "mean")
        put(a["fleiss_kappa"].get("value"), axis, "fleiss_kappa")
        put(a["krippendorff_alpha"].get("value"), axis, "krippendorff_alpha")
        put(((section.get("vlm_vs_human") or {}).get("by_axis") or {}).get(axis, {}).get("difference"),
            axis, "vlm_minus_human")
    for family in section.get("paired") or []:
        for t in family["tests"]:
            put(t["mean_delta"], t["name"], family["condition"], "delta")
            put(t["p_value"], t["name"], family["condition"], "p_value")
    for m in section.get("metric_agreement") or []:
        name = m["metric"].replace(":", "_")
        put(m["item_level"].get("spearman"), "agreement", name, "item_spearman")
        put(m["item_level"].get("kendall"), "agreement", name, "item_kendall")
        put(m["system_level"].get("spearman"), "agreement", name, "system_spearman")
        put(m["pairwise"].get("accuracy"), "agreement", name, "pairwise_accuracy")
    return out


def add_to_run(run: RatedRun, section: Mapping[str, Any], name: str = SECTION) -> None:
    """The section into the run's report.json (as ``name``) and report.html, under the run folder's lock; a later
    report of the run (a rerun, ``make run``) keeps it."""
    FinishedRun(run.report, run.run_dir).attach(name, section)


def log_to_trackers(runs: Sequence[RatedRun], section: Mapping[str, Any], tracking_uri: str | None,
                    metrics: Callable[[Mapping[str, Any], str | None], dict[str, float]] | None = None) -> list[str]:
    """Each run's numbers of ``section`` (``metrics``: the human_* ones by default) to its tracker run."""
    metrics = metrics or tracking_metrics
    lines = []
    for run in runs:
        finished = FinishedRun(run.report, run.run_dir)
        uri = tracking_uri or finished.tracking_uri  # --tracking-uri, else where the run was tracked
        if uri is None or not finished.key:
            lines.append(f"{run.label}: not tracked (tracking=none); metrics only in report.json")
            continue
        run_id = finished.log(uri, metrics=metrics(section, run.label))
        if run_id is None:
            raise FaceEditBenchError(f"no installed tracker plugin reads {uri}; install faceedit-bench-mlflow "
                                     "or pass --no-tracking")
        lines.append(f"{run.label}: human metrics logged to tracker run {run_id}")
    return lines
