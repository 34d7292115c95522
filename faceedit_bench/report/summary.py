"""The console summary printed at the end of a run."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _ci(m: dict[str, Any]) -> str:
    if m.get("mean") is None:
        return "n/a"
    if m.get("ci_low") is None:
        return f"{m['mean']:.3f}"
    return f"{m['mean']:.3f} [{m['ci_low']:.3f}, {m['ci_high']:.3f}]"


def format_summary(report: dict[str, Any], output_dir: Path) -> str:
    counts = report["counts"]
    s = counts["sessions"]
    lines = [
        "",
        f"Run {report['run']['name']}  (key {report['run']['key'][:12]}, {report['run']['wall_time_s']:.1f} s)",
        f"Test set {report['testset']['name']} v{report['testset']['version']}"
        f" ({report['testset']['content_hash'][:12]}; reconstruction)",
        f"Faces: {counts['faces']['seen']} seen, excluded: {counts['faces']['excluded'] or 'none'}",
        f"Sessions: {s['planned']} planned, {s['included']} included, excluded: {s['excluded'] or 'none'}",
        f"Steps: {counts['steps'] or 'none'}; edited images without a face: {counts['edited_images_without_face']}",
        "",
        f"{'metric':<22}{'n':>7}  mean [95% CI]",
    ]
    for name, m in report["metrics"].items():
        arrow = "higher is better" if m["higher_is_better"] else "lower is better"
        lines.append(f"{name:<22}{m['n']:>7}  {_ci(m)} {m['unit']}  ({arrow})")
    lines.append(f"{'FSS trajectory':<22}" + "  ".join(
        f"k{p['k']}={p['mean']:.3f}" if p["mean"] is not None else f"k{p['k']}=n/a"
        for p in report["trajectory"]["fss"]))
    for key, labels in report["groups"].items():
        for label, g in labels.items():
            for name, m in g["metrics"].items():
                excluded = sum(g["sessions_excluded"].values())
                lines.append(f"  {key}={label:<14}{m['n']:>7}  {name} {_ci(m)}  (excluded sessions: {excluded})")
    for row in report.get("disparity", []):
        if row.get("wd") is not None:
            mark = "  BIAS" if row.get("bias") else ""
            lines.append(f"  disparity {row['metric']} by {row['contrast']}: WD {row['wd']:.2f}, "
                         f"p {row['p_value']:.4f}, worst {row.get('worst_group') or '-'}{mark}")
    if judge := report.get("counts", {}).get("judge"):
        lines.append(f"Judge answers: {judge}")
    if panel := report.get("judge_panel"):
        rule = panel.get("rule", {})
        lines.append(f"Judge panel {rule.get('rule')} (primary {rule.get('primary')}): {panel['status']}; "
                     f"{panel['flagged_items']} answer(s) flagged for review; members: "
                     f"{report['counts'].get('judge_members')}")
    if reliability := report.get("judge_reliability"):
        lines.append(f"Judge anchors: {reliability['passed']} passed, {reliability['failed']} failed"
                     + (f"; DRIFT {reliability['drift']}" if reliability["drift"] else ""))
    cost = report.get("cost") or {}
    if cost.get("estimated_usd") is not None:
        lines.append(f"Estimated cost: {cost['estimated_usd']:.4f} USD ({cost['new_usd']:.4f} USD new in this run)")
    for provider, c in (report.get("calls") or {}).items():
        lines.append(f"Calls {provider}: {c['calls']} calls, {c['attempts']} attempts, retries {c['retries'] or 0}, "
                     f"gave up {c['gave_up'] or 0}")
    if not report["run"].get("complete", True):
        lines.append(f"STOPPED: {report['run'].get('stopped')}")
    lines.append(f"FSS scale: {report['scales']['fss']}")
    for name, why in report.get("skipped_metrics", {}).items():
        lines.append(f"skipped {name}: {why}")
    lines.append(f"Artifacts: {output_dir}")
    return "\n".join(lines)
