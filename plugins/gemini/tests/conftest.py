"""Fixtures: a fake Gemini endpoint on 127.0.0.1, the key in the environment, component builders.

The tests drive the real google-genai SDK; only the server is fake (``tests/fakes/gemini.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from faceedit_bench_gemini.editor import NanoBananaEditor
from faceedit_bench_gemini.judge import GeminiJudge
from gemini_helpers import FAST_LIMITS, KEY

from tests.fakes.gemini import GeminiServer, gemini_server


@pytest.fixture(autouse=True)
def _no_endpoint_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GOOGLE_GEMINI_BASE_URL", raising=False)  # a developer's gateway must not change what is tested


@pytest.fixture
def api_key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv("GEMINI_API_KEY", KEY)
    monkeypatch.delenv("GOOGLE_API_KEY", raising=False)
    return KEY


@pytest.fixture(scope="session")
def _fake_server() -> Iterator[GeminiServer]:
    with gemini_server(api_key=KEY, retry_after=0.05, hang_s=0.4) as server:
        yield server


@pytest.fixture
def fake(_fake_server: GeminiServer) -> GeminiServer:
    """The fake Gemini API, with no requests recorded and no faults scripted."""
    _fake_server.reset()
    return _fake_server


@pytest.fixture(params=["aiohttp", "httpx"])
def transport(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Both HTTP stacks the SDK may use: aiohttp when installed, httpx2 otherwise."""
    if request.param == "httpx":
        from google.genai import _api_client

        monkeypatch.setattr(_api_client, "has_aiohttp", False)
    else:
        pytest.importorskip("aiohttp")
    return request.param


@pytest.fixture
def make_editor(api_key: str, fake: GeminiServer) -> Callable[..., NanoBananaEditor]:
    def make(**params: Any) -> NanoBananaEditor:
        params.setdefault("base_url", fake.url)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return NanoBananaEditor(**params)

    return make


@pytest.fixture
def make_judge(api_key: str, fake: GeminiServer) -> Callable[..., GeminiJudge]:
    def make(**params: Any) -> GeminiJudge:
        params.setdefault("base_url", fake.url)
        params["limits"] = {**FAST_LIMITS, **params.get("limits", {})}
        return GeminiJudge(**params)

    return make
