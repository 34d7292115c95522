"""Contact sheets the run did not keep (run.max_contact_sheets was reached), drawn again from the image
hashes in steps.csv and the workspace's image store."""

from __future__ import annotations

import csv
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from faceedit_bench.report.contact_sheet import SheetStep, render_session
from faceedit_bench.storage.store import ImageStore

#: steps.csv does not say which reference photo a session was measured against
SHEET_REFERENCE_UNKNOWN = (None, "reference photo: not recorded in steps.csv (see the dataset)")


def render_missing_sheets(run_dir: Path, store: ImageStore,
                          wanted: Sequence[tuple[str, str]]) -> dict[tuple[str, str], bytes]:
    """Contact sheets drawn from the image hashes in steps.csv (streamed: it has one row per step of the run)."""
    steps_csv = run_dir / "steps.csv"
    if not steps_csv.is_file():
        return {}
    keys = set(wanted)
    steps: dict[tuple[str, str], list[dict[str, str]]] = {key: [] for key in keys}
    with open(steps_csv, newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            key = (row.get("face_id", ""), row.get("session_id", ""))
            if key in keys:
                steps[key].append(row)
    sheets = {}
    for (face_id, session_id), rows in steps.items():
        if not rows:
            continue
        rows.sort(key=lambda r: int(r.get("k") or 0))
        sheet_steps = []
        for r in rows:
            digest = r.get("image_hash") or r.get("output_hash") or ""
            data = store.get(digest) if digest and digest in store else None
            fss = float_or_none(r.get("fss"))
            note = "" if fss is not None else (r.get("score_outcome") or r.get("outcome") or "not scored")
            if fss is not None and r.get("score_outcome") == "no_face":
                note = "no face: FSS 0"
            sheet_steps.append(SheetStep(int(r.get("k") or 0), data, fss, note, r.get("instruction") or ""))
        excluded = rows[0].get("session_excluded")
        title = f"{face_id} | {session_id}" + (f" | excluded: {excluded}" if excluded else "")
        sheets[(face_id, session_id)] = render_session(title, SHEET_REFERENCE_UNKNOWN, sheet_steps)
    return sheets


def float_or_none(text: Any) -> float | None:
    try:
        value = float(text)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None
