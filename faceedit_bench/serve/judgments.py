"""The judge's own answers behind a session's steps, read from the workspace ledger (read-only, never a lock).

The ledger keeps every judge call (``judgments``: the judge's fingerprint, the prompt template and its hash,
the images asked about, the outcome, the parsed value, the raw answer text with its reasoning, the reason of a
failure). A step's row in ``steps.csv`` names the templates that judged it (``judged_by``: ``<template>
<hash[:12]>``); its answers are the rows of those templates about the step's edited image by the run's judge.
:class:`ImageIndex` finds those rows without reading the whole table. The prompt (with the instruction) is not
kept, so the same images asked under two instructions (an editor that returns its input unchanged) give several
answers: all are shown, and the page says so.
"""

from __future__ import annotations

import contextlib
import json
import re
import sqlite3
import threading
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.storage.judge_answers import judge_fingerprints, open_ledger

TEMPLATE = re.compile(r"([\w.@-]+) ([0-9a-f]{12})")
ATTEMPTS = re.compile(r"after (\d+) attempt")
#: Keys whose text is the judge's reasoning in the answers of the built-in templates and most judge metrics.
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


class ImageIndex:
    """Where the ledger keeps the answers about an image: the rowid of every ``judgments`` row by the first 16 hex
    digits of the last image it asked about, as two arrays (16 bytes an answer). The ledger has no index by image,
    and the app never writes to the workspace, so this is the app's own. It is brought up to date on each use by
    reading only the rows added since (rowids above the last one seen): a session page costs the same in a
    workspace of 1,000 sessions or 100,000. Rows replaced since are found again under their new rowid, and a
    stale rowid reads nothing."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._reset()

    def _reset(self) -> None:
        import numpy as np

        self._keys = np.empty(0, dtype=np.uint64)
        self._rowids = np.empty(0, dtype=np.int64)
        self._last = 0

    def rowids(self, db: sqlite3.Connection, images: Iterable[str]) -> list[int]:
        import numpy as np

        with self._lock:
            if (db.execute("SELECT max(rowid) FROM judgments").fetchone()[0] or 0) < self._last:
                self._reset()  # a ledger made anew under the same name: index it from the start
            new = db.execute("SELECT rowid, substr(image_hashes, -66, 16) FROM judgments WHERE rowid > ? "
                             "ORDER BY rowid", (self._last,)).fetchall()
            if new:
                keys = np.array([_key(h) for _, h in new], dtype=np.uint64)
                self._keys = np.concatenate([self._keys, keys])
                self._rowids = np.concatenate([self._rowids, np.array([r for r, _ in new], dtype=np.int64)])
                self._last = new[-1][0]
            wanted = np.array([_key(h[:16]) for h in images], dtype=np.uint64)
            return [int(r) for r in self._rowids[np.isin(self._keys, wanted)]]


def _key(hex16: str) -> int:
    try:
        return int(hex16, 16)
    except ValueError:  # not a hash (a row of another shape): never asked for
        return 0


def step_answers(workspace: Path, judge: Mapping[str, Any] | None, steps: Sequence[Mapping[str, Any]],
                 index: ImageIndex) -> dict[int, list[Answer]]:
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
        rowids = index.rowids(db, {h for h, _ in wanted.values()})
        rows = db.execute(
            f"SELECT template, template_hash, image_hashes, outcome, value, raw, reason FROM judgments "
            f"WHERE rowid IN ({','.join('?' * len(rowids))}) AND judge_fp IN ({','.join('?' * len(fps))})",
            (*rowids, *fps)).fetchall() if rowids else []
    order = [(int(s.get("k") or 0), str(s.get("image_hash"))) for s in steps]
    before = {k: {h for j, h in order if j < k} for k, _ in order}
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


ARENA = "arena-pairwise@1"
#: An arena answer's "A"/"B" read from the step's side: whose output the judge preferred.
SIDES = {True: {"A": "this run's", "B": "the other's"}, False: {"A": "the other's", "B": "this run's"}}


@dataclass(frozen=True)
class Battle:
    """One arena battle about a step's output against another editor's, both orders (plugins/arena)."""

    other: str  # the other output's image hash
    orders: tuple[tuple[str, str, str, tuple[tuple[str, str, str], ...]], ...]  # (order, outcome, reason, verdicts)


def step_battles(workspace: Path, steps: Sequence[Mapping[str, Any]], index: ImageIndex) -> dict[int, list[Battle]]:
    """k -> the arena's battles of step k's edited image: each with both orders' verdicts per criterion (label
    read as whose output won, and the judge's explanation). The arena's judge is its own, not the run's."""
    images = {int(s.get("k") or 0): str(s.get("image_hash") or "") for s in steps if int(s.get("k") or 0)}
    images = {k: h for k, h in images.items() if h}
    if not images or not (workspace / "ledger.sqlite").is_file():
        return {}
    with contextlib.closing(open_ledger(workspace)) as db:
        def about(last: set[str]) -> list[tuple[tuple[str, ...], str, Any, str]]:
            rowids = index.rowids(db, last)
            found = db.execute(f"SELECT image_hashes, outcome, value, reason FROM judgments WHERE template = ? "
                               f"AND rowid IN ({','.join('?' * len(rowids))})", (ARENA, *rowids)).fetchall() \
                if rowids else []
            return [(tuple(json.loads(h)), o, _json(v) if v else None, r) for h, o, v, r in found]

        mine_last = [a for a in about(set(images.values())) if len(a[0]) == 3]
        others = about({a[0][1] for a in mine_last})
    out: dict[int, list[Battle]] = {}
    for k, image in sorted(images.items()):
        for (source, other, _), *second in (a for a in mine_last if a[0][2] == image):
            orders = [("the other first", *second)]
            orders += [("this run first", o, v, r) for asked, o, v, r in others if asked == (source, image, other)]
            out.setdefault(k, []).append(Battle(other, tuple(
                (order, outcome, reason, _verdicts(value, this_first=order == "this run first"))
                for order, outcome, value, reason in sorted(orders, key=lambda o: o[0] != "this run first"))))
    return out


def _verdicts(value: Any, *, this_first: bool) -> tuple[tuple[str, str, str], ...]:
    if not isinstance(value, Mapping):
        return ()
    return tuple((criterion, SIDES[this_first].get(str(v.get("label")), str(v.get("label"))),
                  str(v.get("explanation") or "")) for criterion, v in value.items() if isinstance(v, Mapping))


def _attempts(reason: str) -> int | None:
    """How many times the judge was asked, where the ledger says (an answer that never parsed names it)."""
    found = ATTEMPTS.search(reason or "")
    return int(found.group(1)) if found else None


def anchors(report: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The judge's sanity anchors of the run (checked at its start): name, instruction, expected, answer, passed."""
    return list(((report.get("judge_reliability") or {}).get("anchors")) or [])

