"""Tiny pipelines saved once per session to local directories, as a downloaded model would be."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Found, not imported: importing diffusers (and torch) costs seconds, and every test worker collects these tests,
# most of them never to run one.
if importlib.util.find_spec("diffusers") is None:
    pytest.skip("faceedit-bench-diffusers needs diffusers (see its README)", allow_module_level=True)

from faceedit_bench_diffusers import testing  # noqa: E402


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``tiny_model(name)``: the directory of that tiny pipeline, built on first use."""
    root = tmp_path_factory.mktemp("tiny_pipelines")
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            built[name] = testing.save_tiny(name, root / name)
        return built[name]

    return get


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    """Nothing may reach the Hub, and no test sees the developer's own cache."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads its environment once, at import: set its constants too.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    import torch

    # Tiny models: one intra-op thread does the work, more only spin waiting for each other, and the suite runs
    # a test process per core already.
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with testing.small_qwen_internal_size(64):
            yield
    finally:
        torch.set_num_threads(threads)
