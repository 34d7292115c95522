"""Session metrics: one number per complete session, with how to read it.

A metric returns ``None`` when it cannot be computed for a session (the reason is
counted); it never substitutes a number.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from faceedit_bench.records import STEPS_PER_SESSION


@dataclass(frozen=True)
class SessionScores:
    """What scorers measured on one complete session. ``fss[k]`` is FSS_k, k = 0..4."""

    fss: tuple[float, ...]


@dataclass(frozen=True)
class SessionMetric:
    name: str
    higher_is_better: bool
    unit: str
    description: str
    compute: Callable[[SessionScores], float | None]
    requires: frozenset[str] = frozenset({"embedder"})


def drop_fss(scores: SessionScores) -> float | None:
    """Drop_FSS = (100/K) * sum_{k=1..K} (FSS_0 - FSS_k) / FSS_0 (METHODOLOGY §2.5).

    Undefined when FSS_0 <= 0 (no identity to lose in the base image).
    """
    fss0 = scores.fss[0]
    if fss0 <= 0:
        return None
    k_steps = STEPS_PER_SESSION
    return 100.0 / k_steps * sum((fss0 - scores.fss[k]) / fss0 for k in range(1, k_steps + 1))
