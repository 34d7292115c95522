"""The run report page's WinoBias rows (``templates/winobias.html.j2``): overall, then by the gender
the target occupation is stereotyped with."""

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
    return {"winobias": section, "winobias_rows": rows, "editor": editor}
