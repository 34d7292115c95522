"""Fixtures: a fake OpenAI server on 127.0.0.1 per test, and components pointed at it through
the real openai SDK. The key lives in a test-only environment variable."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO_ROOT = Path(__file__).resolve().parents[3]
if str(REPO_ROOT) not in sys.path:  # the shared fakes live in the repository's tests/ package
    sys.path.insert(0, str(REPO_ROOT))

from faceedit_bench_openai.editor import GptImageEditor  # noqa: E402
from faceedit_bench_openai.judge import OpenAIJudge  # noqa: E402

from tests.fakes.openai import DEFAULT_KEY, OpenAIFakeServer, openai_server  # noqa: E402

KEY_ENV = "FACEEDIT_TEST_OPENAI_KEY"
#: Quick, local limits: no rate limiter, short backoff.
FAST_LIMITS = {"requests_per_minute": None, "tokens_per_minute": None, "backoff_initial_s": 0.01,
               "backoff_max_s": 0.05, "timeout_s": 10.0}


@pytest.fixture(autouse=True)
def _api_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, DEFAULT_KEY)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)  # a developer's gateway must not change what is tested


@pytest.fixture
def server() -> Iterator[OpenAIFakeServer]:
    with openai_server(retry_after=2.5, hang_s=1.0) as fake:
        yield fake


@pytest.fixture
def make_editor(server: OpenAIFakeServer) -> Callable[..., GptImageEditor]:
    def make(**params: Any) -> GptImageEditor:
        params.setdefault("base_url", f"{server.url}/v1")
        params.setdefault("api_key_env", KEY_ENV)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return GptImageEditor(**params)

    return make


@pytest.fixture
def make_judge(server: OpenAIFakeServer) -> Callable[..., OpenAIJudge]:
    def make(**params: Any) -> OpenAIJudge:
        params.setdefault("base_url", f"{server.url}/v1")
        params.setdefault("api_key_env", KEY_ENV)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return OpenAIJudge(**params)

    return make
