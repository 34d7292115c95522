"""The run's report.html: written atomically next to report.json, with the workspace's image store found
from the run directory."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from faceedit_bench.report.html import WORST_SESSIONS, render_html_report
from faceedit_bench.storage import atomic
from faceedit_bench.storage.store import ImageStore, store_root_of_run

REPORT_FILE = "report.html"


def write_html_report(run_dir: Path, report: Mapping[str, Any], *, store: ImageStore | None = None,
                      worst_sessions: int = WORST_SESSIONS) -> Path:
    """Write ``run_dir/report.html`` (atomically: a killed run never leaves half a page) and return its path."""
    run_dir = Path(run_dir)
    page = render_html_report(report, run_dir=run_dir, store=store, worst_sessions=worst_sessions)
    return atomic.write_text(run_dir / REPORT_FILE, page)  # the umask's mode: a served report must be readable


def store_for_run_dir(run_dir: Path) -> ImageStore | None:
    """The workspace's image store of ``<workspace>/runs/<run>``, when it exists (never created here)."""
    root = store_root_of_run(run_dir)
    return ImageStore(root) if root.is_dir() else None
