"""The ``browser`` fixture (headless Debian Chromium driven by selenium) for every test in this folder.

Without ``chromium``, ``chromedriver`` or ``selenium`` the tests here are skipped with the reason, except with
``FACEEDIT_BENCH_REQUIRE_BROWSER=1`` (CI), where a missing browser fails them.
"""

from __future__ import annotations

import os

import pytest

from tests.browser.support import MISSING, REQUIRED, browser  # noqa: F401 - the fixture, for every test here


def pytest_collection_modifyitems(config, items):
    if MISSING is None or REQUIRED:
        return
    here = os.path.dirname(__file__)
    for item in items:
        if str(item.fspath).startswith(here):
            item.add_marker(pytest.mark.skip(reason=str(MISSING)))
