"""faceedit-bench-bfl: Black Forest Labs' hosted FLUX editors, as a plugin.

``editor=kontext_pro`` and ``editor=kontext_max`` (FLUX.1 Kontext [pro] / [max]), ``editor=flux2_pro``
and ``editor=flux2_flex`` (FLUX.2 [pro] / [flex], which edit through ``input_image`` too). Each step
is one BFL task (submit, poll, download) and one attempt of the core's execution layer.
Loading this module is cheap: the HTTP client is imported only when a call is made.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register

__all__ = ["faceedit_config_searchpath", "faceedit_register_editors"]


@hookimpl
def faceedit_register_editors(register: Register) -> None:
    register("kontext_pro", "faceedit_bench_bfl.editor:KontextProEditor",
             description="FLUX.1 Kontext [pro] through the BFL API (flux-kontext-pro), one task per step")
    register("kontext_max", "faceedit_bench_bfl.editor:KontextMaxEditor",
             description="FLUX.1 Kontext [max] through the BFL API (flux-kontext-max), one task per step")
    register("flux2_pro", "faceedit_bench_bfl.editor:Flux2ProEditor",
             description="FLUX.2 [pro] image editing through the BFL API (flux-2-pro), one task per step")
    register("flux2_flex", "faceedit_bench_bfl.editor:Flux2FlexEditor",
             description="FLUX.2 [flex] image editing through the BFL API (flux-2-flex), one task per step")


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_bfl.conf"]
