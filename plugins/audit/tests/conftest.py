"""Fixtures of the core's test suite these tests share: a plugin set with the test plugin, Hydra composition,
the synthetic dataset, FairFace layouts made of real portraits, fake provider servers and the browser."""

from __future__ import annotations

from tests.browser.support import browser  # noqa: F401 - headless Chromium, for the report pages
from tests.conftest import compose, plugins, synthetic  # noqa: F401
from tests.datasets.conftest import make_real_fairface, real_fairface_images  # noqa: F401
from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: E402, F401 - one migrated store per worker
