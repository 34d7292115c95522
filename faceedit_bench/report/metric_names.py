"""How metrics are named on pages and plots (``drop_fss`` -> ``Drop_FSS``)."""

from __future__ import annotations

DISPLAY_NAMES = {"drop_fss": "Drop_FSS", "sc": "SC", "oer": "OER", "fss": "FSS"}


def display_name(metric: str) -> str:
    return DISPLAY_NAMES.get(metric, metric)
