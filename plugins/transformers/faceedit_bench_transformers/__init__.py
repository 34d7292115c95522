"""faceedit-bench-transformers: a local vision-language judge (Qwen-VL families) run with transformers.

Loading this module is cheap: torch and transformers are imported when the judge is built.
Select it with ``judge=qwen_vl``; parameters are in ``conf/judge/qwen_vl.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register

__all__ = ["faceedit_config_searchpath", "faceedit_register_judges"]


@hookimpl
def faceedit_register_judges(register: Register) -> None:
    register("qwen_vl", "faceedit_bench_transformers.judge:QwenVLJudge",
             description="Qwen2-VL / Qwen2.5-VL / Qwen3-VL, local through transformers (no per-call cost)")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_transformers.conf"]
