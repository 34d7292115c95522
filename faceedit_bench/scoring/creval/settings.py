"""Settings of CREval's scoring: the report sections ``creval`` and ``creval_face`` read ``analysis.creval``
(its failure policy, faceedit_bench/scoring/creval/policy.py; docs/creval.md)."""

from __future__ import annotations

from dataclasses import dataclass

from faceedit_bench.config import reject


@dataclass
class CrevalConf:
    """CREval's scoring (faceedit_bench/scoring/creval/policy.py, docs/creval.md)."""

    # What an item counts as when its edit gave no image or an answer call failed: zero (CREval's rule, its
    # headline) or exclude (left out of every figure, and counted). The other rule's figures stand beside.
    on_failure: str = "exclude"

    def __post_init__(self) -> None:
        if self.on_failure not in ("zero", "exclude"):
            reject("analysis.creval.on_failure", self.on_failure,
                    "zero (CREval's rule: failures score 0) or exclude (failures are left out and counted)")
