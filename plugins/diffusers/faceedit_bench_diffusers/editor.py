"""A diffusers pipeline as a batching editor (:class:`faceedit_bench.plugin.protocols.AsyncEditor`).

The engine runs every session of a chunk concurrently; their requests meet in a
:class:`~faceedit_bench.execution.batching.MicroBatcher`, which runs one pipeline call per
batch of same-sized images, each image with its own seeded generator.
"""

from __future__ import annotations

import io
import logging
import math
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from PIL import Image

from faceedit_bench.api import CallLimits, ConfigError, EditRequest, EditResult, MicroBatcher, ModelSource, Outcome
from faceedit_bench.api.images import decode_rgb
from faceedit_bench_diffusers import loading
from faceedit_bench_diffusers.pipelines import PipelineSpec, images_of, pipeline_class

log = logging.getLogger(__name__)

#: Image sides are rounded to this: VAE downsampling (8) times the 2x2 latent packing.
SIDE_MULTIPLE = 16
#: Qwen-VL processors the loader can rebuild without torchvision.
_QWEN_PROCESSORS = ("Qwen2VLProcessor", "Qwen2_5_VLProcessor")


@dataclass(frozen=True)
class _Item:
    request: EditRequest
    image: Image.Image
    seed: int
    extras: tuple[Image.Image, ...] = ()  # the step's further input images, in the request's order


def fit(image: Image.Image, resolution: int | None) -> Image.Image:
    """Resize to about ``resolution``² pixels keeping the aspect ratio (``None``: keep the size),
    both sides a multiple of :data:`SIDE_MULTIPLE`."""
    width, height = image.size
    scale = resolution / math.sqrt(width * height) if resolution else 1.0
    size = tuple(max(SIDE_MULTIPLE, round(side * scale / SIDE_MULTIPLE) * SIDE_MULTIPLE) for side in (width, height))
    return image if size == image.size else image.resize(size, Image.Resampling.LANCZOS)


def _png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.convert("RGB").save(buffer, format="PNG")
    return buffer.getvalue()


class DiffusersEditor:
    """One diffusers image-editing pipeline. Construction only finds the model (and fails with
    how to get it); the weights load on the first batch."""

    def __init__(self, spec: PipelineSpec, *, model: str, settings: Mapping[str, Any], revision: str | None = None,
                 pipeline: str | None = None, resolution: int | None = 1024, seed: int | None = None,
                 dtype: str = "bfloat16", device: str = "auto", cpu_offload: bool = False, batch_size: int = 1,
                 batch_wait_s: float = 0.05, timeout_s: float = 3600.0, allow_download: bool = False,
                 extra_args: Mapping[str, Any] | None = None) -> None:
        _check(settings, resolution, seed, batch_size, timeout_s)
        ModelSource.check_dtype(dtype)
        self.spec = spec
        self.settings = dict(settings)
        self.resolution, self.seed, self.dtype = resolution, seed, dtype
        self.device, self.cpu_offload = device, cpu_offload
        self.extra_args = dict(extra_args or {})
        self.source = ModelSource.locate(model, index_file="model_index.json", revision=revision,
                                         allow_download=allow_download)
        self.pipeline_class = pipeline_class(spec, pipeline, self.source.index)
        self._check_class_available()
        self.batch_size = batch_size if self.pipeline_class in spec.batched else 1
        # The engine gives a request with more images than this the outcome ``unsupported``.
        self.max_input_images = spec.max_input_images(self.pipeline_class)
        # One batch in flight: the timeout then covers one batch (the first includes loading).
        self.limits = CallLimits(provider_key=f"local:{self.source.name}", max_concurrency=self.batch_size,
                                 requests_per_minute=None, max_attempts=1, timeout_s=timeout_s)
        self.prices: dict[str, float] = {}
        self._batcher: MicroBatcher[_Item, EditResult] = MicroBatcher(
            self._edit_batch, max_batch=self.batch_size, wait_s=batch_wait_s,
            group=lambda item: (item.image.size, len(item.extras)))
        self._pipe: Any = None
        self._load_error: Exception | None = None
        self._lock = threading.Lock()

    def _check_class_available(self) -> None:
        import diffusers

        if not hasattr(diffusers, self.pipeline_class):
            hint = self.spec.install_hint or "upgrade diffusers"
            raise ConfigError(
                f"diffusers {diffusers.__version__} has no {self.pipeline_class} (needed by editor "
                f"{self.spec.editor}): {hint}")

    # -- identity ------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        # Not hashed: device, cpu_offload, batch_size, batch_wait_s, timeout_s. Offload does not
        # change the arithmetic. The device's kernels and the batch's shape can change results
        # in the last bits (GPU matmul reductions), so images are equal only up to numerical noise
        # across devices and batch sizes; the seeds' papers do not treat them as parameters either.
        return {
            "name": self.spec.editor,
            **self.source.describe(),
            "pipeline": self.pipeline_class,
            "dtype": self.dtype,
            **self.settings,
            "resolution": self.resolution,
            "seed": "per_step" if self.seed is None else self.seed,
            "noise": "torch CPU generator per image",
            "extra_args": self.extra_args,
            "libraries": {name: ModelSource.package_version(name) for name in ("diffusers", "transformers", "torch")},
            "version": f"{self.source.name}@{self.source.revision or 'config-' + self.source.config_hash}",
        }

    # -- calls -----------------------------------------------------------------------------

    async def aedit(self, request: EditRequest) -> EditResult:
        return self._unsupported(request) or await self._batcher.submit(self._prepare(request))

    def edit(self, request: EditRequest) -> EditResult:
        """The same edit without the event loop (a batch of one)."""
        return self._unsupported(request) or self._edit_batch([self._prepare(request)])[0]

    def _unsupported(self, request: EditRequest) -> EditResult | None:
        """The engine never sends more images than ``max_input_images``; a direct caller may."""
        n = 1 + len(request.extra_images)
        if n <= self.max_input_images:
            return None
        return EditResult(Outcome.UNSUPPORTED,
                          reason=f"{self.pipeline_class} takes at most {self.max_input_images} input image(s), got {n}")

    def _prepare(self, request: EditRequest) -> _Item:
        image = fit(Image.fromarray(decode_rgb(request.image, label="input image")), self.resolution)
        extras = tuple(fit(Image.fromarray(decode_rgb(data, label=f"input image {i + 2}")), self.resolution)
                       for i, data in enumerate(request.extra_images))
        return _Item(request, image, request.seed if self.seed is None else self.seed, extras)

    def _edit_batch(self, items: Sequence[_Item]) -> list[EditResult]:
        try:
            pipe = self._loaded()
            import torch

            started = time.perf_counter()  # the call only: loading is not throughput
            cuda = torch.cuda.is_available() and str(self.device) != "cpu"
            if cuda:
                torch.cuda.reset_peak_memory_stats()
            with torch.inference_mode():
                images = images_of(pipe(**self._arguments(items)))
        except Exception as exc:  # recorded per request as ``failed``; the run goes on
            if len(items) > 1 and MicroBatcher.is_out_of_memory(exc):
                return self._split(items)
            return [EditResult(Outcome.FAILED, reason=_reason(exc))] * len(items)
        if len(images) != len(items):
            reason = f"{self.pipeline_class} returned {len(images)} images for {len(items)} requests"
            return [EditResult(Outcome.NO_IMAGE, reason=reason)] * len(items)
        usage: dict[str, Any] = {"batch_size": len(items), "seconds": round(time.perf_counter() - started, 4),
                                 "images_out": 1}
        if cuda:
            usage["peak_gpu_mem_bytes"] = int(torch.cuda.max_memory_allocated())
        return [EditResult.ok(_png(image), **usage) for image in images]

    def _split(self, items: Sequence[_Item]) -> list[EditResult]:
        """A batch too big for the device: its halves, each on its own (every image comes from
        its own generator, so the images are the same)."""
        import torch

        half = len(items) // 2
        log.warning("%s: a batch of %d ran out of device memory; running it as %d + %d "
                    "(lower editor.params.batch_size to skip this retry)", self.pipeline_class, len(items), half,
                    len(items) - half)
        torch.cuda.empty_cache()
        return self._edit_batch(items[:half]) + self._edit_batch(items[half:])

    def _arguments(self, items: Sequence[_Item]) -> dict[str, Any]:
        import torch

        n = len(items)
        width, height = items[0].image.size
        generators = [torch.Generator("cpu").manual_seed(item.seed) for item in items]
        args = self.spec.arguments(self.settings, n, height, width)
        if n == 1:  # plain values: the form every pipeline accepts, batched or not
            # Several inputs: one list, the image being edited first (the output takes its size: height/width).
            image = [items[0].image, *items[0].extras] if items[0].extras else items[0].image
            args.update(image=image, prompt=items[0].request.instruction, generator=generators[0])
        else:
            args.update(image=[i.image for i in items], prompt=[i.request.instruction for i in items],
                        generator=generators)
        return {**args, **self.extra_args}

    def _loaded(self) -> Any:
        with self._lock:
            if self._pipe is None and self._load_error is None:
                try:
                    self._pipe = self._load()
                except Exception as exc:  # remembered: every later batch fails the same way, at once
                    self._load_error = exc
            if self._load_error is not None:
                raise self._load_error
            return self._pipe

    def _load(self) -> Any:
        import diffusers
        import torch

        loading.check_components(self.source)
        components: dict[str, Any] = {}
        processor = self.source.index.get("processor")
        if isinstance(processor, list) and processor[1] in _QWEN_PROCESSORS and not loading.has_torchvision():
            components["processor"] = loading.load_image_only_processor(self.source.path / "processor",
                                                                        processor[1])
        components[loading.dtype_keyword(diffusers.__version__)] = ModelSource.torch_dtype(torch, self.dtype)
        pipe = getattr(diffusers, self.pipeline_class).from_pretrained(self.source.path, local_files_only=True,
                                                                       **components)
        loading.check_tokenizers(pipe, self.source)
        device = loading.resolve_device(self.device)
        if self.cpu_offload:
            pipe.enable_model_cpu_offload(device=device)
        else:
            pipe.to(device)
        pipe.set_progress_bar_config(disable=True)
        return pipe


def _reason(exc: Exception) -> str:
    text = f"{type(exc).__name__}: {exc}"
    if MicroBatcher.is_out_of_memory(exc):
        return (f"CUDA out of memory ({text[:300]}): lower editor.params.batch_size or resolution, or set "
                "editor.params.cpu_offload=true")
    return text[:2000]


def _check(settings: Mapping[str, Any], resolution: int | None, seed: int | None, batch_size: int,
           timeout_s: float) -> None:
    if int(settings.get("steps", 1)) < 1:
        raise ValueError("steps must be at least 1")
    if resolution is not None and (not isinstance(resolution, int) or resolution < SIDE_MULTIPLE):
        raise ValueError(f"resolution must be an integer of at least {SIDE_MULTIPLE} (or null: the input's size)")
    if seed is not None and (not isinstance(seed, int) or not 0 <= seed < 2**63):
        raise ValueError("seed must be null (the per-step seed) or a non-negative integer (one seed for every call)")
    if not isinstance(batch_size, int) or batch_size < 1:
        raise ValueError("batch_size must be an integer of at least 1")
    if timeout_s <= 0:
        raise ValueError("timeout_s must be positive")
