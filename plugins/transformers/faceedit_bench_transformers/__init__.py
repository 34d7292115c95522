"""faceedit-bench-transformers: a local vision-language judge (Qwen-VL families) and image metrics from image
models (CLIP-T, CLIP-I, DINO), run with transformers.

Loading this module is cheap: torch and transformers are imported when the judge or a metric is first used.
Select the judge with ``judge=qwen_vl`` (parameters in ``conf/judge/qwen_vl.yaml``), the metrics with
``image_metrics=[clip,dino]`` (parameters at ``image_metric_params.clip.model=...``; docs/metrics.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register

__all__ = ["faceedit_config_searchpath", "faceedit_register_image_metrics", "faceedit_register_judges"]


@hookimpl
def faceedit_register_judges(register: Register) -> None:
    register("qwen_vl", "faceedit_bench_transformers.judge:QwenVLJudge",
             description="Qwen2-VL / Qwen2.5-VL / Qwen3-VL, local through transformers (no per-call cost)")


@hookimpl
def faceedit_register_image_metrics(register: Register) -> None:
    register("clip", "faceedit_bench_transformers.image_similarity:ClipSimilarity",
             description="CLIP-T (instruction vs I_k) and CLIP-I (I_k-1 vs I_k, I_0 vs I_K) cosines")
    register("dino", "faceedit_bench_transformers.image_similarity:DinoSimilarity",
             description="DINO image similarity (I_k-1 vs I_k, I_0 vs I_K)")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_transformers.conf"]
