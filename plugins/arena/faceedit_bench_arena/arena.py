"""An arena over stored runs: judge battles adaptively, then rate editors overall, per criterion, per group
and per step. Returns the ``arena`` part (schema: ``schemas/arena.schema.json``) and the battle log."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from contextlib import ExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from faceedit_bench.api import fingerprint
from faceedit_bench.api.judging import JudgeSession
from faceedit_bench_arena import adaptive
from faceedit_bench_arena.group_test import interaction_test, untestable
from faceedit_bench_arena.pairwise_judge import CRITERIA, TEMPLATE, ask_battle, combine, gather_all, position_bias
from faceedit_bench_arena.panel import DISAGREE, Member, panel_part, panel_verdict
from faceedit_bench_arena.ratings import TIES, Battles, rate, wins_by_identity
from faceedit_bench_arena.stored_runs import ArenaError, Input, Pool, build_pool

POLICIES = ("loss", "exclude")
PRIMARY = "overall"


@dataclass(frozen=True)
class ArenaSettings:
    budget_calls: int = 2000
    batch: int = 100
    warmup: int = 10
    target_width: float | None = None
    anchor: str | None = None
    policy: str = "loss"  # a one-sided battle (one editor refused or failed): "loss" or "exclude"
    confidence: float = 0.95
    n_resamples: int = 1000
    n_permutations: int = 999
    min_group_battles: int = 30
    stop_on_separation: bool = True  # False: only the target width, the budget or the pool stop it
    seed: int = 0
    ties: str = "half_win"  # how the ratings count ties: half wins, or Davidson's tie model (ratings.TIES)

    def rating_options(self) -> dict[str, Any]:
        """What :func:`~.ratings.rate` is given."""
        return dict(anchor=self.anchor, confidence=self.confidence, n_resamples=self.n_resamples, seed=self.seed,
                    ties=self.ties)

    def check(self, editors: Sequence[str]) -> None:
        if self.policy not in POLICIES:
            raise ArenaError(f"policy must be one of {POLICIES}, got {self.policy!r}")
        if self.ties not in TIES:
            raise ArenaError(f"ties must be one of {TIES}, got {self.ties!r}")
        if self.anchor is not None and self.anchor not in editors:
            raise ArenaError(f"anchor {self.anchor!r} is not one of the arena's editors {list(editors)}")
        if self.budget_calls < 2:
            raise ArenaError("budget_calls must allow one battle (two calls, one per order)")
        for name, value, low in (("batch", self.batch, 1), ("warmup", self.warmup, 0),
                                 ("n_resamples", self.n_resamples, 10), ("n_permutations", self.n_permutations, 19),
                                 ("min_group_battles", self.min_group_battles, 1)):
            if value < low:
                raise ArenaError(f"{name} must be at least {low}, got {value}")
        if not 0 < self.confidence < 1:
            raise ArenaError(f"confidence must lie between 0 and 1, got {self.confidence}")
        if self.target_width is not None and self.target_width <= 0:
            raise ArenaError(f"target_width must be positive (Elo points), got {self.target_width}")


def _battles(editors: Sequence[str], rows: list[dict], one_sided: bool, mask=None) -> Battles:
    use = [r for r in rows if (one_sided or not r["one_sided"]) and (mask is None or mask(r))]
    return Battles.of(editors, [r["x"] for r in use], [r["y"] for r in use], [r["score"] for r in use],
                      [r["identity"] for r in use])


def judge_battles(pool: Pool, members: Sequence[Member], settings: ArenaSettings
                  ) -> tuple[list[dict], dict, dict[str, list]]:
    """Battles judged adaptively (both orders each, by every member of a panel) in the runs' workspace; every
    answer lands in its ledger under its member's own identity."""
    workspace = pool.runs[0].path.resolve().parents[1]
    log: list[dict] = []
    answers: dict[str, list] = {m.label: [] for m in members}
    cands = {pair: [(pool.identity_index(i.face), i.key) for i in inputs] for pair, inputs in pool.to_judge.items()}
    by_key = {i.key: i for inputs in pool.to_judge.values() for i in inputs}
    panel = len(members) > 1
    # One event loop for every round: the judge's call limits (semaphores, rate limiter) belong to the loop
    # they were first used in.
    # asyncio.Runner, as asyncio.run: on the way out, calls still pending are cancelled and unwound and the
    # judges' clients are closed in the loop that made them, before it closes.
    runner = asyncio.Runner()
    with ExitStack() as stack:
        sessions = {m.label: stack.enter_context(JudgeSession.open(m.judge, m.name, workspace)) for m in members}

        def judge_fn(chosen):
            async def both():
                return await gather_all(*(ask_battle(s, *pool.images(by_key[c[1]], x, y),
                                                         pool.instruction(by_key[c[1]]), settings.seed)
                                              for (x, y), c in chosen for s in sessions.values()))
            asked = runner.run(both())
            scores = []
            for n, ((x, y), (ident, key)) in enumerate(chosen):
                inp: Input = by_key[key]
                entry = {"x": x, "y": y, "identity": ident, "input": key, "face": inp.face, "k": inp.k,
                         "labels": pool.labels(inp.face), "one_sided": False}
                per_member = {}
                for label, (first, second) in zip(sessions, asked[n * len(sessions):(n + 1) * len(sessions)]):
                    answers[label].extend((first, second))
                    per_member[label] = {
                        "verdicts": {c: combine(first, second, c) for c in CRITERIA},
                        "answers": [{"order": o, "outcome": a.outcome.value, "value": a.value}
                                    for o, a in (("x_first", first), ("y_first", second))]}
                if panel:
                    verdicts = {c: panel_verdict({m: v["verdicts"][c] for m, v in per_member.items()})
                                for c in CRITERIA}
                    entry["members"] = {m: {"verdicts": {c: asdict(x) for c, x in v["verdicts"].items()},
                                            "answers": v["answers"]} for m, v in per_member.items()}
                else:
                    (only,) = per_member.values()
                    verdicts, entry["answers"] = only["verdicts"], only["answers"]
                entry["verdicts"] = {c: asdict(v) for c, v in verdicts.items()}
                log.append(entry)
                scores.append(verdicts[PRIMARY].score)
            return scores

        # The budget counts calls: two per battle and member.
        plan = adaptive.Plan(budget_calls=settings.budget_calls // len(members), batch=settings.batch,
                             warmup=settings.warmup, target_width=settings.target_width,
                             confidence=settings.confidence, n_resamples=min(settings.n_resamples, 200),
                             seed=settings.seed, anchor=settings.anchor, stop_on_separation=settings.stop_on_separation)
        try:
            result = adaptive.run(pool.editors, cands, judge_fn, plan)
        finally:
            runner.close()
        identities = {label: s.identity for label, s in sessions.items()}
        sampling = {"stop": result.stop, "rounds": result.rounds, "calls_planned": result.calls_planned * len(members),
                    "calls_made": sum(s.calls_made for s in sessions.values()), "budget_calls": settings.budget_calls,
                    "batch": settings.batch, "target_width": settings.target_width, "seed": settings.seed,
                    "judge": ({"panel": identities} if panel else identities[members[0].label]),
                    "judge_fingerprint": (fingerprint({m: s.fingerprint for m, s in sessions.items()}) if panel
                                          else sessions[members[0].label].fingerprint)}
    return log, sampling, answers


def one_sided_entries(pool: Pool) -> list[dict]:
    """The battle log's entries for steps only one editor completed (no judge call; the score is the loss policy's)."""
    return [{"x": o["x"], "y": o["y"], "identity": pool.identity_index(o["face"]), "input": o["input"],
             "face": o["face"], "k": o["k"], "labels": pool.labels(o["face"]), "one_sided": True,
             "outcomes": o["outcomes"], "score": o["x_score"]} for o in pool.one_sided]


def _rows(log: list[dict], criterion: str) -> list[dict]:
    return [{"x": b["x"], "y": b["y"], "identity": b["identity"], "labels": b["labels"], "k": b["k"],
             "one_sided": b["one_sided"],
             "score": b["score"] if b["one_sided"] else b["verdicts"][criterion]["score"]}
            for b in log if b["one_sided"] or b["verdicts"][criterion]["score"] is not None]


def rate_arena(editors: Sequence[str], log: list[dict], settings: ArenaSettings) -> dict:
    """Every rating of the arena, from the battle log alone (so a submitted log can be re-rated)."""
    kw = settings.rating_options()
    with_loss = settings.policy == "loss"
    out: dict[str, Any] = {"criteria": {}}
    for criterion in CRITERIA:
        rows = _rows(log, criterion)
        out["criteria"][criterion] = {
            "ratings": rate(_battles(editors, rows, with_loss), **kw).to_json(),
            "ratings_other_policy": rate(_battles(editors, rows, not with_loss), **kw).to_json()}
    rows = _rows(log, PRIMARY)
    out["per_step"] = {str(k): rate(_battles(editors, rows, with_loss, lambda r, k=k: r["k"] == k), **kw).to_json()
                       for k in sorted({r["k"] for r in rows})}
    out["per_group"], out["group_tests"] = group_parts(editors, rows, with_loss, settings)
    return out


def group_parts(editors: Sequence[str], rows: list[dict], with_loss: bool, settings: ArenaSettings
                ) -> tuple[dict, dict]:
    """Ratings per value of each demographic label, and per label the group x editor test (the judge's battles
    and people's votes alike)."""
    kw = settings.rating_options()
    per_group, tests = {}, {}
    for key in sorted({key for r in rows for key in r["labels"]}):
        values = sorted({r["labels"].get(key) for r in rows} - {None})
        part = {}
        for value in values:
            sub = _battles(editors, rows, with_loss, lambda r, k=key, v=value: r["labels"].get(k) == v)
            part[value] = (rate(sub, **kw).to_json() if len(sub) >= settings.min_group_battles
                           else {"skipped": f"{len(sub)} battles, fewer than {settings.min_group_battles}"})
        per_group[key] = part
        tests[key] = _group_test(editors, rows, key, values, with_loss, settings)
    return per_group, adjusted(tests)


def adjusted(tests: dict[str, dict]) -> dict[str, dict]:
    """The family of one arena's group tests (one per label) corrected: Holm's p (``p_holm``, for a finding) and
    Benjamini–Hochberg's q (``q_bh``) beside each raw permutation p; untestable ones are not in the family."""
    from statsmodels.stats.multitest import multipletests

    tested = [k for k, t in tests.items() if "p_value" in t]
    if tested:
        raw = [tests[k]["p_value"] for k in tested]
        holm, bh = multipletests(raw, method="holm")[1], multipletests(raw, method="fdr_bh")[1]
        for k, h, q in zip(tested, holm, bh):
            tests[k] = {**tests[k], "p_holm": float(h), "q_bh": float(q), "family": len(tested)}
    return tests


def _group_test(editors, rows, key: str, values: list[str], with_loss: bool, settings: ArenaSettings) -> dict:
    """Group x editor interaction over identities that carry one value of ``key``; "not testable", with the
    reason, where the identities cannot give a p-value below :data:`~.group_test.ALPHA`."""
    battles = _battles(editors, rows, with_loss, lambda r: r["labels"].get(key) in values)
    label_of = {}
    for r in rows:
        label_of.setdefault(r["identity"], r["labels"].get(key))
    used = sorted(i for i, v in label_of.items() if v in values)
    per_group = {v: sum(label_of[i] == v for i in used) for v in values}
    reason = untestable(per_group)
    if reason:
        return {"not_testable": reason, "identities_per_group": per_group}
    per_identity = wins_by_identity(battles)[used]
    labels = np.array([values.index(label_of[i]) for i in used])
    return {**interaction_test(per_identity, labels, settings.n_permutations, settings.seed), "groups": values,
            "identities_per_group": per_group}


def run_arena(paths: Sequence[Path], judge: Any, judge_name: str, settings: ArenaSettings) -> tuple[dict, list[dict]]:
    """``judge``: a created judge registered as ``judge_name``, or the members of a panel (:func:`arena_judges`)."""
    members = list(judge) if isinstance(judge, (list, tuple)) else [Member(judge_name, judge_name, judge)]
    pool = build_pool(paths)
    settings.check(pool.editors)
    if settings.budget_calls < 2 * len(members):
        raise ArenaError(f"budget_calls must allow one battle: two calls per member of the panel, "
                         f"{2 * len(members)} at least")
    judged, sampling, answers = judge_battles(pool, members, settings)
    log = judged + one_sided_entries(pool)
    verdicts = [b["verdicts"] for b in judged]
    counts = {"judged": len(judged),
              "decided": sum(v[PRIMARY]["status"] == "decided" for v in verdicts),
              "incomplete": sum(v[PRIMARY]["status"] == "incomplete" for v in verdicts),
              "position_inconsistent": sum(v[PRIMARY]["position_inconsistent"] for v in verdicts),
              "one_sided": len(pool.one_sided), "both_failed": len(pool.both_failed),
              "available": sum(len(v) for v in pool.to_judge.values()),
              **({"members_disagree": sum(v[PRIMARY]["label"] == DISAGREE for v in verdicts)}
                 if len(members) > 1 else {})}
    part = {"editors": list(pool.editors),
            "runs": [{"editor": r.editor, "run_key": r.run_key, "folder": r.path.name} for r in pool.runs],
            "testset_hash": pool.runs[0].testset_hash, "template": TEMPLATE.describe(), "policy": settings.policy,
            "settings": asdict(settings), "sampling": sampling, "counts": counts,
            "position_bias": position_bias([a for m in answers.values() for a in m]),
            **rate_arena(pool.editors, log, settings)}
    if len(members) > 1:
        part["panel"] = panel_part(members, sampling["judge"]["panel"], log, answers)
    return part, log


def human_part(part: dict, log: list[dict], votes: Sequence, settings: ArenaSettings) -> dict:
    """People's ratings from ``votes`` beside the judge's, their per-group ratings and group x editor tests
    (as the judge's battles get), and how far judge and people agree (overall criterion)."""
    from faceedit_bench_arena.human_votes import agreement, identity_warning, ranking_agreement, votes_to_battles

    editors = part["editors"]
    battles = votes_to_battles(votes, editors)
    human = rate(battles, **settings.rating_options()).to_json()
    rows = [{"x": int(x), "y": int(y), "score": float(s), "identity": int(i), "labels": dict(v.labels),
             "one_sided": False} for v, x, y, s, i in zip(votes, battles.left, battles.right, battles.score,
                                                            battles.identity)]
    per_group, group_tests = group_parts(editors, rows, True, settings)
    judge = {(b["input"], editors[b["x"]], editors[b["y"]]): b["verdicts"][PRIMARY]["label"]
             for b in log if not b["one_sided"] and b["verdicts"][PRIMARY]["label"] is not None}
    judge_elo = {e["editor"]: e["rating"] for e in part["criteria"][PRIMARY]["ratings"]["editors"] if e["rated"]}
    human_elo = {e["editor"]: e["rating"] for e in human["editors"] if e["rated"]}
    keys = sorted({k for v in votes for k in v.labels})
    warning = identity_warning(votes)
    return {"votes": len(votes), "voters": len({v.voter for v in votes}), "ratings": human,
            "per_group": per_group, "group_tests": group_tests, "warnings": [warning] if warning else [],
            "agreement": agreement(judge, votes), "ranking": ranking_agreement(judge_elo, human_elo),
            "agreement_per_group": {k: agreement(judge, votes, group_key=k)["per_group"] for k in keys}}
