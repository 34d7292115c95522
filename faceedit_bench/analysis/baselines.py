"""Reference editors: baselines that tables show for comparison but never rank or mark best.

The ``identity`` editor returns the photo unchanged, so it keeps identity perfectly (Drop_FSS 0) and would top
every identity table; it is the floor the editors are read against, not a competitor.
"""

from __future__ import annotations

REFERENCE_EDITORS = frozenset({"identity"})


def is_reference_editor(name: str | None) -> bool:
    return name in REFERENCE_EDITORS
