"""The registered editors: one factory per model family, with the defaults its source states.

Every factory takes the same run options (model location, dtype, device, batching) and the
generation settings of its pipeline. ``seed``: null uses the engine's per-(image, session,
step) seed (``EditRequest.seed``); an integer is a paper's fixed seed, used for every call.
Defaults from METHODOLOGY §4.1 (paper b): FLUX.2-dev 50 steps, guidance 4.0, seed 42;
Step1X-Edit-v1p2 28 steps, true CFG 6.0, seed 42; Qwen-Image-Edit-2511 40 steps, guidance 1.0,
true CFG 4.0, seed 0; all bf16. Where no paper states a value, the diffusers call default
(or the model card's example) is used and the README says so.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from faceedit_bench_diffusers.editor import DiffusersEditor
from faceedit_bench_diffusers.pipelines import SPECS


def _editor(name: str, settings: dict[str, Any], **options: Any) -> DiffusersEditor:
    return DiffusersEditor(SPECS[name], settings=settings, **options)


def flux_kontext_dev(model: str = "black-forest-labs/FLUX.1-Kontext-dev", revision: str | None = None,
                     steps: int = 28, guidance_scale: float = 2.5, true_cfg_scale: float = 1.0,
                     negative_prompt: str = "", auto_resize: bool = True, resolution: int | None = 1024,
                     seed: int | None = None, dtype: str = "bfloat16", device: str = "auto",
                     cpu_offload: bool = False, batch_size: int = 4, batch_wait_s: float = 0.05,
                     timeout_s: float = 3600.0, allow_download: bool = False,
                     extra_args: Mapping[str, Any] | None = None) -> DiffusersEditor:
    settings = {"steps": steps, "guidance_scale": guidance_scale, "true_cfg_scale": true_cfg_scale,
                "negative_prompt": negative_prompt, "auto_resize": auto_resize}
    return _editor("flux_kontext_dev", settings, model=model, revision=revision, resolution=resolution, seed=seed,
                   dtype=dtype, device=device, cpu_offload=cpu_offload, batch_size=batch_size,
                   batch_wait_s=batch_wait_s, timeout_s=timeout_s, allow_download=allow_download,
                   extra_args=extra_args)


def qwen_image_edit(model: str = "Qwen/Qwen-Image-Edit-2511", revision: str | None = None,
                    pipeline: str | None = None, steps: int = 40, guidance_scale: float = 1.0,
                    true_cfg_scale: float = 4.0, negative_prompt: str = " ", resolution: int | None = 1024,
                    seed: int | None = 0, dtype: str = "bfloat16", device: str = "auto", cpu_offload: bool = False,
                    batch_size: int = 4, batch_wait_s: float = 0.05, timeout_s: float = 3600.0,
                    allow_download: bool = False, extra_args: Mapping[str, Any] | None = None) -> DiffusersEditor:
    settings = {"steps": steps, "guidance_scale": guidance_scale, "true_cfg_scale": true_cfg_scale,
                "negative_prompt": negative_prompt}
    return _editor("qwen_image_edit", settings, model=model, revision=revision, pipeline=pipeline,
                   resolution=resolution, seed=seed, dtype=dtype, device=device, cpu_offload=cpu_offload,
                   batch_size=batch_size, batch_wait_s=batch_wait_s, timeout_s=timeout_s,
                   allow_download=allow_download, extra_args=extra_args)


def flux2_dev(model: str = "black-forest-labs/FLUX.2-dev", revision: str | None = None, steps: int = 50,
              guidance_scale: float = 4.0, resolution: int | None = 1024, seed: int | None = 42,
              dtype: str = "bfloat16", device: str = "auto", cpu_offload: bool = False, batch_size: int = 1,
              batch_wait_s: float = 0.05, timeout_s: float = 3600.0, allow_download: bool = False,
              extra_args: Mapping[str, Any] | None = None) -> DiffusersEditor:
    settings = {"steps": steps, "guidance_scale": guidance_scale}
    return _editor("flux2_dev", settings, model=model, revision=revision, resolution=resolution, seed=seed,
                   dtype=dtype, device=device, cpu_offload=cpu_offload, batch_size=batch_size,
                   batch_wait_s=batch_wait_s, timeout_s=timeout_s, allow_download=allow_download,
                   extra_args=extra_args)


def step1x_edit(model: str = "stepfun-ai/Step1X-Edit-v1p2", revision: str | None = None, steps: int = 28,
                true_cfg_scale: float = 6.0, resolution: int | None = 1024, seed: int | None = 42,
                dtype: str = "bfloat16", device: str = "auto", cpu_offload: bool = False, batch_size: int = 1,
                batch_wait_s: float = 0.05, timeout_s: float = 3600.0, allow_download: bool = False,
                extra_args: Mapping[str, Any] | None = None) -> DiffusersEditor:
    settings = {"steps": steps, "true_cfg_scale": true_cfg_scale, "size_level": resolution or 1024}
    return _editor("step1x_edit", settings, model=model, revision=revision, resolution=resolution, seed=seed,
                   dtype=dtype, device=device, cpu_offload=cpu_offload, batch_size=batch_size,
                   batch_wait_s=batch_wait_s, timeout_s=timeout_s, allow_download=allow_download,
                   extra_args=extra_args)


def flux1_dev(model: str = "black-forest-labs/FLUX.1-dev", revision: str | None = None, steps: int = 28,
              guidance_scale: float = 7.0, strength: float = 0.6, resolution: int | None = 1024,
              seed: int | None = None, dtype: str = "bfloat16", device: str = "auto", cpu_offload: bool = False,
              batch_size: int = 4, batch_wait_s: float = 0.05, timeout_s: float = 3600.0,
              allow_download: bool = False, extra_args: Mapping[str, Any] | None = None) -> DiffusersEditor:
    if not 0 < strength <= 1:
        raise ValueError("strength must be in (0, 1]: the share of the noise schedule applied to the input")
    settings = {"steps": steps, "guidance_scale": guidance_scale, "strength": strength}
    return _editor("flux1_dev", settings, model=model, revision=revision, resolution=resolution, seed=seed,
                   dtype=dtype, device=device, cpu_offload=cpu_offload, batch_size=batch_size,
                   batch_wait_s=batch_wait_s, timeout_s=timeout_s, allow_download=allow_download,
                   extra_args=extra_args)


def instruct_pix2pix(model: str = "timbrooks/instruct-pix2pix", revision: str | None = None, steps: int = 100,
                     guidance_scale: float = 7.5, image_guidance_scale: float = 1.5, resolution: int | None = 512,
                     seed: int | None = None, dtype: str = "float16", device: str = "auto",
                     cpu_offload: bool = False, batch_size: int = 8, batch_wait_s: float = 0.05,
                     timeout_s: float = 3600.0, allow_download: bool = False,
                     extra_args: Mapping[str, Any] | None = None) -> DiffusersEditor:
    settings = {"steps": steps, "guidance_scale": guidance_scale, "image_guidance_scale": image_guidance_scale}
    return _editor("instruct_pix2pix", settings, model=model, revision=revision, resolution=resolution, seed=seed,
                   dtype=dtype, device=device, cpu_offload=cpu_offload, batch_size=batch_size,
                   batch_wait_s=batch_wait_s, timeout_s=timeout_s, allow_download=allow_download,
                   extra_args=extra_args)
