"""The judge's answers kept in the workspace ledger, read only (``judgments``: the judge's fingerprint, the
template, the images asked about, the outcome and the parsed value). Reading under WAL never blocks a run that
writes, nor waits for it. The app's session pages and the human studies read them here."""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class JudgeRow:
    images: tuple[str, ...]
    outcome: str
    value: Any


def open_ledger(workspace: Path) -> sqlite3.Connection | None:
    """A read-only connection to the workspace ledger (None when it has none yet)."""
    path = Path(workspace) / "ledger.sqlite"
    if not path.is_file():
        return None
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=10, check_same_thread=False)
    db.execute("PRAGMA query_only = ON")
    return db


def judge_fingerprints(db: sqlite3.Connection, judge: Mapping[str, Any] | None) -> list[str]:
    """The ledger's fingerprints of the run's judge (its report's ``components.judge``): every recorded judge
    whose description holds the report's description (a panel: each of its members)."""
    if not judge:
        return []
    wanted = {"name": judge.get("name"), **(judge.get("description") or {})}
    found = []
    for fp, text in db.execute("SELECT fingerprint, description FROM components WHERE kind = 'judge'"):
        described = json.loads(text)
        if all(described.get(k) == v for k, v in wanted.items() if k in described):
            found.append(fp)
    return found


def template_answers(workspace: Path, judge: Mapping[str, Any] | None, template: str) -> dict[str, list[JudgeRow]]:
    """Hash of the last image asked about -> the answers of the run's judge (``judge``: the report's
    ``components.judge``) under ``template`` (``<name>@<version>``), oldest first."""
    out: dict[str, list[JudgeRow]] = defaultdict(list)
    db = open_ledger(workspace)
    if db is None:
        return {}
    with contextlib.closing(db):
        fps = judge_fingerprints(db, judge)
        if not fps:
            return {}
        rows = db.execute(f"SELECT image_hashes, outcome, value FROM judgments WHERE template = ? AND judge_fp IN "
                          f"({','.join('?' * len(fps))}) ORDER BY rowid", (template, *fps)).fetchall()
    for hashes, outcome, value in rows:
        images = tuple(json.loads(hashes))
        if images:
            out[images[-1]].append(JudgeRow(images, outcome, json.loads(value) if value else None))
    return dict(out)
