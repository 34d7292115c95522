"""What differs between the pipelines: which classes an editor accepts, which of them take a
batch of (image, instruction) pairs in one call, which take several input images for one
instruction (FLUX.2, Qwen-Image-Edit Plus: ``image=[...]``, the edited image first), and how generation settings become call
arguments (InstructPix2Pix has ``image_guidance_scale``, Kontext and Qwen ``true_cfg_scale``,
FLUX.2 neither, FLUX.1 img2img ``strength`` ...).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

Args = dict[str, Any]


@dataclass(frozen=True)
class PipelineSpec:
    editor: str
    default_model: str
    classes: tuple[str, ...]  # accepted diffusers pipeline classes
    batched: frozenset[str]  # those that edit several (image, instruction) pairs per call
    arguments: Callable[[Mapping[str, Any], int, int, int], Args]  # (settings, n, height, width) -> kwargs
    install_hint: str = ""  # how to get a class that released diffusers lacks
    #: Classes that take several input images for one instruction (``image=[...]``), with the most
    #: images the model's authors recommend; every other class takes one.
    multi_image: Mapping[str, int] = field(default_factory=dict)

    def max_input_images(self, pipeline_class: str) -> int:
        return self.multi_image.get(pipeline_class, 1)


def _common(settings: Mapping[str, Any]) -> Args:
    return {"num_inference_steps": settings["steps"], "guidance_scale": settings["guidance_scale"]}


def _negative(settings: Mapping[str, Any], n: int) -> Args:
    # The pipelines apply true CFG only when a negative prompt is given.
    scale = settings["true_cfg_scale"]
    if scale > 1:
        return {"true_cfg_scale": scale, "negative_prompt": _per_item(settings["negative_prompt"], n)}
    return {"true_cfg_scale": scale}


def _per_item(value: str, n: int) -> str | list[str]:
    return value if n == 1 else [value] * n


def instruct_pix2pix_args(s: Mapping[str, Any], n: int, height: int, width: int) -> Args:
    # The output takes the input's size: no height/width arguments.
    return {**_common(s), "image_guidance_scale": s["image_guidance_scale"]}


def flux1_args(s: Mapping[str, Any], n: int, height: int, width: int) -> Args:
    return {**_common(s), "strength": s["strength"], "height": height, "width": width}


def kontext_args(s: Mapping[str, Any], n: int, height: int, width: int) -> Args:
    # Kontext derives the output size from max_area and the aspect of height/width.
    return {**_common(s), **_negative(s, n), "height": height, "width": width, "max_area": height * width,
            "_auto_resize": s["auto_resize"]}


def qwen_args(s: Mapping[str, Any], n: int, height: int, width: int) -> Args:
    return {**_common(s), **_negative(s, n), "height": height, "width": width}


def flux2_args(s: Mapping[str, Any], n: int, height: int, width: int) -> Args:
    return {**_common(s), "height": height, "width": width}


def step1x_args(s: Mapping[str, Any], n: int, height: int, width: int) -> Args:
    # Step1X resizes to its own size_level; it has no guidance-distillation input.
    return {"num_inference_steps": s["steps"], "true_cfg_scale": s["true_cfg_scale"],
            "size_level": s["size_level"]}


_STEP1X_HINT = ("Step1XEditPipelineV1P2 is not in released diffusers: install the Step1X-Edit branch named on the "
                "stepfun-ai/Step1X-Edit-v1p2 model card (Peyton-Chen/diffusers, branch step1xedit_v1p2) in place of "
                "diffusers, or pick another editor")

SPECS: dict[str, PipelineSpec] = {spec.editor: spec for spec in (
    PipelineSpec("instruct_pix2pix", "timbrooks/instruct-pix2pix", ("StableDiffusionInstructPix2PixPipeline",),
                 frozenset({"StableDiffusionInstructPix2PixPipeline"}), instruct_pix2pix_args),
    PipelineSpec("flux1_dev", "black-forest-labs/FLUX.1-dev", ("FluxImg2ImgPipeline",),
                 frozenset({"FluxImg2ImgPipeline"}), flux1_args),
    PipelineSpec("flux_kontext_dev", "black-forest-labs/FLUX.1-Kontext-dev", ("FluxKontextPipeline",),
                 frozenset({"FluxKontextPipeline"}), kontext_args),
    # Plus (2509, 2511) takes a list of reference images for ONE instruction: no batching. Its model card
    # states 1 to 3 input images as the range it was trained for.
    PipelineSpec("qwen_image_edit", "Qwen/Qwen-Image-Edit-2511", ("QwenImageEditPlusPipeline", "QwenImageEditPipeline"),
                 frozenset({"QwenImageEditPipeline"}), qwen_args, multi_image={"QwenImageEditPlusPipeline": 3}),
    # FLUX.2 treats a list of images as references for one prompt: no batching. BFL recommends at most 6
    # reference images for [dev] (its API models take 8).
    PipelineSpec("flux2_dev", "black-forest-labs/FLUX.2-dev", ("Flux2Pipeline",), frozenset(), flux2_args,
                 multi_image={"Flux2Pipeline": 6}),
    # The Step1X-Edit v1p2 pipeline asserts a batch of one.
    PipelineSpec("step1x_edit", "stepfun-ai/Step1X-Edit-v1p2", ("Step1XEditPipelineV1P2",), frozenset(), step1x_args,
                 _STEP1X_HINT),
)}


def pipeline_class(spec: PipelineSpec, requested: str | None, index: Mapping[str, Any]) -> str:
    """The pipeline class to use: ``requested``, else the one model_index.json names; it must be
    one this editor knows how to call."""
    name = requested or index.get("_class_name") or spec.classes[0]
    if name not in spec.classes:
        raise ValueError(f"editor {spec.editor} runs {' or '.join(spec.classes)}, not {name!r} "
                         f"(set editor.params.pipeline to one of them, or use a matching model)")
    return name


def images_of(output: Any) -> list[Any]:
    """The edited images of a pipeline output (Step1X with reflection returns ``final_images``)."""
    final = getattr(output, "final_images", None)
    return list(final) if final else list(output.images)
