"""The default run's report.html (``python -m faceedit_bench``, offline: the identity editor on the sample
faces) stays small: its contact sheets are embedded at the page's width, not as full-size PNGs (1.6 MB)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.console_fit import too_wide
from tests.session_folder import made_once

#: The stated limit for the default run's page (about 470 KB: six contact sheets, three plots, the tables).
MAX_BYTES = 600_000


@pytest.fixture(scope="session")
def default_run_page(tmp_path_factory) -> Path:
    """report.html of ``python -m faceedit_bench`` as a user runs it (tracking off: the page is the same), in a
    terminal 300 columns wide; what it printed is kept beside it (``console.txt``, 4 levels up). Run once for the
    whole test session, whichever xdist worker needs it first (the tests only read it)."""
    def run(home: Path) -> None:
        env = {**os.environ, "FACEEDIT_BENCH_HOME": str(home / "ws"), "MLFLOW_DISABLE_TELEMETRY": "true",
               "DO_NOT_TRACK": "true", "COLUMNS": "300"}
        out = subprocess.run([sys.executable, "-m", "faceedit_bench", "tracking=none"],
                             capture_output=True, text=True, cwd=home, env=env, timeout=600)
        assert out.returncode == 0, out.stderr
        (home / "console.txt").write_text(out.stdout + out.stderr, encoding="utf-8")

    home = made_once(tmp_path_factory, "default-run", "the default run shared by the test workers", run)
    (page,) = (home / "ws" / "runs").glob("*/report.html")
    return page


@pytest.mark.slow  # the default run, about 10 s of CPU
def test_the_default_runs_page_is_small(default_run_page: Path) -> None:
    size = default_run_page.stat().st_size
    assert size < MAX_BYTES, f"report.html is {size} bytes; the limit is {MAX_BYTES}"
    page = default_run_page.read_text()
    sheets = page.count('<img class="sheet" loading="lazy"')
    assert sheets == 6  # the worst sessions' sheets are all there, each linked to its full-size file
    assert page.count('<a href="contact_sheets/') == sheets
    for name in (m.split('"')[0] for m in page.split('<a href="')[1:] if m.startswith("contact_sheets/")):
        assert (default_run_page.parent / name).is_file()


@pytest.mark.slow  # the default run, about 10 s of CPU
def test_the_default_runs_console_fits_100_columns(default_run_page: Path) -> None:
    """Progress lines (their log prefix included), the summary's tables and notes: at most 100 columns on a
    terminal three times as wide (issue 40, item 8)."""
    text = (default_run_page.parents[3] / "console.txt").read_text(encoding="utf-8")
    assert "progress: " in text and "Run identity@" in text  # the progress lines and the summary are there
    assert too_wide(text) == [], text
