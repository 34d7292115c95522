"""A study's results as console lines (``faceedit-bench study results``), each under 100 columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def number(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def interval_text(interval: Mapping[str, Any] | None, scale: float = 1.0) -> str:
    """`` [0.20, 0.61]`` (the ends times ``scale``), `` (no interval: <why>)`` or nothing."""
    interval = interval or {}
    if interval.get("low") is not None:
        digits = 2 if scale == 1 else 1
        return f" [{scale * interval['low']:.{digits}f}, {scale * interval['high']:.{digits}f}]"
    return f" (no interval: {interval['reason']})" if interval.get("reason") else ""


def alpha_text(part: Mapping[str, Any]) -> str:
    """``α 0.412 [0.20, 0.61] · κ 0.398`` or the reason a value is undefined."""
    alpha, kappa = part["krippendorff_alpha"], part["fleiss_kappa"]
    text = f"α {number(alpha['value'])}"
    text += f" ({alpha['reason']})" if alpha["value"] is None else interval_text(alpha.get("interval"))
    text += f" · κ {number(kappa['value'])}"
    return text + (f" ({kappa['reason']})" if kappa["value"] is None and kappa.get("reason") else "")


def judge_text(judge: Mapping[str, Any]) -> str:
    """Judge-human agreement, its intervals over identities: on scores ``Spearman 0.712 [0.58, 0.85] over 42
    outputs``; on categories ``same answer on 81.0% [71.6, 90.4] of 42 units · Cohen's κ 0.512 [0.31, 0.71]``;
    else why there is none."""
    if "item_level" in judge:
        rho = judge["item_level"]
        return (f"Spearman {number(rho.get('spearman'))}{interval_text(rho.get('spearman_interval'))} over "
                f"{judge['items']} outputs")
    if not judge.get("units"):
        return judge.get("reason") or "n/a"
    kappa = judge.get("cohens_kappa")
    return (f"same answer on {100 * judge['same']:.1f}%{interval_text(judge.get('same_interval'), 100)} of "
            f"{judge['units']} units · Cohen's κ {number(kappa)}{interval_text(judge.get('kappa_interval'))}"
            + (f" ({judge['kappa_reason']})" if kappa is None and judge.get("kappa_reason") else "")
            + (f"; {judge['ties']} tied" if judge.get("ties") else "")
            + (f"; {judge['no_judge_answer']} without a judge answer" if judge.get("no_judge_answer") else ""))


def yes_text(rates: list[Mapping[str, Any]]) -> str:
    """Checklist questions: how often people and the judge answered Yes."""
    people = sum(r["yes_rate"] for r in rates) / len(rates)
    judged = [r["judge"] == "Yes" for r in rates if r["judge"] is not None]
    judge = f"{100 * sum(judged) / len(judged):.1f}% of {len(judged)}" if judged else "n/a"
    return f"Yes: people {100 * people:.1f}% over {len(rates)} questions (mean per question), the judge {judge}"


def format_results(results: Mapping[str, Any]) -> str:
    lines = [f"{results['study_id']} ({results['kind']}): {results['title']}"]
    for who, p in results["progress"].items():
        gold = results["gold"].get(who, {})
        check = f", gold passed {gold['passed']} of {gold['seen'] - gold['pending']}" if gold else ""
        lines.append(f"  {who}: {p['answered']} of {p['assigned']} answered{check}")
    for name, q in results["questions"].items():
        overall = q["overall"]
        lines.append(f"{name}: {overall['items']} items · {alpha_text(overall)}")
        for group, part in q["groups"].items():
            lines.append(f"    {group}: {part['items']} items · {alpha_text(part)}")
        lines.append(f"    judge-human: {judge_text(q['judge_human'])}")
        if q.get("yes_rates"):
            lines.append(f"    {yes_text(q['yes_rates'])}")
    return "\n".join(lines)
