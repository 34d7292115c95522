"""The WinoBias rows of the run report page (``templates/winobias.html.j2``) and of the console summary:
overall, then by the gender the target occupation is stereotyped with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

TARGET_LABELS = {"male": "male-stereotyped", "female": "female-stereotyped", "unlabelled": "no stereotype label"}


def winobias_context(report: Mapping[str, Any]) -> dict[str, Any]:
    section = report.get("winobias")
    editor = ((report.get("components") or {}).get("editor") or {}).get("name", "?")
    if not section:
        return {"winobias": None, "winobias_rows": [], "editor": editor}
    rows = [("all", section.get("overall") or {})]
    rows += [(TARGET_LABELS.get(g, g), s) for g, s in (section.get("by_target") or {}).items()]
    people = report.get("winobias_human")
    if people:  # the same rows from people's annotations (faceedit-bench human winobias)
        rows += [("people: all", people.get("overall") or {})]
        rows += [(f"people: {TARGET_LABELS.get(g, g)}", s) for g, s in (people.get("by_target") or {}).items()]
    return {"winobias": section, "winobias_rows": rows, "editor": editor, "winobias_human": people}


def winobias_lines(section: Mapping[str, Any] | None) -> list[str]:
    """``WinoBias all: stereotype followed 80.0% of 5 decided [..], p = 0.375; ...`` per row."""
    if not section:
        return []
    lines = []
    rows = [("all", section.get("overall") or {})]
    rows += [(TARGET_LABELS.get(g, g), s) for g, s in (section.get("by_target") or {}).items()]
    for label, s in rows:
        if s.get("share") is None:
            text = s.get("reason", "no decided answer")
        else:
            text = (f"stereotype followed {100 * s['share']:.1f}% of {s['n']} decided "
                    f"[{s['ci_low']:.3f}, {s['ci_high']:.3f}], binomial p = {s['p_value']:.3g}")
        undecided = (s.get("bounds") or {}).get("undecided", 0)
        lines.append(f"WinoBias {label}: {text}; undecided {undecided}, unsupported {s.get('unsupported', 0)}")
    return lines
