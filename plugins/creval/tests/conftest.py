"""The repository's shared fixtures (a plugin set, Hydra's real composition, the synthetic dataset) and fakes
(tests/fakes: the providers' wire protocols, CREval's fake judge), as the other first-party plugins use them."""

from __future__ import annotations

import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # the shared fakes and fixtures live in the repository's tests/ package
    sys.path.insert(0, str(REPO_ROOT))

from tests.conftest import compose, plugins, synthetic  # noqa: E402, F401
from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: E402, F401 - one migrated store per worker
