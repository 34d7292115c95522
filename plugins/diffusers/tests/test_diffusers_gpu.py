"""The same editors on a CUDA device in bfloat16 (skipped without one)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from faceedit_bench.api import EditRequest, Outcome
from faceedit_bench.api.testing import gradient_image
from faceedit_bench.testing import load_plugins, skip_without_cuda

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True, scope="session")  # session: set up before the session's model fixtures
def _cuda_device() -> None:
    skip_without_cuda()  # at run time: importing torch at collection costs every test worker


@pytest.mark.parametrize("name", ["flux_kontext_dev", "qwen_image_edit", "flux2_dev"])
def test_batched_bf16_edits_on_the_gpu_report_memory(name: str, tiny_model: Callable[[str], Path]) -> None:
    params = {"model": str(tiny_model(name)), "steps": 2, "resolution": 64, "dtype": "bfloat16", "device": "cuda",
              "batch_size": 4, **({"auto_resize": False} if name == "flux_kontext_dev" else {})}
    editor = load_plugins().registry.create("editors", name, params)
    requests = [EditRequest(gradient_image(i, size=64), "make the hair red", "f", f"s{i}", 1, i) for i in range(4)]

    async def run() -> list:
        return list(await asyncio.gather(*(editor.aedit(r) for r in requests)))

    results = asyncio.run(run())
    assert [r.outcome for r in results] == [Outcome.OK] * 4, results[0].reason
    assert all(r.usage["peak_gpu_mem_bytes"] > 0 for r in results)


def test_cpu_offload_runs(tiny_model: Callable[[str], Path]) -> None:
    editor = load_plugins().registry.create("editors", "flux1_dev", {
        "model": str(tiny_model("flux1_dev")), "steps": 2, "resolution": 64, "device": "cuda", "cpu_offload": True})
    result = editor.edit(EditRequest(gradient_image(1, size=64), "add glasses", "f", "s", 1, 1))
    assert result.outcome is Outcome.OK, result.reason
