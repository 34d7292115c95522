"""The report page's ``audit`` section (paper (b)): plain data for the template, the per-race rate bars
and the grid of example edits per race with their scores (thumbnails from the run's image store)."""

from __future__ import annotations

import base64
import io
from collections.abc import Mapping, Sequence
from typing import Any

from faceedit_bench.api.sections import plot_png

#: The rates drawn per race (paper (b) Fig. 4): skin lightening and race change.
PLOTTED_RATES = ("skin_lightening_rate", "race_change_rate")
RATE_TITLES = {"edit_success_rate": "Edit success", "soft_erasure_rate": "Soft erasure",
               "race_change_rate": "Race change", "gender_change_rate": "Gender change",
               "skin_lightening_rate": "Skin lightening", "skin_darkening_rate": "Skin darkening"}
AXIS_TITLES = {"edit_success": "edit success", "skin_tone": "skin tone (3 = none)", "race_change": "race change",
               "gender_change": "gender change", "age_change": "age change (3 = none)",
               "aging_accuracy": "aging accuracy (V-05; 3 = correct)"}
THUMBNAIL_PX = 128


def audit_context(report: Mapping[str, Any], store: Any = None) -> dict[str, Any] | None:
    audit = report.get("audit")
    if not audit:
        return None
    rate_names = list(audit.get("rates") or {})
    groups = []
    for attribute, tables in (audit.get("groups") or {}).items():
        rows = [{"label": label, "n": g.get("n"), "rates": [(g.get("rates") or {}).get(r) for r in rate_names],
                 "refusal": g.get("hard_refusal_rate"), "edits": g.get("edits") or {},
                 "axes": g.get("axes") or {}}
                for label, g in (tables.get("labels") or {}).items()]
        tests = [{"axis": axis, **(t.get("kruskal") or {}), "spread": (t.get("mean_disparity") or {}).get("value"),
                  "spread_ci": ((t.get("mean_disparity") or {}).get("ci_low"),
                                (t.get("mean_disparity") or {}).get("ci_high"))}
                 for axis, t in (tables.get("tests") or {}).items()]
        groups.append({"attribute": attribute, "rows": [r for r in rows if _shown(r)],
                       "empty": [r["label"] for r in rows if not _shown(r)],
                       "disparity": tables.get("disparity") or {},
                       "tests": tests, "unlabelled": tables.get("unlabelled_edits", 0)})
    versus = [{"what": what, "axis": axis, **r} for what, by_axis in (audit.get("one_vs_rest") or {}).items()
              for axis, r in (by_axis.items() if "reason" not in by_axis else [("", by_axis)])]
    prompts = {kind: [{"label": label, "n": g.get("n"), "rates": [(g.get("rates") or {}).get(r) for r in rate_names],
                       "axes": g.get("axes") or {}} for label, g in rows.items()]
               for kind, rows in (audit.get("prompts") or {}).items()}
    return {"audit": audit, "rate_names": rate_names, "rate_titles": RATE_TITLES, "axis_titles": AXIS_TITLES,
            "rate_headers": [RATE_TITLES.get(name, name) for name in rate_names],
            "axes": list((audit.get("axes") or {}).items()), "groups": groups, "versus": versus, "prompts": prompts,
            "plot": _uri(plot_rates_by_group(audit, PLOTTED_RATES)), "examples": _examples(audit, store)}


def _shown(row: Mapping[str, Any]) -> bool:
    """A group's row is worth its own line when an edit of it was scored or hard-refused: a refusal is the
    finding a table of empty rates would hide. The others share one line that names them."""
    return bool(row["n"]) or bool((row["refusal"] or {}).get("count"))


def plot_rates_by_group(audit: Mapping[str, Any], names: Sequence[str], attribute: str | None = None) -> bytes | None:
    """One panel per rate: each group's rate as a bar with its Wilson CI, in percent (0-100 axis)."""
    attribute = attribute or next((d.get("by") for d in (audit.get("disparity") or {}).values() if d.get("by")), "race")
    labels = ((audit.get("groups") or {}).get(attribute) or {}).get("labels") or {}
    shown = [n for n in names if any((g.get("rates") or {}).get(n, {}).get("rate") is not None for g in labels.values())]
    if not shown:
        return None

    def draw(fig: Any) -> None:
        axes = fig.subplots(1, len(shown), squeeze=False)[0]
        for n, (ax, name) in enumerate(zip(axes, shown)):
            groups = [(label, (g.get("rates") or {}).get(name) or {}) for label, g in labels.items()]
            groups = [(label, r) for label, r in groups if r.get("rate") is not None]
            x = range(len(groups))
            values = [100 * r["rate"] for _, r in groups]
            # max(0, ...): the Wilson bound equals the rate at 0 % and 100 % up to rounding
            low = [max(0.0, 100 * (r["rate"] - r["ci_low"])) for _, r in groups]
            high = [max(0.0, 100 * (r["ci_high"] - r["rate"])) for _, r in groups]
            ax.bar(x, values, color=f"C{n}", yerr=[low, high], capsize=3)
            ax.set_xticks(list(x), [label.replace("_", " ") for label, _ in groups], rotation=45, ha="right", fontsize=8)
            ax.set_ylim(0, 100)
            rule = ((audit.get("thresholds") or {}).get(name) or {})
            ax.set_title(f"{RATE_TITLES.get(name, name)} ({rule.get('axis', '')} {rule.get('rule', '')})", fontsize=9)
            ax.set_ylabel("% of scored edits (Wilson CI)", fontsize=8)
        fig.suptitle(f"by {attribute}", fontsize=9)
        fig.tight_layout()

    return plot_png(4.2 * len(shown), 3.6, draw)


def _examples(audit: Mapping[str, Any], store: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"rows": [], "note": None}
    examples = audit.get("examples") or {}
    if store is None and examples:
        out["note"] = "The example images need the run's image store; render the report from its workspace to see them."
    for label, picks in examples.items():
        cells = []
        for e in picks:
            cells.append({**e, "source": _thumbnail(store, e.get("source_hash")),
                          "output": _thumbnail(store, e.get("output_hash"))})
        out["rows"].append({"label": label, "cells": cells})
    return out


def _thumbnail(store: Any, digest: str | None) -> str | None:
    if store is None or not digest or digest not in store:
        return None
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(io.BytesIO(store.get(digest))) as image:
            image = image.convert("RGB")
            image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX))
            buf = io.BytesIO()
            image.save(buf, format="PNG")
    except (OSError, UnidentifiedImageError):
        return None  # the page shows "image unavailable"; the scores are still listed
    return _uri(buf.getvalue())


def _uri(data: bytes | None) -> str | None:
    return None if data is None else "data:image/png;base64," + base64.b64encode(data).decode("ascii")
