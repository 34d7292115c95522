"""The judge's own answers behind a session's steps, read from the workspace ledger (read-only, never a lock).

The ledger keeps every judge call (``judgments``: the judge's fingerprint, the prompt template and its hash,
the images asked about, the outcome, the parsed value, the raw answer text with its reasoning, the reason of a
failure). A step's row in ``steps.csv`` names the templates that judged it (``judged_by``: ``<template>
<hash[:12]>``); its answers are the rows of those templates about the step's edited image by the run's judge.
The prompt (with the instruction) is not kept, so the same images asked under two instructions (an editor
that returns its input unchanged) give several answers: all are shown, and the page says so.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

TEMPLATE = re.compile(r"([\w.@-]+) ([0-9a-f]{12})")
ATTEMPTS = re.compile(r"after (\d+) attempt")
#: Keys whose text is the judge's reasoning in the answers of the built-in templates and most rubrics.
REASONING_KEYS = ("reasoning", "reason", "rationale", "explanation", "thoughts")


@dataclass(frozen=True)
class Answer:
    template: str
    images: tuple[str, ...]
    outcome: str
    value: Any
    raw: str | None
    reason: str
    attempts: int | None

    @property
    def reasoning(self) -> str | None:
        """The judge's own words: the reasoning field of its parsed answer, else of its raw text."""
        for source in (self.value, _json(self.raw)):
            if isinstance(source, Mapping):
                found = next((str(source[k]) for k in REASONING_KEYS if isinstance(source.get(k), str)), None)
                if found:
                    return found
        return None

    @property
    def scores(self) -> dict[str, Any]:
        """The answer's values other than its reasoning."""
        if not isinstance(self.value, Mapping):
            return {}
        return {k: v for k, v in self.value.items() if k not in REASONING_KEYS}


def templates_of(judged_by: str | None) -> list[tuple[str, str]]:
    """(template name, hash prefix) of each template a step's ``judged_by`` names."""
    return TEMPLATE.findall(judged_by or "")


def _json(text: str | None) -> Any:
    if not text:
        return None
    try:
        return json.loads(text[text.find("{"):text.rfind("}") + 1]) if "{" in text else None
    except json.JSONDecodeError:
        return None


def open_ledger(workspace: Path) -> sqlite3.Connection | None:
    """A read-only connection to the workspace ledger (None when it has none yet). Reading under WAL never
    blocks a run that writes, nor waits for it."""
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


def step_answers(workspace: Path, judge: Mapping[str, Any] | None, steps: Sequence[Mapping[str, Any]]
                 ) -> dict[int, list[Answer]]:
    """k -> the judge's answers about step k's edited image, by the templates that judged it."""
    with contextlib.closing(open_ledger(workspace)) if (workspace / "ledger.sqlite").is_file() \
            else contextlib.nullcontext() as db:
        if db is None:
            return {}
        fps = judge_fingerprints(db, judge)
        wanted = {int(s.get("k") or 0): (str(s.get("image_hash") or ""), templates_of(s.get("judged_by")))
                  for s in steps}
        wanted = {k: w for k, w in wanted.items() if w[0] and w[1]}
        if not fps or not wanted:
            return {}
        images = sorted({h for h, _ in wanted.values()})
        # The last image of the JSON list '[..., "<64 hex>"]': one scan of the table (the ledger has no index by
        # image, and the app never writes to it), linear in the workspace's judge answers.
        rows = db.execute(
            f"SELECT template, template_hash, image_hashes, outcome, value, raw, reason FROM judgments "
            f"WHERE judge_fp IN ({','.join('?' * len(fps))}) AND substr(image_hashes, -66, 64) "
            f"IN ({','.join('?' * len(images))})", (*fps, *images)).fetchall()
    before = {int(s.get("k") or 0): {str(p.get("image_hash")) for p in steps if int(p.get("k") or 0) < int(s.get("k") or 0)}
              for s in steps}
    out: dict[int, list[Answer]] = {}
    for k, (image, templates) in sorted(wanted.items()):
        for template, digest, hashes, outcome, value, raw, reason in rows:
            asked = tuple(json.loads(hashes))
            # about this step's image, beside only the session's earlier images (not an anchor's made-up edit)
            if asked[-1:] == (image,) and set(asked[:-1]) <= before[k] and \
                    any(template == t and digest.startswith(h) for t, h in templates):
                out.setdefault(k, []).append(Answer(template, asked, outcome, _json(value) if value else None,
                                                    raw, reason, _attempts(reason)))
    return out


def _attempts(reason: str) -> int | None:
    """How many times the judge was asked, where the ledger says (an answer that never parsed names it)."""
    found = ATTEMPTS.search(reason or "")
    return int(found.group(1)) if found else None


def anchors(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The judge's sanity anchors of the run (checked at its start): name, instruction, expected, answer, passed."""
    return list(((report.get("judge_reliability") or {}).get("anchors")) or [])

