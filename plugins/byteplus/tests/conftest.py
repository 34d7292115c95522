"""Fixtures: a fake ModelArk server on 127.0.0.1 per test, and editors pointed at it through the
real Ark runtime. The key lives in a test-only environment variable."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # the shared fakes live in the repository's tests/ package
    sys.path.insert(0, str(REPO_ROOT))

from faceedit_bench_byteplus.editor import SeedEditEditor, SeedreamEditor  # noqa: E402

from tests.fakes.byteplus import DEFAULT_KEY, ArkFakeServer, ark_server  # noqa: E402

KEY_ENV = "FACEEDIT_TEST_ARK_KEY"
#: Quick, local limits: no rate limiter, short backoff.
FAST_LIMITS = {"requests_per_minute": None, "backoff_initial_s": 0.01, "backoff_max_s": 0.05, "timeout_s": 10.0}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)


@pytest.fixture
def server() -> Iterator[ArkFakeServer]:
    with ark_server(retry_after=2.5, hang_s=1.0) as fake:
        yield fake


def _maker(server: ArkFakeServer, cls: type) -> Callable[..., Any]:
    def make(**params: Any) -> Any:
        params.setdefault("base_url", f"{server.url}/api/v3")
        params.setdefault("api_key_env", KEY_ENV)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return cls(**params)

    return make


@pytest.fixture
def make_seededit(server: ArkFakeServer) -> Callable[..., SeedEditEditor]:
    return _maker(server, SeedEditEditor)


@pytest.fixture
def make_seedream(server: ArkFakeServer) -> Callable[..., SeedreamEditor]:
    return _maker(server, SeedreamEditor)
