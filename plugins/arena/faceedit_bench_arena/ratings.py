"""Arena ratings from battles: Elo-scale Bradley–Terry ratings, identity-bootstrap CIs, win rates.

Pure and I/O-free. A battle is (left editor, right editor, left's score, identity): score 1 = left won,
0 = right won, 0.5 = tie (both good, both bad, or the two judge orders disagreeing). Identities are the
resampling unit of the bootstrap: all battles on faces of one person are kept or dropped together, because
they are not independent (a hard face is hard for every editor).

Elo scale: R = 1000 + (400 / ln 10) · (θ − θ_anchor), so 400 points are 10:1 odds. With an anchor (the
``identity`` baseline or a named editor) that editor is 1000 in every resample and its interval is the point
1000; without one the mean rating is 1000.

Ties: ``half_win`` (default) counts a tie as half a win for each side in the plain Bradley–Terry model;
``davidson`` fits Davidson's tie model (:mod:`.davidson`), with its tie parameter ν and its interval.

Only what was measured is ranked: an editor without a rated battle is *unrated* (no rating, interval or
rank; it stays in the fit through the prior alone, so the mean that is 1000 is that of the rated editors).
Equal ratings (to the reported 0.01) share a rank; each rank carries the interval of the ranks the bootstrap
resamples give (LMArena's rank uncertainty). Ratings from fewer than :data:`MIN_IDENTITIES` identities are
marked ``preliminary``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from faceedit_bench_arena import bradley_terry as bt
from faceedit_bench_arena import davidson

TIES = ("half_win", "davidson")

ELO_SCALE = 400.0 / np.log(10.0)
ELO_BASE = 1000.0
#: Below this many identities the ratings are marked preliminary: in arenas simulated with per-face effects as
#: in tests/test_ranks_what_it_measured.py (4 editors, 15 battles per identity, 200 arenas per size) the
#: identity-bootstrap 95% intervals covered the true ratings 49% of the time with 2 identities, 79% with 5,
#: 89% with 10, 92.5% with 20 and 94% with 40.
MIN_IDENTITIES = 20


@dataclass(frozen=True)
class Battles:
    """Battles as parallel arrays (indices into ``editors`` and into ``identities``)."""

    editors: tuple[str, ...]
    left: np.ndarray
    right: np.ndarray
    score: np.ndarray  # left's score: 1, 0.5 or 0
    identity: np.ndarray
    n_identities: int

    @classmethod
    def of(cls, editors: Sequence[str], left, right, score, identity) -> Battles:
        left, right = np.asarray(left, dtype=np.intp), np.asarray(right, dtype=np.intp)
        score, identity = np.asarray(score, dtype=float), np.asarray(identity, dtype=np.intp)
        if not (len(left) == len(right) == len(score) == len(identity)):
            raise ValueError("left, right, score and identity must have the same length")
        k = len(editors)
        if len(left) and (min(left.min(), right.min()) < 0 or max(left.max(), right.max()) >= k):
            raise ValueError(f"editor indices must lie in 0..{k - 1}")
        if np.any(left == right):
            raise ValueError("a battle needs two different editors")
        if not np.all(np.isin(score, (0.0, 0.5, 1.0))):
            raise ValueError("score must be 1 (left won), 0.5 (tie) or 0 (right won)")
        if len(identity) and identity.min() < 0:
            raise ValueError("identity indices must be >= 0")
        n_ids = int(identity.max()) + 1 if len(identity) else 0
        return cls(tuple(editors), left, right, score, identity, n_ids)

    def __len__(self) -> int:
        return len(self.left)

    def select(self, mask: np.ndarray) -> Battles:
        return Battles(self.editors, self.left[mask], self.right[mask], self.score[mask], self.identity[mask],
                       self.n_identities)


def wins_by_identity(battles: Battles) -> np.ndarray:
    """(identities, K, K): the half-win matrix of each identity's battles."""
    k = len(battles.editors)
    out = np.zeros((battles.n_identities, k, k))
    np.add.at(out, (battles.identity, battles.left, battles.right), battles.score)
    np.add.at(out, (battles.identity, battles.right, battles.left), 1.0 - battles.score)
    return out


def outcomes_by_identity(battles: Battles) -> tuple[np.ndarray, np.ndarray]:
    """(identities, K, K) decisive wins (i beat j) and ties (symmetric) of each identity's battles."""
    k = len(battles.editors)
    decisive, ties = np.zeros((battles.n_identities, k, k)), np.zeros((battles.n_identities, k, k))
    won, tied = battles.score == 1.0, battles.score == 0.5
    np.add.at(decisive, (battles.identity[won], battles.left[won], battles.right[won]), 1.0)
    lost = battles.score == 0.0
    np.add.at(decisive, (battles.identity[lost], battles.right[lost], battles.left[lost]), 1.0)
    np.add.at(ties, (battles.identity[tied], battles.left[tied], battles.right[tied]), 1.0)
    np.add.at(ties, (battles.identity[tied], battles.right[tied], battles.left[tied]), 1.0)
    return decisive, ties


def _davidson(battles: Battles, anchor: int | None, n_resamples: int, seed: int, prior: float, chunk: int = 500):
    """Point Elo and ν, and (n_resamples, K) Elo and (n_resamples,) ν from identity resamples."""
    decisive, ties = outcomes_by_identity(battles)
    played = (decisive + ties).sum((1, 2)) > 0  # the resampling units are the identities that played
    decisive, ties = decisive[played], ties[played]
    theta, nu = davidson.fit_many(decisive.sum(0)[None], ties.sum(0)[None], prior)
    rng = np.random.default_rng(seed)
    n_ids, k = decisive.shape[0], decisive.shape[-1]
    elo, nus = np.empty((n_resamples, k)), np.empty(n_resamples)
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        weights = rng.multinomial(n_ids, np.full(n_ids, 1.0 / n_ids), size=size).astype(float)
        t, nus[start:start + size] = davidson.fit_many(*davidson.split(decisive, ties, weights), prior)
        elo[start:start + size] = to_elo(t, anchor)
    return to_elo(theta[0], anchor), float(nu[0]), elo, nus


def to_elo(theta: np.ndarray, anchor: int | None) -> np.ndarray:
    ref = theta[..., anchor:anchor + 1] if anchor is not None else theta.mean(-1, keepdims=True)
    return ELO_BASE + ELO_SCALE * (theta - ref)


def bootstrap_elo(per_identity: np.ndarray, anchor: int | None, n_resamples: int, seed: int,
                  prior: float = bt.DEFAULT_PRIOR, chunk: int = 500) -> np.ndarray:
    """(n_resamples, K) Elo ratings, each from a resample of identities drawn with replacement."""
    rng = np.random.default_rng(seed)
    per_identity = per_identity[per_identity.sum((1, 2)) > 0]  # the resampling units: identities that played
    n_ids, k = per_identity.shape[0], per_identity.shape[-1]
    flat = per_identity.reshape(n_ids, k * k)
    out = np.empty((n_resamples, k))
    for start in range(0, n_resamples, chunk):
        size = min(chunk, n_resamples - start)
        weights = rng.multinomial(n_ids, np.full(n_ids, 1.0 / n_ids), size=size).astype(float)
        wins = (weights @ flat).reshape(size, k, k)
        out[start:start + size] = to_elo(bt.fit_many(wins, prior), anchor)
    return out


def competition_ranks(elo: np.ndarray, rated: np.ndarray) -> np.ndarray:
    """1 + the number of rated editors with a higher rating, over the last axis (equal ratings share a rank);
    0 for the unrated."""
    higher = (elo[..., None, :] > elo[..., :, None]) & rated
    return np.where(rated, 1 + higher.sum(-1), 0)


@dataclass(frozen=True)
class Ratings:
    editors: tuple[str, ...]
    elo: np.ndarray
    ci_low: np.ndarray
    ci_high: np.ndarray
    wins: np.ndarray  # half-win matrix
    anchor: str | None
    confidence: float
    n_resamples: int
    prior: float
    n_identities: int  # identities that played at least one battle
    ties: str = "half_win"
    nu: tuple[float, float, float] | None = None  # Davidson's tie parameter: estimate, CI low, CI high
    rank_low: np.ndarray | None = None  # the best and worst rank of the bootstrap interval
    rank_high: np.ndarray | None = None
    unrated_anchor: str | None = None  # the anchor asked for, unrated here: the rated editors' mean is 1000

    @property
    def battles(self) -> np.ndarray:
        """Battles per pair (symmetric)."""
        return self.wins + self.wins.T

    @property
    def rated(self) -> np.ndarray:
        """Editors with at least one rated battle; the others have no rating of their own (the prior alone)."""
        return self.battles.sum(1) > 0

    @property
    def preliminary(self) -> bool:
        return self.n_identities < MIN_IDENTITIES

    @property
    def win_rate(self) -> np.ndarray:
        """Observed share of battles i won against j (ties as half); NaN where never played."""
        n = self.battles
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(n > 0, self.wins / np.where(n > 0, n, 1.0), np.nan)

    @property
    def predicted(self) -> np.ndarray:
        """Predicted P(i beats j) from the ratings (Davidson: P(win) + P(tie)/2, as the observed win rate)."""
        if self.nu is not None:
            return davidson.win_probability(self.elo / ELO_SCALE, self.nu[0])
        return bt.win_probability(self.elo / ELO_SCALE)

    def order(self) -> list[int]:
        """Editors by rating, the unrated last."""
        return sorted(range(len(self.editors)), key=lambda i: (not self.rated[i], -self.elo[i]))

    def _editor(self, i: int, rank: int) -> dict:
        battles = int(round(self.battles[i].sum()))
        if not self.rated[i]:
            return {"editor": self.editors[i], "rated": False, "rating": None, "ci_low": None, "ci_high": None,
                    "rank": None, "rank_ci": None, "battles": battles,
                    "unrated": "no rated battle: all of its battles were missing, incomplete or left out"}
        rank_ci = ([int(self.rank_low[i]), int(self.rank_high[i])] if self.rank_low is not None else None)
        return {"editor": self.editors[i], "rated": True, "rating": round(float(self.elo[i]), 2),
                "ci_low": round(float(self.ci_low[i]), 2), "ci_high": round(float(self.ci_high[i]), 2),
                "rank": rank, "rank_ci": rank_ci, "battles": battles}

    def to_json(self) -> dict:
        """The part of report.json: editors by rating (unrated last), with the pairwise matrices in that order."""
        order = self.order()
        names = [self.editors[i] for i in order]
        rnd = lambda m: [[None if not np.isfinite(v) else round(float(v), 4) for v in row] for row in m]  # noqa: E731
        sub = lambda m: m[np.ix_(order, order)]  # noqa: E731
        shown = np.round(self.elo, 2)  # equal as reported: equal rank
        ranks = competition_ranks(shown, self.rated)
        return {
            "scale": {"kind": "elo", "base": ELO_BASE, "points_per_10x_odds": 400, "anchor": self.anchor,
                      "ties": self.ties, "prior_ties_per_pair": self.prior,
                      **({"anchor_unrated": self.unrated_anchor} if self.unrated_anchor else {}),
                      **({"tie_parameter": {"nu": round(self.nu[0], 4), "ci_low": round(self.nu[1], 4),
                                            "ci_high": round(self.nu[2], 4)}} if self.nu is not None else {})},
            "confidence": self.confidence, "n_resamples": self.n_resamples, "resampled": "identity",
            "n_identities": self.n_identities, "min_identities": MIN_IDENTITIES, "preliminary": self.preliminary,
            **({"caveat": f"ratings from {self.n_identities} identit{'y' if self.n_identities == 1 else 'ies'}, "
                          f"fewer than {MIN_IDENTITIES}: the intervals and ranks are wider than shown "
                          "(docs/arena.md, Ratings)"} if self.preliminary else {}),
            "editors": [self._editor(i, int(ranks[i])) for i in order],
            "unrated": [self.editors[i] for i in order if not self.rated[i]],
            "order": names,
            "battles_per_pair": [[int(round(v)) for v in row] for row in sub(self.battles)],
            "win_rate": rnd(sub(self.win_rate)),
            "predicted_win_probability": rnd(sub(self.predicted)),
        }


def _centre(elo: np.ndarray, rated: np.ndarray, anchor: int | None) -> np.ndarray:
    """Without an anchor, the mean of the *rated* editors is 1000 (an unrated one sits where the prior puts it)."""
    if anchor is not None or not rated.any():
        return elo
    return elo - elo[..., rated].mean(-1, keepdims=True) + ELO_BASE


def rate(battles: Battles, anchor: str | None = None, confidence: float = 0.95, n_resamples: int = 1000,
         seed: int = 0, prior: float = bt.DEFAULT_PRIOR, ties: str = "half_win") -> Ratings:
    """Ratings with percentile bootstrap CIs and rank intervals (identities resampled); ``ties``: one of
    :data:`TIES`."""
    if anchor is not None and anchor not in battles.editors:
        raise ValueError(f"anchor {anchor!r} is not one of the editors {list(battles.editors)}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1), got {confidence}")
    if ties not in TIES:
        raise ValueError(f"ties must be one of {TIES}, got {ties!r}")
    a = battles.editors.index(anchor) if anchor is not None else None
    per_identity = wins_by_identity(battles)
    wins = per_identity.sum(0)
    rated = (wins + wins.T).sum(1) > 0
    unrated_anchor = None
    if a is not None and not rated[a]:  # nothing to be measured against: the rated editors' mean is 1000
        unrated_anchor, anchor, a = anchor, None, None
    tail = (1.0 - confidence) / 2.0
    nu = None
    if not len(battles):  # nothing measured: every editor unrated
        elo = boot = np.full((1, len(battles.editors)), ELO_BASE)
        elo = elo[0]
    elif ties == "davidson":
        elo, nu_hat, boot, nus = _davidson(battles, a, n_resamples, seed, prior)
        nu = (nu_hat, *map(float, np.quantile(nus, [tail, 1.0 - tail])))
    else:
        elo = to_elo(bt.fit(wins, prior), a)
        boot = bootstrap_elo(per_identity, a, n_resamples, seed, prior)
    elo, boot = _centre(elo, rated, a), _centre(boot, rated, a)
    low, high = np.quantile(boot, [tail, 1.0 - tail], axis=0)
    boot_ranks = competition_ranks(np.round(boot, 2), rated)
    rank_low, rank_high = np.quantile(boot_ranks, [tail, 1.0 - tail], axis=0, method="inverted_cdf")
    n_ids = int(np.unique(battles.identity).size)
    return Ratings(battles.editors, elo, low, high, wins, anchor, confidence, n_resamples, prior, n_ids, ties, nu,
                   rank_low, rank_high, unrated_anchor)
