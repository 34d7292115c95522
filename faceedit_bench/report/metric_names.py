"""How metrics are named on pages and plots (``drop_fss`` -> ``Drop_FSS``)."""

from __future__ import annotations

DISPLAY_NAMES = {"drop_fss": "Drop_FSS", "sc": "SC", "oer": "OER", "fss": "FSS"}
# CREval (METHODOLOGY §5) and its face extension (§5.4)
DISPLAY_NAMES.update({"creval": "CREval", "creval_if": "CREval IF", "creval_vc": "CREval VC", "creval_vq": "CREval VQ",
                      "creval_face": "CREval-face", "creval_face_if": "CREval-face IF",
                      "creval_face_vc": "CREval-face VC", "creval_face_vq": "CREval-face VQ"})


def display_name(metric: str) -> str:
    return DISPLAY_NAMES.get(metric, metric)
