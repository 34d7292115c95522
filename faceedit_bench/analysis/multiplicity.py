"""The run's family of disparity contrasts: which are testable, and the flag after correction.

A bias flag rests on the identity-clustered permutation p (identities, not sessions, are the unit
of replication), corrected over the family of the run's testable contrasts (metrics × contrasts):
Holm's step-down p (``p_holm``) decides the flag, Benjamini–Hochberg q-values (``q_value``) are
shown beside it. Both are ``statsmodels.stats.multitest.multipletests``' ("holm", "fdr_bh"), computed here
without its ``gc.collect()`` (a tenth of a second a call; a report has a family per run).

A contrast is *testable* when its clustered permutation can reach p < alpha at all. With k_a and
k_b identities the test has C(k_a + k_b, k_a) arrangements, and its p cannot go below one over that
(2 and 2 identities: 6 arrangements, p >= 1/6; 3 and 3: 20, p >= 0.05). A contrast that cannot
reach alpha is left out of the family (Tarone's argument: a hypothesis that can never be rejected
costs the others nothing) and reported as "not tested" with its reason. Bias is therefore one of
three outcomes, ``bias_status`` "yes", "no" or "not_tested", and ``bias`` True, False or None.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

YES, NO, NOT_TESTED = "yes", "no", "not_tested"
#: Identities a group needs before its contrast is tested at all: one person per group is that person.
MIN_IDENTITIES_PER_GROUP = 2
CORRECTION = "holm"
Q_METHOD = "fdr_bh"


def smallest_p(k_a: int, k_b: int, n_resamples: int) -> float:
    """The smallest p a cluster permutation of k_a and k_b identities can give: exact, 1 / C(k_a + k_b, k_a);
    sampled (more arrangements than resamples), 1 / (n_resamples + 1)."""
    arrangements = math.comb(k_a + k_b, k_a)
    return 1 / arrangements if arrangements <= n_resamples else 1 / (n_resamples + 1)


def untestable_reason(identities: Mapping[str, int | None], alpha: float, n_resamples: int) -> str | None:
    """Why a two-group contrast with these identities per group cannot be tested; None when it can."""
    if any(k is None for k in identities.values()):
        return "no identity labels: the identity-clustered test cannot run"
    counts = {g: int(k) for g, k in identities.items() if k is not None}
    listed = ", ".join(f"{g} {k}" for g, k in counts.items())
    if min(counts.values()) < MIN_IDENTITIES_PER_GROUP:
        return (f"identities per group: {listed}; a group needs at least {MIN_IDENTITIES_PER_GROUP} identities "
                f"(with one, the group cannot be told from the person)")
    k_a, k_b = counts.values()
    floor = smallest_p(k_a, k_b, n_resamples)
    if floor >= alpha:
        return (f"identities per group: {listed}; the clustered permutation has {math.comb(k_a + k_b, k_a)} "
                f"arrangements, so its p cannot go below {floor:.3g} (alpha {alpha:g}); "
                f"more identities are needed")
    return None


def correct_family(results: list[dict[str, Any]], *, alpha: float) -> list[dict[str, Any]]:
    """Holm's p and BH q-values over the testable contrasts, and each contrast's three-way flag (in place)."""
    family = [r for r in results if r.get("not_tested_reason") is None and r.get("p_clustered") is not None]
    if family:
        p = np.array([r["p_clustered"] for r in family], dtype=float)
        holm = holm_step_down(p, alpha)[1]
        for r, p_holm, q_value in zip(family, holm, benjamini_hochberg(p)):
            r.update(p_holm=float(p_holm), q_value=float(q_value))
    members = {id(r) for r in family}
    for r in results:
        r["family_size"] = len(family)
        if id(r) in members:
            r["bias"] = bool(r["wd"] > r["threshold"] and r["p_holm"] < alpha)
            r["bias_status"] = YES if r["bias"] else NO
        else:
            r["bias"], r["bias_status"] = None, NOT_TESTED
            r["not_tested_reason"] = r.get("not_tested_reason") or "no clustered p-value"
    return results


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    """Benjamini–Hochberg q-values in the order of ``p``: statsmodels' ``fdr_bh``, operation for operation,
    without the ``gc.collect()`` that costs its every call a tenth of a second."""
    order = np.argsort(p)
    m = p.size
    ranked = p[order] * m / np.arange(1, m + 1)
    q = np.empty(m)
    q[order] = np.minimum(np.minimum.accumulate(ranked[::-1])[::-1], 1)
    return q


def family_summary(results: Sequence[Mapping[str, Any]], *, alpha: float) -> dict[str, Any]:
    """The declared family and its outcome, for report.json's ``multiplicity``."""
    status = [r.get("bias_status") for r in results]
    return {
        "family": "two-group disparity contrasts of this run (metric x contrast)",
        "p": "identity-clustered permutation (whole identities move between the groups)",
        "correction": CORRECTION, "q_values": Q_METHOD, "alpha": alpha,
        "contrasts": len(results), "testable": status.count(YES) + status.count(NO),
        "flagged": status.count(YES), "not_tested": status.count(NOT_TESTED),
        "min_identities_per_group": MIN_IDENTITIES_PER_GROUP,
    }


def flag_count(results: Sequence[Mapping[str, Any]], *, noun: str = " contrasts") -> str:
    """"k flagged of m testable contrasts; n not testable"."""
    status = [bias_status(r) for r in results]
    text = f"{status.count(YES)} flagged of {status.count(YES) + status.count(NO)} testable{noun}"
    return text + (f"; {status.count(NOT_TESTED)} not testable" if NOT_TESTED in status else "")


#: Why a row of a report written before the three outcomes is not tested: its flag was the session-level one.
LEGACY = ("the report was written before identity-clustered, corrected flags; its flag was the paper's "
          "session-level rule. Re-report the run (faceedit-bench report) for the honest flag")


def bias_status(row: Mapping[str, Any]) -> str:
    """yes / no / not_tested of a disparity row; a row written before the three outcomes is not tested."""
    status = row.get("bias_status")
    return str(status) if status in (YES, NO, NOT_TESTED) else NOT_TESTED


def paper_flag(row: Mapping[str, Any]) -> bool | None:
    """The paper's session-level flag of a row (a legacy row's ``bias`` was that flag)."""
    if "paper_rule" in row:
        return (row.get("paper_rule") or {}).get("bias")
    return row.get("bias") if "bias_status" not in row else None


#: How each outcome reads in a table.
STATUS_TEXT = {YES: "BIAS", NO: "no", NOT_TESTED: "not tested"}


def not_tested_reason(row: Mapping[str, Any]) -> str:
    """Why a disparity row was not tested."""
    if "bias_status" not in row:
        return str(row.get("reason") or LEGACY)
    return str(row.get("not_tested_reason") or row.get("reason") or "no identity-clustered test was run")


def clustered_p(row: Mapping[str, Any]) -> float | None:
    """The identity-clustered p of a row (a legacy row has it only under ``clustered``)."""
    if row.get("p_clustered") is not None:
        return float(row["p_clustered"])
    p = (row.get("clustered") or {}).get("p_value")
    return None if p is None else float(p)


def holm_step_down(p: np.ndarray, alpha: float) -> tuple[np.ndarray, np.ndarray]:
    """(reject, adjusted p) in the order of ``p``: statsmodels' Holm, operation for operation, without its
    ``gc.collect()``."""
    order = np.argsort(p)
    ranked = p[order]
    factors = np.arange(len(p), 0, -1)
    accepted = np.nonzero(ranked > alpha / factors)[0]
    reject_ranked = np.arange(len(p)) < (accepted[0] if accepted.size else len(p))  # step-down: stop at the first
    adjusted_ranked = np.minimum(np.maximum.accumulate(ranked * factors), 1)
    reject, adjusted = np.empty_like(reject_ranked), np.empty_like(adjusted_ranked)
    reject[order], adjusted[order] = reject_ranked, adjusted_ranked
    return reject, adjusted
