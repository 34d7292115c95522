"""Judge sanity anchors, re-asked in every judged run, with drift against the previous run.

Three SC questions whose answers are known without a human:

* ``unchanged``: the edited image is the original, so the edit was not done
  (editing success must be low, <= 3);
* ``blank``: the edited image is a flat grey field, so the edit was not done and the
  image was destroyed (both scores low, <= 3);
* ``done``: the edited image is the original in black and white and the instruction
  asks for exactly that (both scores high, >= 7).

They are built from the run's first admitted base image. A run that asks the judge anything
new asks the anchors afresh too (never from the cache, so a provider that silently changed its
model shows up) and stores the answers; an answer that moved by ``DRIFT_POINTS`` or more since
the previous check with the same judge and images is flagged. A rerun that takes every answer
from the ledger reuses the last check, with its drift, and makes no call.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from PIL import Image

from faceedit_bench.records import Outcome
from faceedit_bench.scoring.judge.prompts import SC_TEMPLATE
from faceedit_bench.scoring.judge.service import JudgeService
from faceedit_bench.storage.images import decode_rgb, encode_png

DRIFT_POINTS = 2  # on the judge's 0-10 scale


@dataclass(frozen=True)
class Anchor:
    name: str
    instruction: str
    expect: dict[str, tuple[int, int]]  # answer field -> inclusive range
    make: Any  # RGB array -> edited RGB array


ANCHORS = (
    Anchor("unchanged", "make the person's hair color crimson red", {"editing_success": (0, 3)}, lambda rgb: rgb),
    Anchor("blank", "put a beret on the person", {"editing_success": (0, 3), "overediting": (0, 3)},
           lambda rgb: np.full_like(rgb, 128)),
    Anchor("done", "convert the photo to black and white", {"editing_success": (7, 10), "overediting": (7, 10)},
           lambda rgb: np.repeat(np.asarray(Image.fromarray(rgb).convert("L"))[..., None], 3, axis=2)),
)


async def check_anchors(service: JudgeService, ledger: Any, store: Any, base_hash: str, *,
                        fresh: bool = True) -> dict[str, Any]:
    """Ask every anchor (afresh, or from the ledger when not ``fresh``); returns the report's
    ``judge_reliability`` section."""
    rgb = decode_rgb(store.get(base_hash), label="anchor base image")
    rows, drift = [], []
    for anchor in ANCHORS:
        edited = store.put(encode_png(np.ascontiguousarray(anchor.make(rgb))))
        answer = await service.ask(SC_TEMPLATE, [base_hash, edited], fresh=fresh, instruction=anchor.instruction)
        value = answer.value if answer.outcome is Outcome.OK else None
        passed = value is not None and all(lo <= value[f] <= hi for f, (lo, hi) in anchor.expect.items())
        rows.append({"name": anchor.name, "instruction": anchor.instruction,
                     "expect": {f: list(r) for f, r in anchor.expect.items()}, "outcome": answer.outcome.value,
                     "value": None if value is None else {f: value[f] for f in ("editing_success", "overediting")},
                     "passed": passed})
        if value is None:
            continue
        key = json.dumps([service.judge_fp, SC_TEMPLATE.hash, anchor.name, base_hash])
        if not answer.resumed:
            ledger.put_anchor(key, value)
        # The drift of the check whose answers these are, against the check before it: the same whether this
        # run asked them or reuses them (a re-report reports what the run reported).
        history = ledger.anchor_history(key, 2)
        if len(history) == 2 and history[0] == value:
            previous = history[1]
            for field in ("editing_success", "overediting"):
                delta = value[field] - previous[field]
                if abs(delta) >= DRIFT_POINTS:
                    drift.append({"name": anchor.name, "field": field, "previous": previous[field],
                                  "current": value[field], "delta": delta})
    return {"anchors": rows, "passed": sum(r["passed"] for r in rows),
            "failed": sum(not r["passed"] for r in rows), "drift": drift, "drift_points": DRIFT_POINTS,
            "asked_now": fresh,
            "checked_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()) if fresh else None}
