"""Fixtures: a fake Replicate server on 127.0.0.1 per test, and editors pointed at it through the
real replicate SDK. The token lives in a test-only environment variable."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # the shared fakes live in the repository's tests/ package
    sys.path.insert(0, str(REPO_ROOT))

from faceedit_bench_replicate.editor import ReplicateEditor  # noqa: E402

from tests.fakes.replicate import (  # noqa: E402
    BAGEL_VERSION as BAGEL,
)
from tests.fakes.replicate import (
    DEFAULT_TOKEN,
    ReplicateFakeServer,
    replicate_server,
)
from tests.fakes.replicate import (
    KONTEXT_VERSION as KONTEXT,
)

KEY_ENV = "FACEEDIT_TEST_REPLICATE_TOKEN"
FAST_LIMITS = {"requests_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 10.0}


@pytest.fixture(autouse=True)
def _token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, DEFAULT_TOKEN)
    monkeypatch.delenv("REPLICATE_BASE_URL", raising=False)  # a developer's gateway must not change what is tested


@pytest.fixture
def server() -> Iterator[ReplicateFakeServer]:
    with replicate_server(retry_after=2.5, slow_s=0.4, sync_wait_s=0.05) as fake:
        fake.add_version(KONTEXT)
        fake.add_version(BAGEL, image_param="image", output_key="image")
        yield fake


@pytest.fixture
def make_editor(server: ReplicateFakeServer) -> Callable[..., ReplicateEditor]:
    def make(**params: Any) -> ReplicateEditor:
        params.setdefault("model", KONTEXT)
        params.setdefault("base_url", server.url)
        params.setdefault("api_key_env", KEY_ENV)
        params.setdefault("poll_interval_s", 0.02)
        params.setdefault("max_wait_s", 2.0)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return ReplicateEditor(**params)

    return make
