"""Tiny Qwen-VL checkpoints saved once per session, as a downloaded model would be."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

# Found, not imported: importing transformers (and torch) costs seconds, and every test worker collects these tests,
# most of them never to run one.
if importlib.util.find_spec("transformers") is None:
    pytest.skip("faceedit-bench-transformers needs transformers (see its README)", allow_module_level=True)

from faceedit_bench_transformers import testing  # noqa: E402


@pytest.fixture(scope="session")
def tiny_vlm(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Path]:
    """``tiny_vlm(name)``: the directory of that tiny checkpoint, built on first use."""
    root = tmp_path_factory.mktemp("tiny_vlms")
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            built[name] = testing.save_tiny(name, root / name)
        return built[name]

    return get


@pytest.fixture(autouse=True)
def _offline(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Nothing may reach the Hub, and no test sees the developer's own cache."""
    import huggingface_hub.constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    # huggingface_hub reads its environment once, at import: set its constants too.
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "hf-cache"))


@pytest.fixture(autouse=True)
def _one_torch_thread(request: pytest.FixtureRequest) -> Iterator[None]:
    """Tiny models: one intra-op thread does the work, more only spin waiting for each other, and the suite runs
    a test process per core already. Only where a tiny model runs (importing torch costs seconds)."""
    if "tiny_vlm" not in request.fixturenames:
        yield
        return
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(threads)
