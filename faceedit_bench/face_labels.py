"""What a dataset check prints of its faces' demographic labels."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from typing import Any

#: Labels a dataset check summarises, when its faces carry them.
SUMMARY_LABELS = ("gender", "race", "age_bin", "age_group", "skin_tone", "category", "dimension")


def label_summary(labels: Iterable[Mapping[str, Any]], shown: int = 12) -> list[str]:
    """``gender: female 40, male 40`` per label the faces carry (what a dataset check prints), from each face's
    ``demographics``."""
    counts: dict[str, Counter[str]] = {key: Counter() for key in SUMMARY_LABELS}
    for face in labels:
        for key in SUMMARY_LABELS:
            if face.get(key) is not None:
                counts[key][str(face[key])] += 1
    return [f"{key}: " + ", ".join(f"{v} {n}" for v, n in sorted(c.items())[:shown])
            + (f" and {len(c) - shown} more" if len(c) > shown else "") for key, c in counts.items() if c]
