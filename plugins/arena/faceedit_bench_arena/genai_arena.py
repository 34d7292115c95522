"""GenAI-Arena's published layouts and its leaderboard recomputed from its battle log
(``faceedit-bench reproduce genai-arena``; docs/reproductions.md).

* The battle log (``clean_battle_<date>.json``): a JSON array of battles with ``model_a``, ``model_b``,
  ``winner`` (``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``), ``judge``, ``anony`` (true/false) and
  ``tstamp``. Every battle is read through the votes reader's checks (:func:`.human_votes.votes_from_rows`),
  each problem named by its line and field.
* Model names as the published tables name them (their ``clean_battle_data.py``): for the ``image_editing``
  task, a battle counts only when both models are ``imagenhub_<Name>_edition`` and is named ``<Name>``
  (``t2i_generation``: ``_generation``); names without the ``imagenhub_`` prefix (a dump already cleaned per
  task) are kept as they are. Battles of the other task are left out and counted.
* The leaderboard (``<task>_leaderboard.csv``): ``key``, ``Model``, ``Arena Elo rating (anony)``, ``Arena Elo
  rating (full)``, any further columns ignored. "anony" rates the anonymous battles, "full" all of them.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.api import FaceEditBenchError, csv_records, read_utf8
from faceedit_bench.api.statistics import Reproduction
from faceedit_bench_arena.human_votes import Vote, VotesError, votes_from_rows, votes_to_battles
from faceedit_bench_arena.published_elo import rate_l2_logistic
from faceedit_bench_arena.ratings import Ratings, rate

LOG_FIELDS = ("model_a", "model_b", "winner", "judge", "anony", "tstamp")
TASK_SUFFIX = {"image_editing": "_edition", "t2i_generation": "_generation"}


class PublishedFileError(FaceEditBenchError):
    """A published file (a battle log, a leaderboard, released answers) that cannot be read as it is: exit code 2,
    its line and field named."""
PREFIX = "imagenhub_"
SUBSETS = ("anony", "full")
LEADERBOARD_COLUMNS = {"anony": "Arena Elo rating (anony)", "full": "Arena Elo rating (full)"}
#: The published ratings are scikit-learn's L-BFGS optimum (tolerance 1e-4); ours is the exact optimum.
TOLERANCE = 0.1


@dataclass(frozen=True)
class BattleLog:
    votes: tuple[Vote, ...]  # in time order (the order of the published bootstrap's draws)
    anony: frozenset[int]  # lines of the anonymous battles
    other_task: int  # battles left out: a model of the other task


def json_records(path: Path) -> list[tuple[int, Any]]:
    """The elements of a JSON array, each with the line it starts on; a malformed or truncated file is a
    :class:`PublishedFileError` naming its line."""
    text = read_utf8(Path(path), what="battle log", error=PublishedFileError)
    decoder, pos, out = json.JSONDecoder(), len(text) - len(text.lstrip()), []
    line_of = lambda at: text.count("\n", 0, at) + 1  # noqa: E731
    if not text.startswith("[", pos):
        raise PublishedFileError(f"{path}: line {line_of(pos)}: expected a JSON array of battles ('[')")
    pos += 1
    while True:
        while pos < len(text) and text[pos] in " \t\r\n,":
            pos += 1
        if pos >= len(text):
            raise PublishedFileError(f"{path}: line {line_of(pos)}: the file ends inside the array (truncated?)")
        if text[pos] == "]":
            return out
        try:
            value, end = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            raise PublishedFileError(f"{path}: line {exc.lineno}: not JSON ({exc.msg}); truncated?") from None
        except RecursionError:
            raise PublishedFileError(f"{path}: line {line_of(pos)}: nested too deep; a battle is one flat object") \
                from None
        out.append((line_of(pos), value))
        pos = end


def published_name(name: str, task: str) -> str | None:
    """The name the published table gives ``name`` (module doc), None for a model of another task."""
    if not name.startswith(PREFIX):
        return name
    return name[len(PREFIX):-len(TASK_SUFFIX[task])] if name.endswith(TASK_SUFFIX[task]) else None


def read_battle_log(path: Path, task: str = "image_editing") -> BattleLog:
    rows, problems, other_task = [], [], 0
    for line, record in json_records(path):
        if not isinstance(record, dict):
            problems.append(f"line {line}: a battle must be a JSON object, found {type(record).__name__}")
            continue
        missing = [f for f in LOG_FIELDS if f not in record]
        if missing:
            problems.append(f"line {line}: missing field(s) {', '.join(missing)} "
                            f"(a battle has {', '.join(LOG_FIELDS)})")
            continue
        if not isinstance(record["anony"], bool):
            problems.append(f"line {line}, field 'anony': {record['anony']!r} is not true or false")
        if isinstance(record["tstamp"], bool) or not isinstance(record["tstamp"], int | float):
            problems.append(f"line {line}, field 'tstamp': {record['tstamp']!r} is not a number")
            continue
        names = [published_name(str(record[m]), task) for m in ("model_a", "model_b")]
        if None in names:
            other_task += 1
            continue
        rows.append((record["tstamp"], line, {"model_a": names[0], "model_b": names[1],
                                              "winner": str(record["winner"]), "judge": str(record["judge"]),
                                              "anony": record["anony"]}))
    if problems:
        raise PublishedFileError(f"{path}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:20]))
    rows.sort(key=lambda r: r[0])  # their analysis sorts by time before drawing its bootstrap
    try:
        votes = votes_from_rows(path, ((line, row) for _, line, row in rows), "winner", "judge")
    except VotesError as exc:
        raise PublishedFileError(str(exc)) from None
    return BattleLog(tuple(votes), frozenset(line for _, line, row in rows if row["anony"] is True), other_task)


def read_leaderboard(path: Path) -> dict[str, dict[str, tuple[float, str]]]:
    """subset -> model -> (rating, as printed)."""
    text = read_utf8(Path(path), what="leaderboard CSV", error=PublishedFileError)
    header, records = csv_records(text, str(path), what="leaderboard CSV", error=PublishedFileError)
    missing = [c for c in ("Model", *LEADERBOARD_COLUMNS.values()) if c not in header]
    if missing:
        raise PublishedFileError(f"{path}: line 1 (header): missing column(s) {missing}; found {header}")
    out: dict[str, dict[str, tuple[float, str]]] = {s: {} for s in SUBSETS}
    for line, row in records:
        model = (row.get("Model") or "").strip()
        if not model:
            raise PublishedFileError(f"{path}: line {line}, column 'Model': empty")
        for subset, column in LEADERBOARD_COLUMNS.items():
            text = (row.get(column) or "").strip()
            try:
                out[subset][model] = (float(text), text)
            except ValueError:
                raise PublishedFileError(f"{path}: line {line}, column {column!r}: {text!r} is not a number") from None
    if not records:
        raise PublishedFileError(f"{path}: no models (only a header)")
    return out


def recompute(log: BattleLog, method: str = "l2_logistic") -> dict[str, Ratings]:
    """The anony and full ratings through votes_to_battles and the arena's rating code: ``l2_logistic``
    (GenAI-Arena's method, :mod:`.published_elo`) or ``default`` (the project's :func:`.ratings.rate`)."""
    out = {}
    for subset in SUBSETS:
        votes = [v for v in log.votes if subset == "full" or v.line in log.anony]
        if not votes:
            raise PublishedFileError(f"no {subset} battles of this task in the log")
        battles = votes_to_battles(votes)
        out[subset] = rate_l2_logistic(battles) if method == "l2_logistic" else rate(battles)
    return out


def add_numbers(reproduction: Reproduction, ratings: dict[str, Ratings],
                leaderboard: dict[str, dict[str, tuple[float, str]]] | None) -> None:
    """Each subset's recomputed Elo beside the leaderboard's, and the leaderboard's models not rated here."""
    for subset in SUBSETS:
        r = ratings[subset]
        published = (leaderboard or {}).get(subset, {})
        for i in r.order():
            name = r.editors[i]
            value = published.get(name, (None, ""))[0]
            reproduction.add(f"{subset}/{name}", float(r.elo[i]), value, TOLERANCE if value is not None else None)
        for name in sorted(set(published) - set(r.editors)):
            reproduction.add(f"{subset}/{name}", None, published[name][0], TOLERANCE)
