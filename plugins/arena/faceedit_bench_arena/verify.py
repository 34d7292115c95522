"""Re-check an arena's battle log: its hash, and every rating recomputed from it (GenArena's submission check).

``arena.json`` records the log's sha256 and entry count and the settings the ratings were computed with; the
ratings are a deterministic function of the log and those settings (seeded bootstrap and permutations), so a
log that was edited, or ratings that do not follow from it, are found.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from faceedit_bench_arena.arena import ArenaSettings, rate_arena
from faceedit_bench_arena.stored_runs import ArenaError

LOG = "battles.jsonl"
RECOMPUTED = ("criteria", "per_step", "per_group", "group_tests")
#: Elo points (and p-values) may differ by rounding between machines' BLAS; anything larger is a mismatch.
TOLERANCE = 0.05


def log_record(text: str) -> dict:
    return {"file": LOG, "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
            "entries": len(text.splitlines())}


def _diff(a: Any, b: Any, where: str, out: list[str]) -> None:
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(a.keys() | b.keys()):
            if key not in a or key not in b:
                out.append(f"{where}.{key}: only in {'the submitted' if key in a else 'the recomputed'} arena")
            else:
                _diff(a[key], b[key], f"{where}.{key}", out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            _diff(x, y, f"{where}[{i}]", out)
    elif isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        if abs(a - b) > TOLERANCE:
            out.append(f"{where}: submitted {a}, recomputed {b}")
    elif a != b:
        out.append(f"{where}: submitted {a!r}, recomputed {b!r}")


def verify(folder: Path) -> list[str]:
    """The mismatches between ``folder/arena.json`` and what its battle log gives (empty: verified)."""
    folder = Path(folder)
    try:
        part = json.loads((folder / "arena.json").read_text(encoding="utf-8"))
        text = (folder / LOG).read_text(encoding="utf-8")
    except (OSError, json.JSONDecodeError) as exc:
        raise ArenaError(f"{folder}: needs arena.json and {LOG} as the arena command writes them ({exc})") from exc
    expected = part.get("battle_log", {})
    found = log_record(text)
    if expected.get("sha256") != found["sha256"] or expected.get("entries") != found["entries"]:
        return [f"{LOG}: sha256 {found['sha256'][:12]} with {found['entries']} entries, but arena.json records "
                f"{str(expected.get('sha256'))[:12]} with {expected.get('entries')}: the log is not the one rated"]
    log = [json.loads(line) for line in text.splitlines()]
    recomputed = rate_arena(part["editors"], log, ArenaSettings(**part["settings"]))
    problems: list[str] = []
    for key in RECOMPUTED:
        _diff(part.get(key), recomputed.get(key), key, problems)
    return problems
