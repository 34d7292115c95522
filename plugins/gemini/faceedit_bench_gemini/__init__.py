"""faceedit-bench-gemini: Google's Gemini API as an editor (``nano_banana``) and a judge (``gemini``).

Loading this module is cheap: ``google-genai`` is imported only when a component makes a call.
Select them with ``editor=nano_banana`` and ``judge=gemini``; the parameters are in
``conf/editor/nano_banana.yaml`` and ``conf/judge/gemini.yaml``. The API key is read from
``$GEMINI_API_KEY`` (or ``$GOOGLE_API_KEY``) only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register

__all__ = ["faceedit_config_searchpath", "faceedit_register_editors", "faceedit_register_judges"]


@hookimpl
def faceedit_register_editors(register: Register) -> None:
    register(
        "nano_banana",
        "faceedit_bench_gemini.editor:NanoBananaEditor",
        description="Gemini image models (gemini-2.5-flash-image 'Nano Banana', ...) through the Gemini API",
    )


@hookimpl
def faceedit_register_judges(register: Register) -> None:
    register(
        "gemini",
        "faceedit_bench_gemini.judge:GeminiJudge",
        description="Gemini (gemini-2.5-flash, ...) as an MLLM judge with JSON-schema output",
    )


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_gemini.conf"]
