"""The judge on a CUDA device in bfloat16 (skipped without one)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from faceedit_bench.api import JudgeRequest, Outcome
from faceedit_bench.api.testing import gradient_image
from faceedit_bench.testing import load_plugins, skip_without_cuda

pytestmark = pytest.mark.gpu


@pytest.fixture(autouse=True, scope="session")  # session: set up before the session's model fixtures
def _cuda_device() -> None:
    skip_without_cuda()  # at run time: importing torch at collection costs every test worker


@pytest.mark.parametrize("family", ["qwen2_5_vl", "qwen3_vl"])
def test_the_judge_runs_on_the_gpu(family: str, tiny_vlm: Callable[[str], Path]) -> None:
    judge = load_plugins().registry.create("judges", "qwen_vl", {"model": str(tiny_vlm(family)), "device": "cuda",
                                                                 "max_new_tokens": 8})
    reply = judge.judge(JudgeRequest("Rate this edit as JSON.", (gradient_image(1), gradient_image(2)), {}, "x", 0))
    assert reply.outcome is Outcome.OK, reply.reason
    assert reply.usage["peak_gpu_mem_bytes"] > 0
