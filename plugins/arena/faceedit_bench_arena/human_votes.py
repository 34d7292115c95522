"""People's pairwise votes: import, ratings from them, and judge–human agreement.

Votes CSV (the layout LMArena's public battle dumps and GenAI-Bench use): one row per vote with

* ``model_a``, ``model_b``: the two editors, as shown (left, right);
* the vote, in one of two columns: ``winner`` (LMArena: ``model_a``, ``model_b``, ``tie``, ``tie (bothbad)``)
  or ``vote`` (``A``, ``B``, ``both_good``, ``both_bad``, or GenAI-Bench's ``leftvote``, ``rightvote``,
  ``tievote``, ``bothbad_vote``);
* the voter: ``judge`` (LMArena's name for it) or ``voter_id``;
* optional: ``input_id`` (the face/session/step both outputs answer, to match judge battles), ``identity``
  (the person: the bootstrap's resampling unit; without it each vote is its own unit) and any demographic
  label column (``gender``, ``skin_tone`` ...).

Every problem is reported with its line and column, all at once, before anything is computed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from scipy.stats import kendalltau

from faceedit_bench.api import FaceEditBenchError, csv_records, parse_json, read_utf8
from faceedit_bench.api.sections import FinishedRun
from faceedit_bench_arena.ratings import Battles

#: Every accepted spelling of the four votes -> our label.
VOTE_SPELLINGS = {
    "A": "A", "B": "B", "both_good": "both_good", "both_bad": "both_bad",
    "model_a": "A", "model_b": "B", "tie": "both_good", "tie (bothbad)": "both_bad",
    "leftvote": "A", "rightvote": "B", "tievote": "both_good", "bothbad_vote": "both_bad",
}
SCORE = {"A": 1.0, "B": 0.0, "both_good": 0.5, "both_bad": 0.5}


class VotesError(FaceEditBenchError):
    """A votes file that cannot be read as it is (exit code 2; every problem with its line and column)."""


@dataclass(frozen=True)
class Vote:
    line: int
    model_a: str
    model_b: str
    label: str  # A, B, both_good, both_bad
    voter: str
    input_id: str = ""
    identity: str = ""
    labels: Mapping[str, str] = field(default_factory=dict)


def _column(header: Sequence[str], *names: str) -> str | None:
    return next((n for n in names if n in header), None)


def read_votes(path: Path) -> list[Vote]:
    path = Path(path)
    text = read_utf8(path, what="votes CSV", error=VotesError)
    header, records = csv_records(text, str(path), what="votes CSV", error=VotesError)
    vote_col, voter_col = _column(header, "vote", "winner"), _column(header, "voter_id", "judge")
    missing = [n for n, c in (("model_a", "model_a" in header), ("model_b", "model_b" in header),
                              ("vote or winner", vote_col), ("voter_id or judge", voter_col)) if not c]
    if missing:
        raise VotesError(f"{path}: line 1 (header): missing column(s) {', '.join(missing)}; found {header}. "
                         "Expected model_a, model_b, vote (or winner) and voter_id (or judge).")
    return votes_from_rows(path, records, vote_col, voter_col)


def votes_from_rows(path: Path, rows: Iterable[tuple[int, Mapping[str, str]]], vote_col: str,
                    voter_col: str) -> list[Vote]:
    """Votes from (line, row) pairs of any layout with the votes CSV's fields, each checked; every problem is
    reported with its line and column, all at once."""
    votes, problems = [], []
    for line, row in rows:
        a, b = (row.get("model_a") or "").strip(), (row.get("model_b") or "").strip()
        raw = (row.get(vote_col) or "").strip()
        voter = (row.get(voter_col) or "").strip()
        for col, value in (("model_a", a), ("model_b", b), (voter_col, voter)):
            if not value:
                problems.append(f"line {line}, column '{col}': empty")
        if a and a == b:
            problems.append(f"line {line}, columns 'model_a'/'model_b': the same editor {a!r} on both sides")
        if raw not in VOTE_SPELLINGS:
            problems.append(f"line {line}, column '{vote_col}': {raw!r} is not a vote; use one of "
                            f"{sorted(VOTE_SPELLINGS)}")
            continue
        votes.append(Vote(line, a, b, VOTE_SPELLINGS[raw], voter, (row.get("input_id") or "").strip(),
                          (row.get("identity") or "").strip(),
                          {k: row[k].strip() for k in FinishedRun.DEMOGRAPHIC_KEYS if (row.get(k) or "").strip()}))
    if problems:
        shown = "\n  ".join(problems[:20])
        more = f"\n  ... and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise VotesError(f"{path}: {len(problems)} problem(s); nothing was imported:\n  {shown}{more}")
    if not votes:
        raise VotesError(f"{path}: no votes (only a header)")
    return votes


def votes_to_battles(votes: Sequence[Vote], editors: Sequence[str] | None = None) -> Battles:
    """The votes as battles (ties as half wins), resampled by ``identity`` where given, else vote by vote."""
    names = list(editors) if editors is not None else sorted({v.model_a for v in votes} | {v.model_b for v in votes})
    unknown = sorted(({v.model_a for v in votes} | {v.model_b for v in votes}) - set(names))
    if unknown:
        raise VotesError(f"the votes name editor(s) {unknown} that are not in the arena {names}")
    units: dict[str, int] = {}
    ident = [units.setdefault(v.identity or f"vote:{v.line}", len(units)) for v in votes]
    return Battles.of(names, [names.index(v.model_a) for v in votes], [names.index(v.model_b) for v in votes],
                      [SCORE[v.label] for v in votes], ident)


#: Measured in the package's tests (test_ranks_what_it_measured.py): simulated arenas with per-face effects,
#: 4 editors, 20 identities x 15 votes; how often the 95% intervals covered the true ratings.
COVERAGE_BY_VOTE, COVERAGE_BY_IDENTITY = "84%", "95%"


def identity_warning(votes: Sequence[Vote]) -> str | None:
    """What votes without an ``identity`` cost, in words; None when every vote names its identity."""
    missing = sum(1 for v in votes if not v.identity)
    if not missing:
        return None
    which = ("the votes have no identity column" if missing == len(votes)
             else f"{missing} of {len(votes)} votes have no identity")
    return (f"{which}: each such vote is resampled (and permuted in the group tests) on its own, as if no two votes "
            "were about the same person. Votes on one face are correlated, so the intervals come out too narrow and "
            f"the group tests too eager: in simulated arenas with per-face effects, 95% intervals covered the truth "
            f"{COVERAGE_BY_VOTE} of the time instead of {COVERAGE_BY_IDENTITY} with identities. Add an 'identity' "
            "column naming the person each vote's face shows.")


def _as_pair_outcome(label: str, first_is_x: bool) -> str:
    if label in ("A", "B"):
        return "x" if (label == "A") == first_is_x else "y"
    return label


def agreement(judge: Mapping[tuple[str, str, str], str], votes: Sequence[Vote],
              group_key: str | None = None) -> dict:
    """Pairwise accuracy with ties (GenAI-Bench's rule: the four labels must match exactly) of the judge's
    verdicts against people's votes on the same (input, editor, editor). ``judge`` maps
    (input_id, x, y) -> "x", "y", "both_good", "both_bad" or "inconsistent" (which matches no vote)."""
    matched, correct, unmatched = 0, 0, 0
    by_group: dict[str, list[int]] = {}
    for v in votes:
        key = next(((v.input_id, x, y) for x, y in ((v.model_a, v.model_b), (v.model_b, v.model_a))
                    if (v.input_id, x, y) in judge), None)
        if key is None:
            unmatched += 1
            continue
        human = _as_pair_outcome(v.label, key[1] == v.model_a)
        hit = int(judge[key] == human)
        matched, correct = matched + 1, correct + hit
        if group_key:
            by_group.setdefault(v.labels.get(group_key, "(none)"), [0, 0])
            by_group[v.labels.get(group_key, "(none)")][0] += 1
            by_group[v.labels.get(group_key, "(none)")][1] += hit
    out = {"matched": matched, "unmatched_votes": unmatched,
           "accuracy_with_ties": correct / matched if matched else None, "random_baseline": 0.25}
    if group_key:
        out["per_group"] = {g: {"matched": n, "accuracy_with_ties": c / n} for g, (n, c) in sorted(by_group.items())}
    return out


def ranking_agreement(judge_elo: Mapping[str, float], human_elo: Mapping[str, float]) -> dict:
    """Kendall τ between the judge's and the people's ratings of the editors both rate."""
    common = sorted(judge_elo.keys() & human_elo.keys())
    if len(common) < 3:
        return {"editors": len(common), "kendall_tau": None, "p_value": None}
    res = kendalltau([judge_elo[e] for e in common], [human_elo[e] for e in common])
    return {"editors": len(common), "kendall_tau": float(res.statistic), "p_value": float(res.pvalue)}


#: GenAI-Bench's published per-judge results (``results/image_edition/<judge>/pairwise.jsonl``): the judge's
#: parsed vote and the human vote per item.
GENAI_BENCH_MODEL_VOTES = {"[[A>B]]": "A", "[[A>>B]]": "A", "[[B>A]]": "B", "[[B>>A]]": "B",
                           "[[A=B=Good]]": "both_good", "[[A=B=Bad]]": "both_bad", "[[A=B]]": "tie"}


def genai_bench_accuracy(path: Path) -> dict:
    """Judge–human accuracy with ties from a GenAI-Bench results file, by GenAI-Bench's rule (its
    ``parse_response``): ``[[A=B]]`` matches either tie; an unparsed judge answer counts as wrong and is counted."""
    items, problems = [], []
    text = read_utf8(Path(path), what="GenAI-Bench results file", error=VotesError)
    for line, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip():
            continue
        row = parse_json(raw, f"{path}, line {line}", what="GenAI-Bench results line", error=VotesError)
        try:
            human = VOTE_SPELLINGS[row["human_vote"]]
            model = row.get("model_vote")
        except (KeyError, TypeError) as exc:
            problems.append(f"line {line}: {type(exc).__name__}: {exc}")
            continue
        items.append((row.get("idx", line - 1), GENAI_BENCH_MODEL_VOTES.get(model) if model else None, human))
    if problems:
        raise VotesError(f"{path}: {len(problems)} problem(s):\n  " + "\n  ".join(problems[:20]))
    right = sum(1 for _, m, h in items if m == h or (m == "tie" and h in ("both_good", "both_bad")))
    return {"items": len(items), "unparsed": sum(1 for _, m, _ in items if m is None),
            "accuracy_with_ties": right / len(items) if items else None, "random_baseline": 0.25}
