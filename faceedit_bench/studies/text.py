"""A study's results as console lines (``faceedit-bench study results``), each under 100 columns."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def number(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def interval_text(interval: Mapping[str, Any] | None, scale: float = 1.0) -> str:
    """`` [0.20, 0.61]`` (the ends times ``scale``), or nothing where there is none (:func:`no_interval`)."""
    if not interval or interval.get("low") is None:
        return ""
    digits = 2 if scale == 1 else 1
    return f" [{scale * interval['low']:.{digits}f}, {scale * interval['high']:.{digits}f}]"


def no_interval(*intervals: Mapping[str, Any] | None) -> str:
    """`` (no interval: <why>)``, each reason once, for the intervals that could not be given."""
    reasons = dict.fromkeys(i["reason"] for i in intervals if i and i.get("low") is None and i.get("reason"))
    return f" (no interval: {'; '.join(reasons)})" if reasons else ""


def alpha_text(part: Mapping[str, Any]) -> str:
    """``α 0.412 [0.20, 0.61] · κ 0.398`` or the reason a value is undefined."""
    alpha, kappa = part["krippendorff_alpha"], part["fleiss_kappa"]
    text = f"α {number(alpha['value'])}"
    interval = alpha.get("interval")
    text += f" ({alpha['reason']})" if alpha["value"] is None else interval_text(interval) + no_interval(interval)
    text += f" · κ {number(kappa['value'])}"
    return text + (f" ({kappa['reason']})" if kappa["value"] is None and kappa.get("reason") else "")


def judge_text(judge: Mapping[str, Any]) -> str:
    """Judge-human agreement, its intervals over identities: on scores ``Spearman 0.712 [0.58, 0.85] over 42
    outputs``; on categories ``same answer on 81.0% [71.6, 90.4] of 42 units · Cohen's κ 0.512 [0.31, 0.71]``;
    else why there is none."""
    if "item_level" in judge:
        rho = judge["item_level"]
        interval = rho.get("spearman_interval")
        return (f"Spearman {number(rho.get('spearman'))}{interval_text(interval)} over {judge['items']} outputs"
                + (f" ({rho['reason']})" if rho.get("spearman") is None and rho.get("reason") else no_interval(interval)))
    if not judge.get("units"):
        return judge.get("reason") or "n/a"
    kappa, same, kappas = judge.get("cohens_kappa"), judge.get("same_interval"), judge.get("kappa_interval")
    return (f"same answer on {100 * judge['same']:.1f}%{interval_text(same, 100)} of {judge['units']} units · "
            f"Cohen's κ {number(kappa)}{interval_text(kappas)}" + no_interval(same, kappas)
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
