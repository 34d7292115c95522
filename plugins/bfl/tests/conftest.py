"""Fixtures: a fake BFL API on 127.0.0.1 per test, and editors pointed at it through the plugin's
real HTTP client. The key lives in a test-only environment variable."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # the shared fakes live in the repository's tests/ package
    sys.path.insert(0, str(REPO_ROOT))

from bfl_helpers import FAST, FAST_LIMITS, KEY_ENV  # noqa: E402
from faceedit_bench_bfl.editor import BflEditor, KontextProEditor  # noqa: E402

from tests.fakes.bfl import DEFAULT_KEY, BFLFakeServer, bfl_server  # noqa: E402


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)


@pytest.fixture
def server() -> Iterator[BFLFakeServer]:
    with bfl_server(generation_s=0.05, retry_after=0.05, poll_latency_s=0.1, hang_s=1.5) as fake:
        yield fake


@pytest.fixture
def make_editor(server: BFLFakeServer) -> Callable[..., BflEditor]:
    def make(cls: type[BflEditor] = KontextProEditor, **params: Any) -> BflEditor:
        params.setdefault("base_url", server.url)
        params.setdefault("api_key_env", KEY_ENV)
        for key, value in FAST.items():
            params.setdefault(key, value)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return cls(**params)

    return make
