"""Fixtures of the core's test suite these tests share: a plugin set with the test plugin, Hydra composition,
the synthetic dataset, FairFace layouts made of real portraits, fake provider servers and the browser; and one
audited run that two modules read."""

from __future__ import annotations

import pytest

from tests.browser.support import browser  # noqa: F401 - headless Chromium, for the report pages
from tests.conftest import compose, plugins, synthetic  # noqa: F401
from tests.datasets.conftest import make_real_fairface, real_fairface_images  # noqa: F401
from tests.mlflow_store import mlflow_store_template, new_mlflow_store  # noqa: E402, F401 - one migrated store per worker


@pytest.fixture(scope="session")
def audit_report(tmp_path_factory, mlflow_store_template):  # noqa: F811 - the fixture imported above
    """test_audit_run.py's audited run, made once for it and test_audit_page.py, which only read it."""
    from test_audit_run import audited_run

    return audited_run(tmp_path_factory, mlflow_store_template)
