"""The arena's console lines: the leaderboard with intervals, and what was judged, left out and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def _num(value: float | None) -> str:
    return "unrated" if value is None else f"{value:.1f}"


def rank_text(e: Mapping[str, Any]) -> str:
    """``2 (1–3)``: the rank and its bootstrap interval; ``–`` for an unrated editor."""
    if e.get("rank") is None:
        return "–"
    low, high = e.get("rank_ci") or (e["rank"], e["rank"])
    return f"{e['rank']}" if low == high == e["rank"] else f"{e['rank']} ({low}–{high})"


def editor_line(e: Mapping[str, Any]) -> str:
    if e["rating"] is None:
        return f"{'–':>10}  {e['editor']:<24} unrated ({e.get('unrated', 'no rated battle')})"
    return (f"{rank_text(e):>10}  {e['editor']:<24} {e['rating']:7.1f}  "
            f"[{e['ci_low']:.1f}, {e['ci_high']:.1f}]")


def _group_test_lines(whose: str, tests: Mapping[str, Any]) -> list[str]:
    def text(t: Mapping[str, Any]) -> str:
        if "p_value" not in t:
            return str(t.get("not_testable") or t.get("skipped"))  # "skipped": arenas made before 'not testable'
        holm = f", Holm p = {t['p_holm']:.3g} of {t['family']} label(s)" if "p_holm" in t else ""
        return (f"group x editor p = {t['p_value']:.3g}{holm} ({t['n_permutations']} permutations of identities"
                f"{' ' + str(t['identities_per_group']) if 'identities_per_group' in t else ''})")

    return [f"Ranking by {key} ({whose}): {text(t)}" for key, t in tests.items()]


def summary(part: Mapping[str, Any]) -> str:
    ratings = part["criteria"]["overall"]["ratings"]
    other = {e["editor"]: e for e in part["criteria"]["overall"]["ratings_other_policy"]["editors"]}
    c, s = part["counts"], part["sampling"]
    other_name = "exclude" if part["policy"] == "loss" else "loss"
    lines = [f"Arena (overall; {int(ratings['confidence'] * 100)}% CI and rank interval, "
             f"{ratings['n_identities']} identities resampled; "
             f"one-sided battles: {part['policy']}, '{other_name}' beside it)"]
    if ratings.get("preliminary"):
        lines.append(f"  PRELIMINARY: {ratings['caveat']}")
    for e in ratings["editors"]:
        lines.append(f"  {editor_line(e)}  ({other_name}: {_num(other[e['editor']]['rating'])})  "
                     f"{e['battles']} battles")
    lines.append(f"Judged {c['judged']} of {c['available']} battles ({c['decided']} decided, {c['incomplete']} "
                 f"incomplete, {c['position_inconsistent']} position-inconsistent ties); one-sided "
                 f"{c['one_sided']}, both failed {c['both_failed']}.")
    lines.append(f"Stopped: {s['stop']} after {s['rounds']} round(s); {s['calls_planned']} questions planned, "
                 f"{s['calls_made']} calls made (the rest from the ledger).")
    bias = part["position_bias"]["criteria"]["overall"]
    if bias["decisive"]:
        lines.append(f"Position bias (overall{', all members' if part.get('panel') else ''}): "
                     f"first position won {bias['first_position_wins']} of "
                     f"{bias['decisive']} decisive answers ({bias['first_position_share']:.0%}, "
                     f"p={bias['p_value']:.3g}).")
    lines += _group_test_lines("judge", part.get("group_tests") or {})
    human = part.get("human")
    if human:
        r = human["ratings"]
        lines.append(f"People's votes: {human['votes']} by {human['voters']} voter(s), {r['n_identities']} resampling "
                     "units" + (f" (PRELIMINARY: {r['caveat']})" if r.get("preliminary") else ""))
        lines += [f"  {editor_line(e)}  {e['battles']} votes" for e in r["editors"]]
        lines += _group_test_lines("people", human.get("group_tests") or {})
        lines += [f"  warning: {w}" for w in human.get("warnings") or []]
    panel = part.get("panel")
    if panel:
        lines.append(f"Panel of {len(panel['members'])} ({', '.join(panel['members'])}): members disagreed on "
                     f"{panel['disagreements']['overall']} of {c['judged']} battles (overall), each rated a tie.")
        for member, bias in panel["position_bias"].items():
            b = bias["criteria"]["overall"]
            if b["decisive"]:
                lines.append(f"  {member}: first position won {b['first_position_wins']} of {b['decisive']} decisive "
                             f"answers ({b['first_position_share']:.0%}, p={b['p_value']:.3g}).")
    return "\n".join(lines)
