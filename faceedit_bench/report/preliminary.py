"""Small samples marked: a run whose figures rest on fewer identities than declared is "preliminary"
(``sample_size`` in report.json; the threshold is ``PRELIMINARY_IDENTITIES`` of the statistics module)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_preliminary(report: Mapping[str, Any]) -> bool:
    return bool((report.get("sample_size") or {}).get("preliminary"))


def identities(report: Mapping[str, Any]) -> int | None:
    """The run's identities, None for a report written before they were counted."""
    n = (report.get("sample_size") or {}).get("identities")
    return int(n) if isinstance(n, int) else None


def preliminary_note(report: Mapping[str, Any]) -> str | None:
    """``PRELIMINARY: 2 identities, fewer than 10: ...`` for a preliminary run, else None."""
    sample = report.get("sample_size") or {}
    return f"PRELIMINARY: {sample.get('reason')}" if sample.get("preliminary") else None
