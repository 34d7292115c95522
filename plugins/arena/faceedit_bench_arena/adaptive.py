"""Adaptive sampling: which battles to judge next, and when to stop.

Each round fits the ratings on the battles judged so far and lists the contrasts still in doubt: with a
target CI width, each editor whose interval is wider; without one, each adjacent pair (neighbours in rating)
whose intervals overlap. The round's battles then go, one by one, to the pair that most reduces the summed
variance of those contrasts under the Bradley–Terry Fisher information (a battle between i and j informs in
proportion to p(1 − p), most for close ratings; a greedy A-optimal design). ``strategy="uniform"`` spreads
each round evenly over all pairs instead: the reference adaptive sampling is measured against.

Stops, and says which: ``separated`` (every adjacent pair's CIs are disjoint), ``target_width`` (every CI is
at most the target wide), ``budget`` (the next round would pass the call budget) or ``exhausted`` (no pair
that needs battles has inputs left). The budget counts judge questions, two per battle (both orders),
whether the ledger already holds the answer or not: so a rerun with the same budget, seed and ledger picks
exactly the same battles (and asks nothing new).

Within a pair, inputs are taken in a fixed pseudo-random order derived from the seed and the input's key
(``candidate_order``): deterministic, independent of the order the pool was listed in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from faceedit_bench_arena.bradley_terry import win_probability
from faceedit_bench_arena.ratings import ELO_SCALE, Battles, Ratings, rate

CALLS_PER_BATTLE = 2
Pair = tuple[int, int]
#: A candidate battle input: (identity index, key of the input, e.g. "face/session/step").
Candidate = tuple[int, str]
#: Judges a list of (pair, candidate) and returns x's score per battle (1, 0.5, 0) or None (incomplete).
JudgeFn = Callable[[Sequence[tuple[Pair, Candidate]]], Sequence[float | None]]


@dataclass(frozen=True)
class Plan:
    budget_calls: int
    batch: int = 100  # battles per round
    warmup: int = 10  # battles per pair before the first fit
    target_width: float | None = None  # Elo points; None: stop only on separation or budget
    confidence: float = 0.95
    n_resamples: int = 200
    seed: int = 0
    strategy: str = "adaptive"  # or "uniform" (the reference: every pair alike)
    anchor: str | None = None
    stop_on_separation: bool = True  # False: only the target width, the budget or the pool stop it

    def __post_init__(self) -> None:
        if self.budget_calls < CALLS_PER_BATTLE or self.batch < 1 or self.warmup < 0:
            raise ValueError("budget_calls must allow one battle (2 calls); batch >= 1; warmup >= 0")
        if self.strategy not in ("adaptive", "uniform"):
            raise ValueError(f"strategy must be 'adaptive' or 'uniform', got {self.strategy!r}")


@dataclass
class Result:
    battles: Battles
    ratings: Ratings | None
    stop: str
    rounds: int
    calls_planned: int
    incomplete: int
    per_round: list[dict] = field(default_factory=list)


def candidate_order(pool: Mapping[Pair, Sequence[Candidate]], seed: int) -> dict[Pair, list[Candidate]]:
    def rank(pair: Pair, cand: Candidate) -> str:
        return hashlib.sha256(f"{seed}|{pair[0]}|{pair[1]}|{cand[1]}".encode()).hexdigest()

    return {pair: sorted(cands, key=lambda c: rank(pair, c)) for pair, cands in pool.items()}


def _overlap(r: Ratings, i: int, j: int) -> float:
    return float(min(r.ci_high[i], r.ci_high[j]) - max(r.ci_low[i], r.ci_low[j]))


def contrasts(r: Ratings, target_width: float | None) -> np.ndarray:
    """The rating contrasts still in doubt, as rows c (c·θ): with a target width, each editor whose CI is
    wider than it (its rating against the anchor, or against the mean); else each adjacent pair whose CIs
    overlap (θ_i − θ_j)."""
    k = len(r.editors)
    eye = np.eye(k)
    if target_width is not None:
        ref = eye[r.editors.index(r.anchor)] if r.anchor is not None else np.full(k, 1.0 / k)
        width = r.ci_high - r.ci_low
        rows = [eye[i] - ref for i in range(k) if width[i] > target_width and r.editors[i] != r.anchor]
    else:
        order = r.order()
        rows = [eye[i] - eye[j] for i, j in zip(order, order[1:]) if _overlap(r, i, j) >= 0]
    return np.array(rows).reshape(-1, k)


def design(r: Ratings, doubt: np.ndarray, n: int, room: Mapping[Pair, int]) -> dict[Pair, int]:
    """``n`` battles chosen greedily, one at a time, each on the pair that most reduces the summed variance
    of the contrasts in doubt (Fisher information of Bradley–Terry; rank-one updates of its pseudo-inverse).
    ``room``: how many more inputs each pair has."""
    k = len(r.editors)
    theta = (r.elo - r.elo.mean()) / ELO_SCALE
    p = win_probability(theta)
    weight = p * (1.0 - p)
    info = r.battles * weight
    info = np.diag(info.sum(1)) - info + np.diag(np.full(k, 1e-6))  # tiny ridge: never-played editors
    cov = np.linalg.pinv(info)
    pairs = [pq for pq in sorted(room) if room[pq] > 0]
    if not pairs or not len(doubt):
        return {}
    left = np.array([a for a, _ in pairs])
    right = np.array([b for _, b in pairs])
    w = weight[left, right]
    rest = np.array([room[pq] for pq in pairs])
    chosen: dict[Pair, int] = {}
    for _ in range(n):
        cd = cov[:, left] - cov[:, right]  # Σd for every pair, (K, P)
        dsd = cd[left, np.arange(len(pairs))] - cd[right, np.arange(len(pairs))]
        gain = w * ((doubt @ cd) ** 2).sum(0) / (1.0 + w * dsd)
        gain[rest <= 0] = -1.0
        best = int(np.argmax(gain))
        if gain[best] < 0:
            break
        v = cd[:, best]
        cov -= w[best] * np.outer(v, v) / (1.0 + w[best] * dsd[best])
        rest[best] -= 1
        chosen[pairs[best]] = chosen.get(pairs[best], 0) + 1
    return chosen


def allocate(weights: Mapping[Hashable, float], n: int) -> dict[Hashable, int]:
    """``n`` split in proportion to ``weights`` by largest remainders (ties broken by key order)."""
    keys = sorted(k for k, w in weights.items() if w > 0)
    if not keys:
        return {}
    w = np.array([weights[k] for k in keys], dtype=float)
    share = n * w / w.sum()
    base = np.floor(share).astype(int)
    rest = n - int(base.sum())
    for idx in sorted(range(len(keys)), key=lambda t: (-(share[t] - base[t]), t))[:rest]:
        base[idx] += 1
    return {k: int(b) for k, b in zip(keys, base) if b > 0}


def stop_reason(r: Ratings, target_width: float | None, separation: bool = True) -> str | None:
    order = r.order()
    if separation and all(_overlap(r, i, j) < 0 for i, j in zip(order, order[1:])):
        return "separated"
    width = (r.ci_high - r.ci_low)
    free = [i for i, e in enumerate(r.editors) if e != r.anchor]
    if target_width is not None and np.max(width[free]) <= target_width:
        return "target_width"
    return None


def run(editors: Sequence[str], pool: Mapping[Pair, Sequence[Candidate]], judge: JudgeFn, plan: Plan) -> Result:
    """Judge battles round by round until a stop condition holds."""
    k = len(editors)
    queue = candidate_order(pool, plan.seed)
    taken = {pair: 0 for pair in queue}
    rows: list[tuple[int, int, float, int]] = []
    calls, incomplete, rounds, log = 0, 0, 0, []
    all_pairs = [(i, j) for i in range(k) for j in range(i + 1, k)]

    def battles() -> Battles:
        cols = list(zip(*rows)) if rows else ([], [], [], [])
        return Battles.of(editors, *cols)

    def play(wanted: Mapping[Pair, int]) -> int:
        nonlocal calls, incomplete
        chosen = []
        for pair in sorted(wanted):
            left = queue.get(pair, [])
            n = min(wanted[pair], len(left) - taken.get(pair, 0))
            chosen += [(pair, c) for c in left[taken[pair]:taken[pair] + n]] if n > 0 else []
            taken[pair] = taken.get(pair, 0) + max(n, 0)
        if not chosen:
            return 0
        calls += CALLS_PER_BATTLE * len(chosen)
        for (pair, cand), score in zip(chosen, judge(chosen)):
            if score is None:
                incomplete += 1
            else:
                rows.append((pair[0], pair[1], float(score), cand[0]))
        return len(chosen)

    budget_battles = plan.budget_calls // CALLS_PER_BATTLE
    play(allocate({p: 1.0 for p in all_pairs}, min(plan.warmup * len(all_pairs), budget_battles)))
    ratings, stop = None, None
    while True:
        rounds += 1
        ratings = rate(battles(), anchor=plan.anchor, confidence=plan.confidence, n_resamples=plan.n_resamples,
                       seed=plan.seed + rounds)
        stop = stop_reason(ratings, plan.target_width, plan.stop_on_separation)
        log.append({"round": rounds, "battles": len(rows), "calls": calls,
                    "max_width": float(np.max(ratings.ci_high - ratings.ci_low))})
        if stop:
            break
        room = budget_battles - calls // CALLS_PER_BATTLE
        if room <= 0:
            stop = "budget"
            break
        if plan.strategy == "uniform":
            need = {p: 1.0 for p in all_pairs if taken[p] < len(queue.get(p, []))}
            wanted = allocate(need, min(plan.batch, room))
        else:
            doubt = contrasts(ratings, plan.target_width)
            if not len(doubt):  # separated, but told to go on (stop_on_separation=False): all neighbours
                order = ratings.order()
                doubt = np.array([np.eye(k)[i] - np.eye(k)[j] for i, j in zip(order, order[1:])])
            wanted = design(ratings, doubt, min(plan.batch, room),
                            {p: len(queue.get(p, [])) - taken.get(p, 0) for p in all_pairs})
        if not wanted or play(wanted) == 0:
            stop = "exhausted"
            break
    return Result(battles(), ratings, stop, rounds, calls, incomplete, log)
