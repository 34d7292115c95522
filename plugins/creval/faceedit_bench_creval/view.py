"""A CREval section (``creval``, ``creval_face``) on report.html and in the tracked metrics (docs/creval.md):
IF, VC, VQ and overall with CIs per category and dimension, the Table 2 layout, the most-failed questions, and
example items shown with their images and every answered question."""

from __future__ import annotations

import base64
import io
from collections.abc import Callable, Mapping
from typing import Any

from PIL import Image

from faceedit_bench.api.sections import fmt

COLUMNS = ("IF", "VC", "VQ", "overall")
THUMBNAIL_PX = 256


def _thumbnail(store: Any, image_hash: str | None) -> str | None:
    if store is None or not image_hash:
        return None
    try:
        image = Image.open(io.BytesIO(store.get(image_hash))).convert("RGB")
    except Exception:  # a missing or unreadable image: the example is shown without it
        return None
    image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
    buf = io.BytesIO()
    image.save(buf, format="PNG")
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _group_rows(groups: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"label": label, "n": g.get("n"), "category": g.get("category"),
             "cells": [fmt(g.get(c), "ci") for c in COLUMNS]} for label, g in groups.items()]


def creval_view(name: str, section: Mapping[str, Any], store: Any = None) -> dict[str, Any]:
    """The page's view of one CREval section (``creval`` or ``creval_face``): its tables and examples."""
    examples = [{**e, "original_uri": _thumbnail(store, (e.get("images") or {}).get("original")),
                 "edited_uri": _thumbnail(store, (e.get("images") or {}).get("edited"))}
                for e in section.get("examples") or []]
    other = section.get("other_rule") or {}
    return {"name": name, "extension": section.get("extension"), "weights": section.get("weights"),
            "on_failure": section.get("on_failure"), "rule": section.get("rule"),
            "item_counts": section.get("items") or {}, "missing": section.get("missing_answers") or {},
            "out_of_choice": section.get("out_of_choice_answers") or {},
            "normalised": section.get("normalised_answers") or {},
            "overall": [fmt((section.get("overall") or {}).get(c), "ci") for c in COLUMNS],
            "overall_n": ((section.get("overall") or {}).get("overall") or {}).get("n"),
            "other": {"on_failure": other.get("on_failure"), "rule": other.get("rule"),
                      "n": ((other.get("overall") or {}).get("overall") or {}).get("n"),
                      "cells": [fmt((other.get("overall") or {}).get(c), "ci") for c in COLUMNS]},
            "categories": _group_rows(section.get("by_category") or {}),
            "dimensions": _group_rows(section.get("by_dimension") or {}),
            "table": section.get("table") or [], "most_failed": section.get("most_failed") or [],
            "examples": examples, "question_sets": section.get("question_sets") or []}


def creval_tracking(name: str, section: Mapping[str, Any], metric_key: Callable[..., str]) -> dict[str, float]:
    """Per category and dimension means of IF, VC, VQ and overall of the section ``name``, for an experiment
    tracker (``creval_category_stylization_if`` ...), the other failure rule's overall
    (``creval_other_rule_overall``) and the missing and out-of-choice answers per metric."""
    out: dict[str, float] = {}
    for level in ("by_category", "by_dimension"):
        for label, group in (section.get(level) or {}).items():
            for column in COLUMNS:
                mean = (group.get(column) or {}).get("mean")
                if isinstance(mean, (int, float)):
                    out[metric_key(name, level.removeprefix("by_"), label, column)] = float(mean)
    for counts in ("missing_answers", "out_of_choice_answers"):
        for metric, n in (section.get(counts) or {}).items():
            out[metric_key(name, counts, metric)] = float(n)
    for column in COLUMNS:
        mean = (((section.get("other_rule") or {}).get("overall") or {}).get(column) or {}).get("mean")
        if isinstance(mean, (int, float)):
            out[metric_key(name, "other_rule", column)] = float(mean)
    return out
