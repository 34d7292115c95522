"""The ``conditions`` section on the page and in the tracker: the mitigation tables, laid out like
paper (b)'s Tables 4 and 18 (one row per group, one column of Δ per metric value), a plot of Δ
per group, and the per-condition metrics flattened for MLflow."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench.report import plots
from faceedit_bench.report.measures import label_of

#: The attribute whose groups the plot shows, where the run has it (paper (b) plots Δ per race).
PLOT_ATTRIBUTES = ("race", "skin_tone", "gender")


def _cell(test: Mapping[str, Any]) -> dict[str, Any]:
    return {key: test.get(key) for key in ("mean_delta", "ci_low", "ci_high", "p_value", "p_holm", "reject_holm",
                                           "n_pairs", "dropped", "reason", "holm_family", "holm_m")}


def condition_view(report: Mapping[str, Any]) -> dict[str, Any] | None:
    """Plain data for the template, or None when the run has one condition."""
    section = report.get("conditions")
    if not section:
        return None
    metrics = list(report.get("metrics") or {})
    comparisons = []
    for name, comparison in (section.get("comparisons") or {}).items():
        overall = comparison.get("overall") or {}
        tables = []
        for attribute, groups in (comparison.get("by_group") or {}).items():
            rows = [{"group": label, "n_items": family.get("items"),
                     "cells": {m: _cell(family["metrics"][m]) for m in metrics if m in family.get("metrics", {})}}
                    for label, family in groups.items()]
            tables.append({"attribute": attribute, "rows": rows})
        comparisons.append({
            "name": name, "vs": comparison.get("vs"), "n_items": overall.get("items"),
            "composition": composition((section.get("conditions") or {}).get(name) or {}),
            "overall": [{"metric": m, **_cell(t)} for m, t in (overall.get("metrics") or {}).items()],
            "tables": tables, "plot": _plot_uri(name, comparison, metrics),
            "steps": [{"k": k, "cells": {m: _cell(t) for m, t in (family.get("metrics") or {}).items()}}
                      for k, family in (comparison.get("by_step") or {}).items()]})
    per_condition = [{"name": name, "spec": (section.get("conditions") or {}).get(name, {}),
                      "prompts": (section.get("prompts") or {}).get(name), **summary}
                     for name, summary in (section.get("per_condition") or {}).items()]
    return {"reference": section.get("reference"), "metrics": metrics, "per_condition": per_condition,
            "comparisons": comparisons, "alpha": section.get("alpha"), "confidence": section.get("confidence"),
            "sample": report.get("sample")}


def composition(spec: Mapping[str, Any]) -> str | None:
    """How a feature-prompt condition composed its prompts and why, as the report prints it next to its deltas."""
    if not spec.get("position"):
        return None
    return f"prompt = {spec.get('joining')} (position {spec['position']}): {spec.get('why')}"


def plot_deltas(condition: str, comparison: Mapping[str, Any], metrics: list[str]) -> bytes | None:
    """Δ per group of the first of :data:`PLOT_ATTRIBUTES` the run has: one panel per metric value,
    a horizontal bar per group with its CI, 0 marked."""
    by_group = comparison.get("by_group") or {}
    attribute = next((a for a in PLOT_ATTRIBUTES if a in by_group), next(iter(by_group), None))
    if attribute is None or not metrics:
        return None
    groups = list(by_group[attribute])
    fig = plots.figure(3.2 * min(len(metrics), 4), 0.45 * len(groups) * ((len(metrics) + 3) // 4) + 1.2)
    if fig is None:
        return None
    with plots.no_mathtext():
        columns = min(len(metrics), 4)
        rows = (len(metrics) + columns - 1) // columns
        for i, metric in enumerate(metrics):
            ax = fig.add_subplot(rows, columns, i + 1)
            tests = [by_group[attribute][g]["metrics"].get(metric, {}) for g in groups]
            means = [t.get("mean_delta") for t in tests]
            ys = list(range(len(groups)))
            for y, t, mean in zip(ys, tests, means):
                if mean is None:
                    continue
                low, high = t.get("ci_low"), t.get("ci_high")
                err = [[mean - low], [high - mean]] if low is not None and high is not None else None
                ax.barh(y, mean, xerr=err, color=plots.PALETTE[0] if not t.get("reject_holm") else plots.PALETTE[1],
                        capsize=3)
            ax.axvline(0, color="#555", linewidth=0.8)
            ax.set_yticks(ys, groups if i % columns == 0 else [""] * len(groups), fontsize=8)
            ax.set_title(f"Δ {label_of(metric)}", fontsize=9)
            ax.invert_yaxis()
        fig.suptitle(f"{condition} − {comparison.get('vs')} by {attribute} (mean Δ, CI; orange: Holm-significant)",
                     fontsize=9)
        fig.tight_layout()
        return plots.png_bytes(fig)


def _plot_uri(condition: str, comparison: Mapping[str, Any], metrics: list[str]) -> str | None:
    import base64

    data = plot_deltas(condition, comparison, metrics)
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def condition_metrics(report: Mapping[str, Any], key: Any) -> dict[str, float]:
    """Tracker metrics: each condition's metric means (``condition_<name>_<metric>``), and per compared
    condition Δ, its CI and p-values overall and per group (``condition_<name>_delta_<metric>``,
    ``condition_<name>_<attribute>_<group>_delta_<metric>``). ``key`` builds MLflow-safe names."""
    section = report.get("conditions") or {}
    out: dict[str, float] = {}

    def put(name: str, value: Any) -> None:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            out[name] = float(value)

    for name, summary in (section.get("per_condition") or {}).items():
        for metric, m in (summary.get("metrics") or {}).items():
            put(key("condition", name, metric), m.get("mean"))
            put(key("condition", name, metric, "n"), m.get("n"))
        for outcome, n in (summary.get("steps") or {}).items():
            put(key("condition", name, "steps", outcome), n)
    for name, prompts in (section.get("prompts") or {}).items():
        put(key("condition", name, "flagged_texts"), prompts.get("flagged_texts"))
        for outcome, n in (prompts.get("answers") or {}).items():
            put(key("condition", name, "prompt_answers", outcome), n)
    for name, comparison in (section.get("comparisons") or {}).items():
        families = [((), comparison.get("overall") or {})]
        families += [((attribute, label), family) for attribute, groups in (comparison.get("by_group") or {}).items()
                     for label, family in groups.items()]
        for where, family in families:
            for metric, t in (family.get("metrics") or {}).items():
                prefix = ("condition", name, *where, "delta", metric)
                put(key(*prefix), t.get("mean_delta"))
                for stat in ("ci_low", "ci_high", "p_value", "p_holm", "n_pairs", "dropped"):
                    put(key(*prefix, stat), t.get(stat))
    return out
