"""The arena's console lines: the leaderboard with intervals, and what was judged, left out and why."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def summary(part: Mapping[str, Any]) -> str:
    ratings = part["criteria"]["overall"]["ratings"]
    other = {e["editor"]: e for e in part["criteria"]["overall"]["ratings_other_policy"]["editors"]}
    c, s = part["counts"], part["sampling"]
    other_name = "exclude" if part["policy"] == "loss" else "loss"
    lines = [f"Arena (overall; {int(ratings['confidence'] * 100)}% CI, identities resampled; "
             f"one-sided battles: {part['policy']}, '{other_name}' beside it)"]
    for e in ratings["editors"]:
        o = other[e["editor"]]
        lines.append(f"  {e['rank']:>2}. {e['editor']:<24} {e['rating']:7.1f}  [{e['ci_low']:.1f}, {e['ci_high']:.1f}]"
                     f"  ({other_name}: {o['rating']:.1f})  {e['battles']} battles")
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
