"""``faceedit-bench leaderboard build``: submissions (+ MLflow runs) -> README.md and index.html."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from faceedit_bench.leaderboard.entries import Collection, Rejected, add_runs, collect_submissions
from faceedit_bench.leaderboard.limits import DEFAULT_LIMITS, Limits
from faceedit_bench.leaderboard.render_html import render_page
from faceedit_bench.leaderboard.render_markdown import render_markdown
from faceedit_bench.leaderboard.tolerances import registered_metrics
from faceedit_bench.leaderboard.views import build_views
from faceedit_bench.report.sources import finished_mlflow_runs
from faceedit_bench.storage.atomic import write_text

DEFAULT_DIR = Path("leaderboard")
PAGE = "index.html"
TABLE = "README.md"


@dataclass
class BuildResult:
    page: Path
    table: Path
    collection: Collection
    n_runs: int


def build_leaderboard(directory: Path = DEFAULT_DIR, *, tracking_uri: str | None = None,
                      experiments: list[str] | None = None, rank_by: str | None = None,
                      out: Path | None = None, plugins: Any = None, limits: Limits = DEFAULT_LIMITS) -> BuildResult:
    """Render ``<out>/README.md`` and ``<out>/index.html`` (``out`` defaults to ``directory``) from the
    submissions in ``<directory>/submissions`` and, with ``tracking_uri``, the finished runs of that
    MLflow store. Rejected submissions are listed on both pages, never silently dropped."""
    directory = Path(directory)
    registered = registered_metrics(plugins)
    collection = collect_submissions(directory, limits, registered)
    n_before = len(collection.entries)
    if tracking_uri:
        unusable: list[tuple[str, str]] = []
        add_runs(collection, finished_mlflow_runs(tracking_uri, experiments, unusable), registered)
        collection.rejected += [Rejected(label, reason) for label, reason in unusable]
    n_runs = len(collection.entries) - n_before
    views = build_views(collection.entries, registered, rank_by)
    counts = {"n_submissions": n_before + len(collection.rejected), "n_runs": n_runs}
    out = Path(out or directory)
    out.mkdir(parents=True, exist_ok=True)
    page = _write(out / PAGE, render_page(views, collection.rejected, **counts))
    table = _write(out / TABLE, render_markdown(views, collection.rejected, **counts))
    return BuildResult(page, table, collection, n_runs)


def _write(target: Path, text: str) -> Path:
    return write_text(target, text, newline="\n")  # atomic, with the umask's mode: these pages are published
