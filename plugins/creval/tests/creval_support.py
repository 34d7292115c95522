"""Paths the package's tests share."""

from __future__ import annotations

from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
#: CREval-Bench's layout in miniature (3 items), shared with the core's preset tests.
FIXTURE = REPO_ROOT / "tests" / "data" / "creval_bench"
