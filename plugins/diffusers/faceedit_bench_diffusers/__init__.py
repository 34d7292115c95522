"""faceedit-bench-diffusers: open-weight image editors run locally through diffusers.

Loading this module is cheap: torch and diffusers are imported when an editor is built.
Select an editor with ``editor=<name>``; parameters are in ``conf/editor/<name>.yaml``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from faceedit_bench.api import hookimpl

if TYPE_CHECKING:
    from faceedit_bench.api import Register

__all__ = ["EDITORS", "faceedit_config_searchpath", "faceedit_register_editors"]

#: Registered name -> one-line description.
EDITORS = {
    "flux_kontext_dev": "FLUX.1 Kontext [dev] (FluxKontextPipeline), local, batched",
    "qwen_image_edit": "Qwen-Image-Edit 2511/2509 (QwenImageEditPlusPipeline) or the first release, local",
    "flux2_dev": "FLUX.2 [dev] (Flux2Pipeline), local; paper defaults: 50 steps, guidance 4, seed 42",
    "step1x_edit": "Step1X-Edit v1p2 (needs the Step1X diffusers branch), local; 28 steps, true CFG 6, seed 42",
    "flux1_dev": "FLUX.1 [dev] image-to-image (FluxImg2ImgPipeline), local, batched",
    "instruct_pix2pix": "InstructPix2Pix (StableDiffusionInstructPix2PixPipeline), local, batched",
}


@hookimpl
def faceedit_register_editors(register: Register) -> None:
    for name, description in EDITORS.items():
        register(name, f"faceedit_bench_diffusers.editors:{name}", description=description)


@hookimpl
def faceedit_config_searchpath() -> list[str]:
    return ["pkg://faceedit_bench_diffusers.conf"]
