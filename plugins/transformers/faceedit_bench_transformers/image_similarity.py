"""Image metrics from image models, run with transformers: CLIP-T (instruction-image alignment), CLIP-I and DINO
image similarity (ImagenHub's measures).

A metric finds its model on construction (a local directory or the Hugging Face cache, never a surprise download:
``faceedit_bench.api.ModelSource.locate``) and loads the weights on its first batch, once per worker process. A batch
embeds every distinct image of its steps once (I_{k-1} of one step is I_k of the step before it).

Similarities are cosines between L2-normalised embeddings in [-1, 1]; CLIP-T is the cosine between the
instruction's text embedding and I_k's image embedding (not CLIPScore's 2.5 x max(cos, 0)).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from faceedit_bench.api import LazyModels, ModelSource
from faceedit_bench.api.images import ImageMetric, StepImages

COSINE = (-1.0, 1.0)


def _similarity_values(prefix: str, label: str, model: str) -> tuple[ImageMetric.Value, ...]:
    return (
        ImageMetric.Value(f"{prefix}_i", True, "cosine", f"{model} image similarity of I_k-1 and I_k, mean over the steps",
                   label=f"{label} vs I_k-1", bounds=COSINE),
        ImageMetric.Value(f"{prefix}_i_src", True, "cosine", f"{model} image similarity of I_0 and I_K after the last step",
                   label=f"{label} vs I_0", bounds=COSINE, aggregate="last"),
    )


class _EmbeddingMetric(LazyModels, ImageMetric):
    """Shared by CLIP and DINO: model location, lazy loading, batched image embeddings."""

    kind = ""

    def __init__(self, model: str, revision: str | None = None, device: str = "cpu",
                 allow_download: bool = False) -> None:
        super().__init__()
        self.source = ModelSource.locate(model, index_file="config.json", revision=revision,
                                         allow_download=allow_download)
        self.device = device

    def describe(self) -> Mapping[str, Any]:
        # Not hashed: the device (kernels may move the last bits of a cosine; reproducible per machine).
        return {"version": "1", **self.source.describe(),
                "libraries": {name: ModelSource.package_version(name) for name in ("transformers", "torch")}}

    def measure_batch(self, steps: Sequence[StepImages]) -> Sequence[Mapping[str, float | None]]:
        images: dict[int, np.ndarray] = {}
        for step in steps:
            for image in (step.source, step.previous, step.current):
                images.setdefault(id(image), image)
        vectors = dict(zip(images, self._embed_images(list(images.values()))))
        out = []
        for step in steps:
            current = vectors[id(step.current)]
            out.append({f"{self.kind}_i": float(vectors[id(step.previous)] @ current),
                        f"{self.kind}_i_src": float(vectors[id(step.source)] @ current)})
        if self.kind == "clip":
            texts = self._embed_texts([s.instruction for s in steps])
            for answer, step, text in zip(out, steps, texts):
                answer["clip_t"] = float(text @ vectors[id(step.current)])
        return out

    def measure(self, step: StepImages) -> Mapping[str, float | None]:
        return self.measure_batch([step])[0]

    def _embed_images(self, images: list[np.ndarray]) -> list[np.ndarray]:
        import torch

        model, processor, _ = self._load()
        pixels = processor(images=[np.asarray(i) for i in images], return_tensors="pt")["pixel_values"]
        with torch.inference_mode():
            found = self._image_features(model, pixels.to(self.device))
        return list(_normalised(found))

    def _embed_texts(self, texts: list[str]) -> list[np.ndarray]:
        import torch

        model, _, tokenizer = self._load()
        tokens = tokenizer(texts, padding=True, truncation=True, return_tensors="pt").to(self.device)
        with torch.inference_mode():
            found = model.get_text_features(**tokens)
        return list(_normalised(getattr(found, "pooler_output", found)))

    def _load(self) -> tuple[Any, Any, Any]:
        """The model, image processor and tokenizer, loaded once per process (the first batch's)."""
        with self._lock:
            if self._models is None:
                self._models = self._load_models()
            return self._models

    def _load_models(self) -> tuple[Any, Any, Any]:
        raise NotImplementedError

    def _image_features(self, model: Any, pixels: Any) -> Any:
        raise NotImplementedError


def _normalised(tensor: Any) -> np.ndarray:
    vectors = tensor.float().cpu().numpy().astype(np.float64)
    return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)


class ClipSimilarity(_EmbeddingMetric):
    """CLIP-T (the instruction against I_k), CLIP-I (I_{k-1} against I_k; I_0 against I_K).

    :param model: a local directory or a Hugging Face repository id in the cache (e.g. openai/clip-vit-large-patch14).
    :param revision: the repository commit; :param allow_download: fetch a missing model (off: never a surprise).
    :param device: ``cpu`` or ``cuda``.
    """

    name = "clip"
    kind = "clip"
    values = (ImageMetric.Value("clip_t", True, "cosine", "CLIP cosine between the instruction and I_k, mean over the steps",
                         label="CLIP-T", bounds=COSINE),
              *_similarity_values("clip", "CLIP-I", "CLIP"))

    def __init__(self, model: str = "openai/clip-vit-base-patch32", revision: str | None = None,
                 device: str = "cpu", allow_download: bool = False) -> None:
        super().__init__(model, revision, device, allow_download)

    def _load_models(self) -> tuple[Any, Any, Any]:
        from transformers import AutoImageProcessor, AutoTokenizer, CLIPModel

        path = self.source.path
        tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
        if len(tokenizer) < 3:  # transformers' silent offline fallback (NOTES): not a vocabulary
            raise ValueError(f"the tokenizer in {path} loaded with {len(tokenizer)} tokens: files are missing")
        processor = AutoImageProcessor.from_pretrained(path, local_files_only=True, backend="pil")
        model = CLIPModel.from_pretrained(path, local_files_only=True).to(self.device).eval()
        return model, processor, tokenizer

    def _image_features(self, model: Any, pixels: Any) -> Any:
        found = model.get_image_features(pixel_values=pixels)
        return getattr(found, "pooler_output", found)  # transformers 5: an output object


class DinoSimilarity(_EmbeddingMetric):
    """DINO image similarity (the CLS embedding): I_{k-1} against I_k, I_0 against I_K.

    :param model: a local directory or a repository id in the cache (e.g. facebook/dinov2-base).
    """

    name = "dino"
    kind = "dino"
    values = _similarity_values("dino", "DINO", "DINO")

    def __init__(self, model: str = "facebook/dinov2-small", revision: str | None = None,
                 device: str = "cpu", allow_download: bool = False) -> None:
        super().__init__(model, revision, device, allow_download)

    def _load_models(self) -> tuple[Any, Any, Any]:
        from transformers import AutoImageProcessor, AutoModel

        path = self.source.path
        processor = AutoImageProcessor.from_pretrained(path, local_files_only=True, backend="pil")
        return AutoModel.from_pretrained(path, local_files_only=True).to(self.device).eval(), processor, None

    def _image_features(self, model: Any, pixels: Any) -> Any:
        return model(pixel_values=pixels).pooler_output
