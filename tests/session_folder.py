"""A folder made once for the whole test session, whichever pytest-xdist worker needs it first."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from faceedit_bench.storage.locks import directory_lock


def made_once(tmp_path_factory: pytest.TempPathFactory, name: str, what: str, make: Callable[[Path], None]) -> Path:
    """The folder ``name``, filled by ``make(folder)`` once per test session: the xdist workers share one base
    folder, and the first to need it makes it under a lock while the others wait (the tests only read it)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # one folder for every worker
    folder = shared / name
    with directory_lock(shared, name, what=what, timeout=900):
        if not (folder / "done").exists():
            shutil.rmtree(folder, ignore_errors=True)  # what a worker that failed to make it left
            folder.mkdir()
            make(folder)
            (folder / "done").touch()
    return folder
