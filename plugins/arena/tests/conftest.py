"""Fixtures: the repository's fake OpenAI server (tests/fakes), reached through the real openai SDK."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # the shared fakes live in the repository's tests/ package
    sys.path.insert(0, str(REPO_ROOT))
from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: E402, F401 - one migrated store per worker
