"""Settings of CREval: the report sections ``creval`` and ``creval_face`` read ``analysis.creval``: the question
sets ``creval`` answers (``questions``) and the failure policy (policy.py; docs/creval.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from faceedit_bench.api.sections import reject


@dataclass
class CrevalConf:
    """CREval's settings (policy.py, binding.py, docs/creval.md)."""

    # Frozen question sets the `creval` judge metric answers, as <loader>:<path> or a path (a .json file is a
    # question-set file, a folder CREval-Bench's layout); `faceedit-bench questions generate` writes them.
    # Not part of the run key as a path: the sets' content hashes are, through the bound metric's identity.
    questions: list[str] = field(default_factory=list, metadata={"run_key": False})
    # What an item counts as when its edit gave no image or an answer call failed: zero (CREval's rule, its
    # headline) or exclude (left out of every figure, and counted). The other rule's figures stand beside.
    on_failure: str = "exclude"

    def __post_init__(self) -> None:
        if self.on_failure not in ("zero", "exclude"):
            reject("analysis.creval.on_failure", self.on_failure,
                    "zero (CREval's rule: failures score 0) or exclude (failures are left out and counted)")
