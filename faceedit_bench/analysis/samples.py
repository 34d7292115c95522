"""Input checks and seeding shared by the group statistics (group_tests, intersections, paired, rates).

Every statistic takes plain values: a sequence of finite floats, or a mapping from a group name
to such a sequence. An item without a value is the caller's to leave out and count as an
exclusion; it is never turned into a number here, so a NaN or None is a clear error.
"""

from __future__ import annotations

import inspect
import math
from collections.abc import Hashable, Mapping, Sequence
from typing import Any

import numpy as np

# the seed derivation of the WD tests: same base seed and test name -> same stream, whatever the order
from faceedit_bench.analysis.disparity import _seed_sequence


def as_sample(values: Any, what: str) -> np.ndarray:
    """A 1-D float array of finite values, or a ValueError naming ``what``."""
    try:
        x = np.asarray(values, dtype=float).reshape(-1)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: values must be numbers ({exc}); leave items without a value out "
                         f"and count them as exclusions") from None
    if not np.isfinite(x).all():
        raise ValueError(f"{what}: {int(np.count_nonzero(~np.isfinite(x)))} non-finite value(s); leave items "
                         f"without a value out of the test (they are counted as exclusions, not as numbers)")
    return x


def as_groups(groups: Mapping[str, Any], what: str) -> dict[str, np.ndarray]:
    """Group name -> sample, in the mapping's order; names must be non-empty strings."""
    if not isinstance(groups, Mapping):
        raise ValueError(f"{what}: groups must be a mapping from group name to values, got {type(groups).__name__}")
    out = {}
    for name, values in groups.items():
        if not isinstance(name, str) or not name:
            raise ValueError(f"{what}: group names must be non-empty strings, got {name!r}")
        out[name] = as_sample(values, f"{what}, group {name!r}")
    return out


def split_by_label(values: Sequence[float], labels: Sequence[str | None]) -> tuple[dict[str, list[float]], int]:
    """Values grouped by label (first-seen order) and the number of items whose label is None."""
    if len(values) != len(labels):
        raise ValueError(f"got {len(values)} values but {len(labels)} labels; give one label per value")
    groups: dict[str, list[float]] = {}
    unlabelled = 0
    for value, label in zip(values, labels):
        if label is None:
            unlabelled += 1
        else:
            groups.setdefault(str(label), []).append(value)
    return groups, unlabelled


def check_confidence(confidence: float, label: str = "confidence") -> None:
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0 < confidence < 1:
        raise ValueError(f"{label} must lie strictly between 0 and 1, got {confidence!r}")


def check_seed(seed: int) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")


def check_positive_int(value: int, label: str) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{label} must be a positive integer, got {value!r}")


def generator(seed: int, key: str) -> np.random.Generator:
    """The generator of one test: from the base seed and the test's key, as the WD tests derive theirs."""
    return np.random.default_rng(_seed_sequence(seed, key))


def rng_argument(function: Any, rng: np.random.Generator) -> dict[str, Any]:
    """scipy >= 1.15 takes ``rng=``, older versions ``random_state=``."""
    name = "rng" if "rng" in inspect.signature(function).parameters else "random_state"
    return {name: rng}


def number(value: Any) -> float | None:
    """A JSON-able float: None for NaN/inf (the caller gives the reason)."""
    value = float(value)
    return value if math.isfinite(value) else None


def all_identical(*samples: np.ndarray) -> bool:
    pooled = np.concatenate([np.asarray(s, float) for s in samples]) if samples else np.array([])
    return pooled.size > 0 and bool(np.all(pooled == pooled[0]))


def keyed(mapping: Mapping[Hashable, Any], what: str) -> dict[Hashable, float]:
    """Pair key -> finite float (for paired data keyed by (face, session, step))."""
    if not isinstance(mapping, Mapping):
        raise ValueError(f"{what}: give a mapping from pair key, e.g. (face, session, step), to value; "
                         f"got {type(mapping).__name__}")
    keys = list(mapping)
    values = as_sample([mapping[k] for k in keys], what)
    return dict(zip(keys, values.tolist()))


__all__ = ["as_sample", "as_groups", "split_by_label", "check_confidence", "check_seed", "check_positive_int",
           "generator", "rng_argument", "number", "all_identical", "keyed"]
