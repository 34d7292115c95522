"""faceedit-bench-openai: OpenAI's gpt-image editor and an MLLM judge, as a plugin.

Loading this module is cheap: the ``openai`` SDK is imported only when a call is made.
Select the editor with ``editor=gpt_image`` and the judge with ``judge=openai``; any
OpenAI-compatible server (vLLM, a proxy, another provider) is the same judge with another
``base_url`` (``judge=openai_compatible`` is a ready example). Parameters are in ``conf/``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register

__all__ = ["faceedit_config_searchpath", "faceedit_register_editors", "faceedit_register_judges"]


@hookimpl
def faceedit_register_editors(register: Register) -> None:
    register("gpt_image", "faceedit_bench_openai.editor:GptImageEditor",
             description="OpenAI images.edit (gpt-image-1 by default), one hosted call per step")


@hookimpl
def faceedit_register_judges(register: Register) -> None:
    register("openai", "faceedit_bench_openai.judge:OpenAIJudge",
             description="OpenAI chat completions or Responses API with JSON-schema output; any "
                         "OpenAI-compatible server through base_url")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_openai.conf"]
